package exposition

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/fleettest"
)

// TestGzipViewBuiltInPlace: a build after a change lays the view out in
// the last one's slice when no scrape reads it, and serves the change.
func TestGzipViewBuiltInPlace(t *testing.T) {
	const builds = 8
	var next [builds]*fleet.Snapshot
	for i := range next {
		next[i] = fleettest.Synthetic("p", 2000)
		next[i].Services[(i*251)%2000].Name = fmt.Sprint("renamed-", i)
		next[i].Services[(i*97)%2000].Status = apiclient.ServiceUnstable
	}
	flat, per, size := buildsAgainstPieces(t, next[:])
	if per > size/4 {
		t.Errorf("a build allocated %d B more than one in pieces, the view is %d B", per, size)
	}
	if got := scrapePrometheus(t, flat); !strings.Contains(got, next[builds-1].Services[(builds-1)*251%2000].Name) {
		t.Errorf("the exposition lacks the last change")
	}
}

// TestGzipViewGrowingIsNotLaidOutAnewEachBuild: while the first reads fill
// the data plane the view grows at every publish; a slice laid out with
// room for growth serves several builds.
func TestGzipViewGrowingIsNotLaidOutAnewEachBuild(t *testing.T) {
	var next []*fleet.Snapshot
	for b := 1; b <= 8; b++ {
		next = append(next, fleettest.Synthetic("p", 2000+b*40))
	}
	if _, per, size := buildsAgainstPieces(t, next); per > size/3 {
		t.Errorf("a growing build allocated %d B more than one in pieces, the view is %d B", per, size)
	}
}

// buildsAgainstPieces builds a view of each of next, after one of 2,000
// services, in one slice and in pieces; it returns the one-slice handler,
// what a build allocated more than in pieces, and the last view's size.
// Both must serve the same bytes.
func buildsAgainstPieces(t *testing.T, next []*fleet.Snapshot) (flat *Handler, per, size int) {
	t.Helper()
	f := formOf(formatOpenMetrics, true)
	flat, pieces := New(nil, nil), New(nil, nil)
	pieces.flatView = 0
	var allocated [2]uint64
	for i, e := range []*Handler{flat, pieces} {
		e.SetSnapshot(fleettest.Synthetic("p", 2000))
		e.view(f)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for _, s := range next {
			e.SetSnapshot(s)
			e.view(f)
		}
		runtime.ReadMemStats(&after)
		allocated[i] = after.TotalAlloc - before.TotalAlloc
	}
	if got, want := scrapePrometheus(t, flat), scrapePrometheus(t, pieces); got != want {
		t.Error("a view built in place differs from one built in pieces")
	}
	return flat, (int(allocated[0]) - int(allocated[1])) / len(next), flat.view(f).size
}

// TestGzipViewReadIsNotReused: a view a scrape holds keeps its bytes
// through builds; the scrape after it serves the latest snapshot.
func TestGzipViewReadIsNotReused(t *testing.T) {
	e := New(nil, nil)
	f := formOf(formatOpenMetrics, true)
	e.SetSnapshot(fleettest.Synthetic("p", 300))
	v := e.acquireView(f)
	want := bytes.Clone(v.parts[0])
	for i := range 3 {
		next := fleettest.Synthetic("p", 300)
		next.Services[i].Name = fmt.Sprint("changed-", i)
		e.SetSnapshot(next)
		w := e.acquireView(f)
		w.release()
	}
	if !bytes.Equal(v.parts[0], want) {
		t.Error("the bytes of a view being read changed")
	}
	v.release()
	if v.acquire() {
		t.Error("a replaced view could be read again")
	}
}

// TestGzipViewInPlaceUnderConcurrentScrapes: scrapes during builds get
// whole answers (the gzip trailer checks every byte) of some snapshot.
func TestGzipViewInPlaceUnderConcurrentScrapes(t *testing.T) {
	e := New(nil, nil)
	var snaps [4]*fleet.Snapshot
	for i := range snaps {
		snaps[i] = fleettest.Synthetic("p", 200+i*7)
		snaps[i].Services[i].Name = fmt.Sprint("renamed-", i)
	}
	e.SetSnapshot(snaps[0])
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for range 30 {
				body, err := scrapeGzip(e)
				if err != nil || !strings.Contains(body, "renamed-") || !strings.HasSuffix(body, "# EOF\n") {
					t.Errorf("a scrape got a partial exposition (%v)", err)
					return
				}
			}
		})
	}
	for i := range 60 {
		e.SetSnapshot(snaps[i%len(snaps)])
		e.view(formOf(formatOpenMetrics, true))
	}
	wg.Wait()
}

// scrapeGzip is scrapePrometheus for a goroutine: it reports, never stops the test.
func scrapeGzip(e *Handler) (string, error) {
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept", acceptPrometheus3)
	req.Header.Set("Accept-Encoding", "gzip")
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	zr, err := gzip.NewReader(rec.Body)
	if err != nil {
		return "", err
	}
	b, err := io.ReadAll(zr)
	return string(b), err
}

// TestGzipViewShedsGrowthRoom: the room a growing view was given is let go
// once the view stops growing (it stayed with the view for good: a quarter
// of its size, 2.3 MB at 10,000 services with the data plane).
func TestGzipViewShedsGrowthRoom(t *testing.T) {
	f := formOf(formatOpenMetrics, true)
	e := New(nil, nil)
	for b := range 2 {
		e.SetSnapshot(fleettest.Synthetic("p", 2000+b*200))
		e.view(f)
	}
	grown := cap(e.view(f).parts[0])
	for i := range 13 {
		s := fleettest.Synthetic("p", 2200)
		s.Services[i].Name = fmt.Sprint("renamed-", i)
		e.SetSnapshot(s)
		e.view(f)
	}
	v := e.view(f)
	if room := cap(v.parts[0]) - v.size; room > v.size/16 {
		t.Errorf("the view keeps %d B of room (%d B when it grew) for %d B", room, grown-v.size, v.size)
	}
	if got := scrapePrometheus(t, e); !strings.Contains(got, "renamed-12") {
		t.Error("the exposition lacks a change")
	}
}
