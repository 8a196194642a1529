package rightsizing

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/pricing"
)

// Tracker holds the windows of many services, by project and service id.
// Safe for concurrent use.
type Tracker struct {
	cfg Config
	now func() time.Time

	mu       sync.Mutex
	projects map[string]*project
}

// project is one project's windows, by service id.
type project struct {
	windows map[string]*Window
	// listed is the newest complete list of the project's services recorded
	// (Listed); missed, the services with a window that it lacked.
	listed time.Time
	missed map[string]struct{}
	// changes logs the services whose windows changed, the last of changed
	// in all (changes.go).
	changes []string
	changed uint64
}

// NewTracker returns an empty Tracker; now is time.Now or a test's clock.
func NewTracker(cfg Config, now func() time.Time) *Tracker {
	return &Tracker{cfg: cfg, now: now, projects: map[string]*project{}}
}

// RemoveProject forgets the project's windows.
func (t *Tracker) RemoveProject(projectID string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.projects, projectID)
}

// Listed records a complete list of projectID's services (their ids), read
// at at: the window of a service that two such lists in a row lack (a
// deleted service) is dropped. A list no newer than the last one recorded
// changes nothing. Give it only a whole list: one that failed or stopped
// part way would drop the windows of services that still exist.
func (t *Tracker) Listed(projectID string, at time.Time, ids iter.Seq[string]) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.projects[projectID]
	if p == nil || !at.After(p.listed) {
		return
	}
	p.listed = at
	present := 0
	for id := range ids {
		if p.windows[id] != nil {
			present++
		}
	}
	if present == len(p.windows) {
		p.missed = nil // the usual case: no window to look at
		return
	}
	listed := make(map[string]struct{}, present)
	for id := range ids {
		if p.windows[id] != nil {
			listed[id] = struct{}{}
		}
	}
	var missed map[string]struct{}
	for id := range p.windows {
		if _, ok := listed[id]; ok {
			continue
		}
		if _, again := p.missed[id]; again {
			delete(p.windows, id)
			p.logChange(id)
			continue
		}
		if missed == nil {
			missed = map[string]struct{}{}
		}
		missed[id] = struct{}{}
	}
	p.missed = missed
	if len(p.windows) == 0 {
		delete(t.projects, projectID)
	}
}

// Len returns the number of windows kept.
func (t *Tracker) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, p := range t.projects {
		n += len(p.windows)
	}
	return n
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
	ids := slices.Sorted(maps.Keys(t.projects))
	out = binary.AppendUvarint(out, uint64(len(ids)))
	for _, id := range ids {
		out = appendString(out, id)
		windows := t.projects[id].windows
		services := slices.Sorted(maps.Keys(windows))
		out = binary.AppendUvarint(out, uint64(len(services)))
		for _, s := range services {
			out = appendString(out, s)
			out, _ = windows[s].AppendBinary(out)
		}
	}
	return out
}

func appendString(out []byte, s string) []byte {
	out = binary.AppendUvarint(out, uint64(len(s)))
	return append(out, s...)
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
	projects := map[string]*project{}
	for range r.uvarint() {
		id := string(r.bytes(int(r.uvarint())))
		n := r.uvarint()
		if r.err != nil {
			return r.err
		}
		p := &project{windows: make(map[string]*Window, min(n, uint64(len(r.b)/Size)))}
		for range n {
			service := string(r.bytes(int(r.uvarint())))
			w := &Window{}
			if err := w.UnmarshalBinary(r.bytes(Size)); err != nil && r.err == nil {
				r.err = err
			}
			if r.err != nil {
				return r.err
			}
			p.windows[service] = w
		}
		if len(p.windows) > 0 {
			projects[id] = p
		}
	}
	if r.err == nil && len(r.b) > 0 {
		r.err = fmt.Errorf("rightsizing: %d bytes after the last window", len(r.b))
	}
	if r.err != nil {
		return r.err
	}
	t.mu.Lock()
	t.projects = projects
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

// Recommend sizes a service now from its window; false for one never added.
func (t *Tracker) Recommend(projectID, serviceID string, current pricing.Size) (Recommendation, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := t.window(projectID, serviceID)
	if w == nil {
		return Recommendation{}, false
	}
	return t.cfg.Recommend(w, t.now(), current), true
}

// window is a service's window, nil for none; t.mu is held.
func (t *Tracker) window(projectID, serviceID string) *Window {
	if p := t.projects[projectID]; p != nil {
		return p.windows[serviceID]
	}
	return nil
}

// AddSeries records what one usage read of a service's series returned:
// every bucket with a value of the primary's CPU or memory use (role
// primary, whatever its ordinal: a replaced node has a new one), in time
// order; other series and nodes are ignored (HA replicas follow the
// primary). A bucket already added counts once.
func (t *Tracker) AddSeries(projectID, serviceID, suffix string, series []apiclient.Series) {
	cpu := suffix == apiclient.SeriesCPUUsage
	if !cpu && suffix != apiclient.SeriesMemoryUsage {
		return
	}
	slotLen := t.cfg.Window / Slots
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range series {
		if s.Labels["role"] != "primary" {
			continue
		}
		proj, w := t.add(projectID, serviceID)
		// A window changes only with a bucket taken, which moves its last.
		lastCPU, lastMemory := w.lastCPU, w.lastMemory
		for _, p := range oldestFirst(s.Data) {
			switch {
			case !p.Value.Valid || p.Time.IsZero():
			case cpu:
				w.AddCPU(p.Time.Time, slotLen, p.Value.Value)
			default:
				w.AddMemory(p.Time.Time, slotLen, p.Value.Value)
			}
		}
		if w.lastCPU != lastCPU || w.lastMemory != lastMemory {
			proj.logChange(serviceID)
		}
	}
}

// oldestFirst returns points in time order: a window takes a bucket only
// after the newest it holds, and the API promises no order.
func oldestFirst(points []apiclient.SeriesPoint) []apiclient.SeriesPoint {
	byTime := func(a, b apiclient.SeriesPoint) int { return a.Time.Compare(b.Time.Time) }
	if slices.IsSortedFunc(points, byTime) {
		return points
	}
	return slices.SortedStableFunc(slices.Values(points), byTime)
}

// add returns a service's window, new if it had none, and its project;
// t.mu is held.
func (t *Tracker) add(projectID, serviceID string) (*project, *Window) {
	p := t.projects[projectID]
	if p == nil {
		p = &project{windows: map[string]*Window{}}
		t.projects[projectID] = p
	}
	w := p.windows[serviceID]
	if w == nil {
		w = &Window{}
		p.windows[serviceID] = w
		p.logChange(serviceID)
	}
	return p, w
}
