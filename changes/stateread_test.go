package changes

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// writeLargeState writes a valid state file of projects × perProject
// services, each with a replica set, and returns its size.
func writeLargeState(t *testing.T, path string, projects, perProject int) int64 {
	t.Helper()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := savedState{Version: stateVersion, Shard: "0", Saved: at, Cursor: 7, Projects: map[string]*savedProject{}}
	for p := range projects {
		d := newDiffer(fmt.Sprintf("project-%d", p))
		d.services.baselined, d.services.last = true, at
		d.replicaSets.baselined, d.replicaSets.last = true, at
		for s := range perProject {
			id := fmt.Sprintf("svc-%d-%d", p, s)
			d.services.add(entry[svcFields, idKey]{k: idKey(id), read: nanos(at), f: svcFields{Name: id, Status: "running", Env: "production", VPC: "vpc-1", CPU: 4000, Mem: 16, Replicas: 2}})
			d.replicaSets.add(entry[rsFields, key]{k: key{parent: id, id: "rs-" + id}, read: nanos(at), f: rsFields{Name: "rs-" + id}})
		}
		st.Projects[d.project] = d.save()
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return int64(len(b))
}

// peakReader samples the live heap (after a collection) every step bytes
// read: the decoder's reads are where it holds the most.
type peakReader struct {
	r          io.Reader
	read, next int64
	step       int64
	peak       uint64
}

func (p *peakReader) sample() { p.peak = max(p.peak, liveHeap()) }

func (p *peakReader) Read(b []byte) (int, error) {
	if p.read >= p.next {
		p.sample()
		p.next += p.step
	}
	n, err := p.r.Read(b)
	p.read += int64(n)
	return n, err
}

// liveHeap is the heap in use after two collections (one may leave what
// the last cycle allocated).
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// writeRepeatedState writes a state file of n service entries that name
// the same ten services again and again (the last read wins): what is
// restored is small, so what reading the file holds shows.
func writeRepeatedState(t *testing.T, path string, n int) int64 {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	_, _ = io.WriteString(w, `{"version":1,"shard":"0","cursor":7,"projects":{"p":{"services":{"baselined":true,"entries":[`)
	for i := range n {
		if i > 0 {
			_ = w.WriteByte(',')
		}
		_, _ = fmt.Fprintf(w, `{"id":"svc-%d","name":"orders-%d","read":"2026-01-02T03:04:05Z","fields":{"Name":"orders-%d","Status":"running","Env":"production","VPC":"vpc-1","CPU":4000,"Mem":17179869184,"Replicas":2}}`, i%10, i, i)
	}
	_, _ = io.WriteString(w, `]}}}}`)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	info, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	return info.Size()
}

// TestLoadStateStreamed: reading a large state file holds a fraction of
// its size beyond what is restored: one entry at a time, never the file
// or a tree of it. The live heap is sampled at each of the decoder's
// reads, where a read of the whole file would hold all that came before.
func TestLoadStateStreamed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "changes.state")
	size := writeRepeatedState(t, path, 40_000)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	before := liveHeap()
	pr := &peakReader{r: f, step: 256 << 10}
	st, err := decodeState(bufio.NewReaderSize(pr, 32<<10))
	if err != nil {
		t.Fatal(err)
	}
	pr.sample()
	if d := st.differs["p"]; d == nil || len(d.services.ents) != 10 || d.services.nameOf(&d.services.ents[d.services.find("svc-3")]) != "orders-39993" || st.Cursor != 7 {
		t.Fatalf("restored %+v; want project p's ten services, each at its last entry, cursor 7", st)
	}
	peak := int64(pr.peak) - int64(before)
	t.Logf("file %d B, peak live heap while reading %d B", size, peak)
	if peak > size/8 {
		t.Errorf("reading a %d B state file held %d B; want at most an eighth of it", size, peak)
	}
}

// TestLoadStateRestoresAll: a valid state file of many projects and
// objects is restored whole.
func TestLoadStateRestoresAll(t *testing.T) {
	path := filepath.Join(t.TempDir(), "changes.state")
	writeLargeState(t, path, 3, 500)
	st, _, err := loadState(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range st.differs {
		n += len(d.services.ents) + len(d.replicaSets.ents)
		if !d.services.baselined || !d.replicaSets.baselined {
			t.Errorf("project %s: not baselined", d.project)
		}
	}
	if len(st.differs) != 3 || n != 3*500*2 || st.Cursor != 7 || st.Shard != "0" {
		t.Errorf("restored %d projects, %d entries, cursor %d, shard %q; want 3, %d, 7, \"0\"", len(st.differs), n, st.Cursor, st.Shard, 3*500*2)
	}
}

// TestLoadStateValueBound: one value over maxStateValue is refused
// without being held whole.
func TestLoadStateValueBound(t *testing.T) {
	name := strings.Repeat("x", maxStateValue+64<<10) // past what the decoder read ahead
	in := `{"version":1,"projects":{"p":{"services":{"entries":[{"id":"s","name":"` + name + `"}]}}}}`
	if _, err := decodeState(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("decodeState: %v; want the value's bound", err)
	}
}
