package rightsizing

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/pricing"
)

// Tracker holds the windows of many services, keyed by the caller (a
// project and service id). Safe for concurrent use.
type Tracker struct {
	cfg Config
	now func() time.Time

	mu      sync.Mutex
	windows map[string]*Window
}

// NewTracker returns an empty Tracker; now is time.Now or a test's clock.
func NewTracker(cfg Config, now func() time.Time) *Tracker {
	return &Tracker{cfg: cfg, now: now, windows: map[string]*Window{}}
}

// Retain forgets the keys keep refuses (deleted services).
func (t *Tracker) Retain(keep func(key string) bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	maps.DeleteFunc(t.windows, func(k string, _ *Window) bool { return !keep(k) })
}

// Len returns the number of windows kept.
func (t *Tracker) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.windows)
}

// stateVersion changes with the window's layout; another version's state is
// not read (the windows fill again). 2: 32-bit slot numbers and minutes, a
// slot's CPU in the 13 buckets up to its highest.
const stateVersion = 2

// maxState bounds the inflated state read back (some 900,000 services): a
// corrupt or hostile file cannot inflate without end.
const maxState = 256 << 20

// MarshalBinary writes every window, keys sorted, deflated (the histograms
// are mostly zeros), for the state file.
func (t *Tracker) MarshalBinary() ([]byte, error) {
	var buf bytes.Buffer
	zw, _ := flate.NewWriter(&buf, flate.BestSpeed) // a valid level: no error
	if _, err := zw.Write(t.marshal()); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (t *Tracker) marshal() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := binary.AppendUvarint(nil, stateVersion)
	out = binary.AppendUvarint(out, uint64(t.cfg.Window))
	keys := slices.Sorted(maps.Keys(t.windows))
	out = binary.AppendUvarint(out, uint64(len(keys)))
	for _, k := range keys {
		out = binary.AppendUvarint(out, uint64(len(k)))
		out = append(out, k...)
		b, _ := t.windows[k].MarshalBinary()
		out = append(out, b...)
	}
	return out
}

// ErrOtherWindow is a state saved with another --rightsizing.window (its slots
// are another length) or another version: it is not read.
var ErrOtherWindow = errors.New("rightsizing: the state was saved with another --rightsizing.window or version")

// UnmarshalBinary replaces the windows with what MarshalBinary wrote.
func (t *Tracker) UnmarshalBinary(deflated []byte) error {
	b, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(deflated)), maxState+1))
	if err != nil {
		return fmt.Errorf("rightsizing: the saved state does not inflate: %w", err)
	}
	if len(b) > maxState {
		return fmt.Errorf("rightsizing: the saved state inflates beyond %d MiB", maxState>>20)
	}
	r := reader{b: b}
	if v := r.uvarint(); v != stateVersion || time.Duration(r.uvarint()) != t.cfg.Window {
		if r.err != nil {
			return r.err
		}
		return ErrOtherWindow
	}
	n := r.uvarint()
	windows := make(map[string]*Window, min(n, uint64(len(b)/Size)))
	for range n {
		key := string(r.bytes(int(r.uvarint())))
		w := &Window{}
		if err := w.UnmarshalBinary(r.bytes(Size)); err != nil && r.err == nil {
			r.err = err
		}
		if r.err != nil {
			return r.err
		}
		windows[key] = w
	}
	if r.err == nil && len(r.b) > 0 {
		r.err = fmt.Errorf("rightsizing: %d bytes after the last window", len(r.b))
	}
	if r.err != nil {
		return r.err
	}
	t.mu.Lock()
	t.windows = windows
	t.mu.Unlock()
	return nil
}

type reader struct {
	b   []byte
	err error
}

var errTruncated = errors.New("rightsizing: the saved state is truncated")

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errTruncated
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b) {
		r.err = errTruncated
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

// Recommend sizes key now from its window; false for a key never added.
func (t *Tracker) Recommend(key string, current pricing.Size) (Recommendation, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := t.windows[key]
	if w == nil {
		return Recommendation{}, false
	}
	return t.cfg.Recommend(w, t.now(), current), true
}

// AddSeries records what one usage read of key's series returned: every
// bucket with a value of the primary's (role primary, ordinal 0) CPU or
// memory use; other series and nodes are ignored (HA replicas follow the
// primary). A bucket already added counts once.
func (t *Tracker) AddSeries(key, suffix string, series []apiclient.Series) {
	cpu := suffix == apiclient.SeriesCPUUsage
	if !cpu && suffix != apiclient.SeriesMemoryUsage {
		return
	}
	slotLen := t.cfg.Window / Slots
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range series {
		if s.Labels["role"] != "primary" || s.Labels["ordinal"] != "0" {
			continue
		}
		w := t.windows[key]
		if w == nil {
			w = &Window{}
			t.windows[key] = w
		}
		for _, p := range s.Data {
			switch {
			case !p.Value.Valid || p.Time.IsZero():
			case cpu:
				w.AddCPU(p.Time.Time, slotLen, p.Value.Value)
			default:
				w.AddMemory(p.Time.Time, slotLen, p.Value.Value)
			}
		}
	}
}
