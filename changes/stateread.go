package changes

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/safefile"
)

// loadedState is the state file as restored: the differs built entry by
// entry while it is read, never a tree of the file.
type loadedState struct {
	Shard    string
	Saved    time.Time
	Cursor   uint64
	differs  map[string]*differ
	restarts []savedRestart
}

// maxStateValue bounds one value the decoder holds whole (an object's
// entry, a restart, the key): an entry takes some 200 bytes.
const maxStateValue = 1 << 20

var errStateValueTooLarge = fmt.Errorf("a value larger than %d MiB", maxStateValue>>20)

// loadState reads the state file; a missing file is no state. An error
// other than a failed open is the file's: the caller moves it aside. Its
// size is checked before a byte is read; it is then decoded one entry at
// a time, each bounded by maxStateValue.
func loadState(path string) (st *loadedState, opened bool, err error) {
	f, info, err := safefile.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, errors.Is(err, safefile.ErrNotRegular), err
	}
	defer func() { _ = f.Close() }()
	if info.Size() > maxStateFile {
		return nil, true, fmt.Errorf("%s: %d bytes, larger than the bound of %d MiB", path, info.Size(), maxStateFile>>20)
	}
	st, err = decodeState(bufio.NewReaderSize(io.LimitReader(f, maxStateFile+1), 32<<10))
	if err != nil {
		return nil, true, fmt.Errorf("%s: %w", path, err)
	}
	return st, true, nil
}

// stateDecoder is a json.Decoder over a reader that fails a read past the
// bound of the value being decoded.
type stateDecoder struct {
	*json.Decoder
	r *safefile.ValueReader
}

// value decodes one value, held whole, within maxStateValue.
func (d stateDecoder) value(v any) error {
	d.r.Bound(maxStateValue)
	err := d.Decode(v)
	d.r.Unbound()
	return err
}

func decodeState(r io.Reader) (*loadedState, error) {
	vb := safefile.NewValueReader(r, errStateValueTooLarge)
	d := stateDecoder{Decoder: json.NewDecoder(vb), r: vb}
	st := &loadedState{differs: map[string]*differ{}}
	version := -1
	err := d.object(func(k string) error {
		switch k {
		case "version":
			return d.value(&version)
		case "shard":
			return d.value(&st.Shard)
		case "saved":
			return d.value(&st.Saved)
		case "cursor":
			return d.value(&st.Cursor)
		case "projects":
			return d.object(func(id string) error {
				if st.differs[id] != nil {
					return fmt.Errorf("project %q twice", id)
				}
				st.differs[id] = newDiffer(id)
				return d.project(st.differs[id])
			})
		case "restarts":
			return d.array(func() error {
				var r savedRestart
				err := d.value(&r)
				st.restarts = append(st.restarts, r)
				return err
			})
		}
		return fmt.Errorf("unknown field %q", k)
	})
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the state's end")
	}
	if version != stateVersion {
		return nil, fmt.Errorf("version %d, want %d", version, stateVersion)
	}
	return st, nil
}

func (d stateDecoder) project(df *differ) error {
	return d.object(func(k string) error {
		switch k {
		case "services":
			return decodeList(d, df.services)
		case "replica_sets":
			return decodeList(d, df.replicaSets)
		case "vpcs":
			return decodeList(d, df.vpcs)
		case "peerings":
			return decodeList(d, df.peerings)
		case "api_key":
			var sk *savedKey
			if err := d.value(&sk); err != nil || sk == nil {
				return err
			}
			df.restoreKey(sk)
			return nil
		}
		return fmt.Errorf("project %q: unknown field %q", df.project, k)
	})
}

// decodeList restores a tracker's list, entry by entry.
func decodeList[E any, F comparable, K objKey[K]](d stateDecoder, t *tracker[E, F, K]) error {
	return d.object(func(k string) error {
		switch k {
		case "baselined":
			return d.value(&t.baselined)
		case "last_complete_read":
			return d.value(&t.last)
		case "entries":
			defer t.fit()
			return d.array(func() error {
				var e savedEntry[F]
				if err := d.value(&e); err != nil {
					return err
				}
				t.restore(e)
				return nil
			})
		}
		return fmt.Errorf("unknown field %q in a list", k)
	})
}

// object reads an object (or null), calling field after each key to
// read its value.
func (d stateDecoder) object(field func(k string) error) error {
	tok, err := d.Token()
	if err != nil || tok == nil {
		return err
	}
	if tok != json.Delim('{') {
		return fmt.Errorf("%v where an object was expected", tok)
	}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		if err := field(tok.(string)); err != nil { // a key is always a string
			return err
		}
	}
	_, err = d.Token()
	return err
}

// array reads an array (or null), calling elem before each element.
func (d stateDecoder) array(elem func() error) error {
	tok, err := d.Token()
	if err != nil || tok == nil {
		return err
	}
	if tok != json.Delim('[') {
		return fmt.Errorf("%v where an array was expected", tok)
	}
	for d.More() {
		if err := elem(); err != nil {
			return err
		}
	}
	_, err = d.Token()
	return err
}

// restore sets an entry from the state file, over one of the same key.
func (t *tracker[E, F, K]) restore(e savedEntry[F]) {
	var k K
	k = k.of(e.Parent, e.ID)
	n := t.find(k)
	if n < 0 {
		n = t.add(entry[F, K]{k: k})
	}
	// Saved counts are 0 or 1; from 2 on, the next complete read that
	// lacks the object deletes it.
	en := &t.ents[n]
	*en = entry[F, K]{k: k, f: e.Fields, read: nanos(e.Read), missed: int16(max(math.MinInt16, min(e.Missed, 2)))}
	t.setName(en, e.Name)
}
