package changes

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// receiver answers 503 to its first fails pushes, then 204, keeping the bodies.
type receiver struct {
	mu     sync.Mutex
	fails  int
	calls  int
	bodies [][]byte
	types  []string
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.calls <= r.fails {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	r.bodies = append(r.bodies, b)
	r.types = append(r.types, req.Header.Get("Content-Type"))
	w.WriteHeader(http.StatusNoContent)
}

func sinkEvents() []Event {
	return []Event{
		{Cursor: 1, ID: "x1", Time: t0, ProjectID: "p1", ObjectType: TypeService, ObjectID: "a", Kind: KindResized, Source: SourcePoll},
		{Cursor: 2, ID: "x2", Time: t0.Add(time.Second), ProjectID: "p1", ObjectType: TypeService, ObjectID: "b", Kind: KindResized, Source: SourcePoll},
		{Cursor: 3, ID: "x3", Time: t0, ProjectID: "p1", ObjectType: TypePeering, ObjectID: "pe", Kind: KindDeleted, Source: SourcePoll},
	}
}

func TestSinkPushesLokiJSONWithRetries(t *testing.T) {
	rcv := &receiver{fails: 2}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	s, err := NewSink(SinkOptions{URL: srv.URL + "/loki/api/v1/push", Format: FormatLoki, Backoff: time.Millisecond, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var drops int
	s.dropped = func(string, int) { drops++ }
	s.Start()
	for _, e := range sinkEvents() {
		s.enqueue(e)
	}
	s.Close(t.Context()) // the flush on SIGTERM sends what is queued
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if drops != 0 || len(rcv.bodies) != 1 {
		t.Fatalf("%d drops, %d bodies delivered after %d calls", drops, len(rcv.bodies), rcv.calls)
	}
	if rcv.types[0] != "application/json" {
		t.Errorf("Content-Type %q", rcv.types[0])
	}
	var push struct {
		Streams []struct {
			Stream map[string]string `json:"stream"`
			Values [][]string        `json:"values"`
		} `json:"streams"`
	}
	if err := json.Unmarshal(rcv.bodies[0], &push); err != nil {
		t.Fatal(err)
	}
	if len(push.Streams) != 2 {
		t.Fatalf("%d streams, want one per project_id, object_type and kind: %s", len(push.Streams), rcv.bodies[0])
	}
	st := push.Streams[0]
	if st.Stream["project_id"] != "p1" || st.Stream["object_type"] != TypePeering || st.Stream["kind"] != KindDeleted || len(st.Stream) != 3 {
		t.Errorf("stream labels %v", st.Stream)
	}
	resized := push.Streams[1]
	if len(resized.Values) != 2 || resized.Values[0][0] != "1772334000000000000" {
		t.Fatalf("values %v", resized.Values)
	}
	var e Event
	if err := json.Unmarshal([]byte(resized.Values[1][1]), &e); err != nil || e.ID != "x2" {
		t.Errorf("line %q: want the event's JSON (%v)", resized.Values[1][1], err)
	}
}

func TestSinkDropsWhatItCannotDeliver(t *testing.T) {
	rcv := &receiver{fails: 1 << 30}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	s, err := NewSink(SinkOptions{URL: srv.URL, Format: FormatNDJSON, Backoff: time.Millisecond, Retries: 2, QueueSize: 2, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	drops := map[string]int{}
	var mu sync.Mutex
	s.dropped = func(reason string, n int) { mu.Lock(); drops[reason] += n; mu.Unlock() }
	// Not started: the queue of 2 fills, the third is dropped at once.
	for _, e := range sinkEvents() {
		s.enqueue(e)
	}
	s.Start()
	s.Close(t.Context())
	if drops[reasonSinkQueue] != 1 || drops[reasonSink] != 2 {
		t.Errorf("drops %v, want 1 queue_full and 2 sink_error", drops)
	}
	if rcv.calls < 1 {
		t.Errorf("%d calls", rcv.calls)
	}
}

func TestSinkRetriesBeforeClose(t *testing.T) {
	rcv := &receiver{fails: 3}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	s, err := NewSink(SinkOptions{URL: srv.URL, Format: FormatNDJSON, Backoff: time.Millisecond, BatchSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	s.enqueue(sinkEvents()[0])
	deadline := time.Now().Add(10 * time.Second)
	for {
		rcv.mu.Lock()
		n := len(rcv.bodies)
		rcv.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("never delivered")
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.Close(t.Context())
	if rcv.calls != 4 || !strings.HasPrefix(string(rcv.bodies[0]), `{"cursor":1,`) || rcv.types[0] != "application/x-ndjson" {
		t.Errorf("%d calls, body %s", rcv.calls, rcv.bodies[0])
	}
}

func TestSinkURLNeverLogged(t *testing.T) {
	if _, err := NewSink(SinkOptions{URL: "ftp://user:secret@x", Format: FormatLoki}); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("err %v", err)
	}
}

// A receiver that never answers must not hold a shutdown past Close's
// context: the push in flight is cancelled, nothing is tried after it, and
// every event not delivered is counted.
func TestSinkCloseCancelsAHangingPush(t *testing.T) {
	arrived, release := make(chan struct{}, 16), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	// No client timeout: only Close's context may end the push.
	s, err := NewSink(SinkOptions{URL: srv.URL, Format: FormatNDJSON, BatchSize: 1, Client: &http.Client{}})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	drops := map[string]int{}
	s.dropped = func(reason string, n int) { mu.Lock(); drops[reason] += n; mu.Unlock() }
	s.Start()
	for _, e := range sinkEvents() {
		s.enqueue(e)
	}
	<-arrived // the first push hangs; the other two wait in the queue
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // the shutdown's deadline has passed
	closed := make(chan struct{})
	go func() { defer close(closed); s.Close(ctx) }()
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Close waited for a receiver that never answers")
	}
	mu.Lock()
	defer mu.Unlock()
	if drops[reasonSink] != len(sinkEvents()) {
		t.Errorf("drops %v, want %d sink_error", drops, len(sinkEvents()))
	}
}
