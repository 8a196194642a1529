package changes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// Sink formats.
const (
	FormatLoki   = "loki"
	FormatNDJSON = "ndjson"
)

// SinkOptions configure a Sink.
type SinkOptions struct {
	URL    string
	Format string
	// QueueSize bounds the events waiting; beyond, new ones are dropped
	// (counted), never waited for.
	QueueSize int
	BatchSize int
	// FlushInterval is the longest an event waits for its batch to fill.
	FlushInterval time.Duration
	// Retries after the first attempt, with Backoff doubling from its value.
	Retries int
	Backoff time.Duration
	Client  *http.Client
	Logger  *slog.Logger
}

// Defaults of SinkOptions.
const (
	DefaultSinkQueue         = 10000
	DefaultSinkBatch         = 500
	DefaultSinkFlushInterval = time.Second
	DefaultSinkRetries       = 5
	DefaultSinkBackoff       = 500 * time.Millisecond
)

// Sink pushes events to a Loki push API or an NDJSON webhook in batches.
type Sink struct {
	opts   SinkOptions
	target string // the URL without its user information, for logs
	q      chan Event
	done   chan struct{}
	stop   chan struct{}
	// ctx is cancelled when Close's context is done: the push in flight
	// ends and none follows.
	ctx     context.Context
	abort   context.CancelFunc
	dropped func(reason string, n int)
}

// NewSink checks opts; Start runs it.
func NewSink(opts SinkOptions) (*Sink, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("not an http(s) URL with a host")
	}
	if opts.Format != FormatLoki && opts.Format != FormatNDJSON {
		return nil, fmt.Errorf("format %q: want %s or %s", opts.Format, FormatLoki, FormatNDJSON)
	}
	opts.QueueSize = cmpOr(opts.QueueSize, DefaultSinkQueue)
	opts.BatchSize = cmpOr(opts.BatchSize, DefaultSinkBatch)
	opts.FlushInterval = cmpOr(opts.FlushInterval, DefaultSinkFlushInterval)
	opts.Retries = cmpOr(opts.Retries, DefaultSinkRetries)
	opts.Backoff = cmpOr(opts.Backoff, DefaultSinkBackoff)
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, abort := context.WithCancel(context.Background())
	return &Sink{opts: opts, target: u.Redacted(), q: make(chan Event, opts.QueueSize), done: make(chan struct{}), stop: make(chan struct{}),
		ctx: ctx, abort: abort, dropped: func(string, int) {}}, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// enqueue never waits: a full queue drops the event.
func (s *Sink) enqueue(e Event) {
	select {
	case s.q <- e:
	default:
		s.dropped(reasonSinkQueue, 1)
	}
}

// run sends batches until Close.
func (s *Sink) run() {
	defer close(s.done)
	var batch []Event
	timer := time.NewTimer(s.opts.FlushInterval)
	defer timer.Stop()
	for {
		select {
		case e := <-s.q:
			batch = append(batch, e)
			if len(batch) < s.opts.BatchSize {
				continue
			}
		case <-timer.C:
			timer.Reset(s.opts.FlushInterval)
		case <-s.stop:
			s.flush(batch)
			return
		}
		if len(batch) > 0 {
			s.send(batch)
			batch = batch[:0]
		}
	}
}

// flush sends what is queued, retrying until Close's context is done.
func (s *Sink) flush(batch []Event) {
	for {
		select {
		case e := <-s.q:
			batch = append(batch, e)
			if len(batch) < s.opts.BatchSize {
				continue
			}
		default:
		}
		if len(batch) == 0 {
			return
		}
		s.send(batch)
		batch = batch[:0]
		if len(s.q) == 0 {
			return
		}
	}
}

// send retries a failed batch with a doubling backoff; once Close's context
// is done, the attempt in flight is cancelled and the batch dropped.
func (s *Sink) send(batch []Event) {
	body, contentType, err := s.encode(batch)
	if err != nil {
		s.dropped(reasonSink, len(batch))
		return
	}
	wait := s.opts.Backoff
	for attempt := 0; ; attempt++ {
		retry, err := s.post(body, contentType)
		if err == nil {
			return
		}
		if !retry || attempt >= s.opts.Retries || s.ctx.Err() != nil {
			s.opts.Logger.Warn("Cannot deliver changes to the sink; dropping them", "url", s.target, "events", len(batch), "attempts", attempt+1, "err", err)
			s.dropped(reasonSink, len(batch))
			return
		}
		select {
		case <-time.After(wait):
		case <-s.ctx.Done():
		}
		wait *= 2
	}
}

func (s *Sink) post(body []byte, contentType string) (retry bool, err error) {
	if err := s.ctx.Err(); err != nil {
		return false, errors.New("the exporter is stopping")
	}
	req, err := http.NewRequestWithContext(s.ctx, http.MethodPost, s.opts.URL, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := s.opts.Client.Do(req)
	if err != nil {
		// The client's error names the URL: keep its user information out.
		return true, fmt.Errorf("request failed: %w", urlError(err))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	switch {
	case resp.StatusCode < 300:
		return false, nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return true, fmt.Errorf("status %d", resp.StatusCode)
	}
	return false, fmt.Errorf("status %d", resp.StatusCode)
}

func urlError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

type lokiPush struct {
	Streams []lokiStream `json:"streams"`
}

type lokiStream struct {
	Stream map[string]string `json:"stream"`
	Values [][2]string       `json:"values"`
}

// encode: a Loki push groups the events by their stream labels, each
// event's JSON as its line, dated by the time the exporter saw it.
func (s *Sink) encode(batch []Event) ([]byte, string, error) {
	if s.opts.Format == FormatNDJSON {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		for i := range batch {
			if err := enc.Encode(&batch[i]); err != nil {
				return nil, "", err
			}
		}
		return buf.Bytes(), "application/x-ndjson", nil
	}
	var push lokiPush
	index := map[[3]string]int{}
	for i := range batch {
		e := &batch[i]
		line, err := json.Marshal(e)
		if err != nil {
			return nil, "", err
		}
		k := [3]string{e.ProjectID, e.ObjectType, e.Kind}
		j, ok := index[k]
		if !ok {
			j = len(push.Streams)
			index[k] = j
			push.Streams = append(push.Streams, lokiStream{Stream: map[string]string{"project_id": k[0], "object_type": k[1], "kind": k[2]}})
		}
		push.Streams[j].Values = append(push.Streams[j].Values, [2]string{strconv.FormatInt(e.Time.UnixNano(), 10), string(line)})
	}
	slices.SortStableFunc(push.Streams, func(a, b lokiStream) int {
		return compareStreams(a.Stream, b.Stream)
	})
	b, err := json.Marshal(push)
	return b, "application/json", err
}

func compareStreams(a, b map[string]string) int {
	for _, l := range []string{"project_id", "object_type", "kind"} {
		if a[l] != b[l] {
			if a[l] < b[l] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// Start runs the sink; Close flushes it.
func (s *Sink) Start() { go s.run() }

// Close stops taking events and sends what is queued, until ctx is done.
func (s *Sink) Close(ctx context.Context) {
	defer s.abort()
	close(s.stop)
	select {
	case <-s.done:
	case <-ctx.Done():
		s.abort()
		<-s.done // the push in flight is cancelled, the rest dropped
	}
}
