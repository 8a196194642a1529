package changes

import (
	"bufio"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// A changes file whose writes stall (a pipe nobody reads, as a FIFO or a
// hung NFS mount would) must not hold the publishing of snapshots: the
// events wait in a bounded queue, what does not fit is counted, and Close
// writes the rest once the file takes it.
func TestStalledFileNeverHoldsThePublish(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	// The file at the path stands for the pipe: writes go to the pipe.
	path := filepath.Join(t.TempDir(), "changes.ndjson")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	tl := New(Options{})
	const queue, n = 16, 2000 // 2000 events are far more than a pipe's 64 KiB
	tl.file = startFileWriter(&eventFile{path: path, max: 1 << 40, f: w, info: info}, queue, tl.metrics.dropped, tl.logger)
	published := make(chan struct{})
	go func() {
		defer close(published)
		tl.SetProjects([]string{"a"})
		for i := range n {
			tl.SetProjects([]string{"a", "b"}[:2-i%2]) // b added, removed, added...
		}
	}()
	select {
	case <-published:
	case <-time.After(30 * time.Second):
		t.Fatal("publishing waited for the changes file")
	}
	if got := len(tl.Latest("b", n)); got != n {
		t.Errorf("the feed holds %d events, want %d", got, n)
	}
	dropped := int(tl.metrics.drops[reasonFileQueue])
	if dropped == 0 {
		t.Errorf("no %s drop counted with a stalled file", reasonFileQueue)
	}
	lines := make(chan int)
	go func() {
		c := 0
		for sc := bufio.NewScanner(r); sc.Scan(); {
			c++
		}
		lines <- c
	}()
	tl.Close(t.Context())
	if written := <-lines; written+dropped != n {
		t.Errorf("%d written and %d dropped of %d events", written, dropped, n)
	}
}

// Saving the state file on a stalled disk must not hold the publishing of
// snapshots or the feed: the file is written outside the timeline's lock.
func TestStalledStateSaveNeverHoldsThePublish(t *testing.T) {
	path := filepath.Join(t.TempDir(), "changes.ndjson")
	tl := New(Options{})
	if err := tl.openFile(path, 1<<20, ""); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	tl.writeState = func(path string, b []byte) error {
		once.Do(func() { close(entered) })
		<-release
		return writeStateFile(path, b)
	}
	tl.SetProjects([]string{"a"})
	tl.SetProjects([]string{"a", "b"}) // dirty
	saved := make(chan struct{})
	go func() { defer close(saved); tl.saveIfDirty() }()
	<-entered
	published := make(chan struct{})
	go func() { defer close(published); tl.SetProjects([]string{"a"}) }()
	select {
	case <-published:
	case <-time.After(30 * time.Second):
		t.Fatal("publishing waited for the state file")
	}
	if got := len(tl.Latest("b", 10)); got != 2 {
		t.Errorf("the feed holds %d events of b, want 2", got)
	}
	close(release)
	<-saved
	tl.Close(t.Context())
	st, _, err := loadState(path + ".state")
	if err != nil || st == nil || st.Cursor != 2 {
		t.Errorf("state %+v, %v: want the last event's cursor 2", st, err)
	}
}
