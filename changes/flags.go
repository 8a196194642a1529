package changes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/clouddb/clouddb_exporter/internal/flagval"
	"github.com/clouddb/clouddb_exporter/internal/safefile"
)

// Flags are the changes.* flags.
type Flags struct {
	Enabled     bool
	retention   time.Duration
	maxEvents   int
	file        string
	fileMaxSize int64
	sinkURL     string
	sinkFormat  string
	// FreshAPI says the API is new at each start (the embedded simulator):
	// the state saved beside --changes.file is not compared with it, and the
	// first reads are a baseline. The events and their cursors are kept.
	FreshAPI bool
}

// AddFlags registers the changes.* flags on app.
func AddFlags(app *kingpin.Application) *Flags {
	f := &Flags{}
	app.Flag("changes", "Derive the change timeline from the snapshots (GET /api/v1/changes).").
		Default("true").Envar("CLOUDDB_CHANGES").BoolVar(&f.Enabled)
	flagval.Duration(app, "changes.retention", "How long a change stays in the in-memory feed (GET /api/v1/changes).",
		DefaultRetention.String(), "CLOUDDB_CHANGES_RETENTION", &f.retention)
	flagval.Int(app, "changes.retention.events", "Most changes kept in the in-memory feed.",
		fmt.Sprint(DefaultMaxEvents), "CLOUDDB_CHANGES_RETENTION_EVENTS", &f.maxEvents)
	app.Flag("changes.file", "File keeping the changes across restarts (default: memory only).").
		Envar("CLOUDDB_CHANGES_FILE").StringVar(&f.file)
	flagval.Bytes(app, "changes.file.max-size", "Most bytes of --changes.file and its one rotation (.1) together.",
		"64MiB", "CLOUDDB_CHANGES_FILE_MAX_SIZE", &f.fileMaxSize)
	app.Flag("changes.sink.url", "Push the changes to this Loki push API or NDJSON webhook URL.").
		Envar("CLOUDDB_CHANGES_SINK_URL").StringVar(&f.sinkURL)
	flagval.Enum(app, "changes.sink.format", "Format of --changes.sink.url: loki or ndjson.",
		FormatLoki, "CLOUDDB_CHANGES_SINK_FORMAT", &f.sinkFormat, FormatLoki, FormatNDJSON)
	return f
}

// Check validates the flags without opening anything.
func (f *Flags) Check() error {
	switch {
	case f.retention <= 0:
		return errors.New("--changes.retention (CLOUDDB_CHANGES_RETENTION) must be positive")
	case f.maxEvents <= 0:
		return errors.New("--changes.retention.events (CLOUDDB_CHANGES_RETENTION_EVENTS) must be positive")
	}
	if f.sinkURL != "" {
		if _, err := NewSink(SinkOptions{URL: f.sinkURL, Format: f.sinkFormat}); err != nil {
			return fmt.Errorf("--changes.sink.url (CLOUDDB_CHANGES_SINK_URL): %w", err)
		}
	}
	return nil
}

// Open builds the timeline, reading the file's events and state; nil when
// --no-changes. shard names this process's shard: a state saved by another
// shard is not used.
// health (nil: none) reports the state file as "changes".
func (f *Flags) Open(logger *slog.Logger, shard string, health *safefile.Health) (*Timeline, error) {
	if !f.Enabled {
		return nil, nil
	}
	if err := f.Check(); err != nil {
		return nil, err
	}
	t := New(Options{Retention: f.retention, MaxEvents: f.maxEvents, Logger: logger})
	t.health, t.freshAPI = health, f.FreshAPI
	if f.file != "" {
		if err := t.openFile(f.file, f.fileMaxSize, shard); err != nil {
			return nil, fmt.Errorf("--changes.file (CLOUDDB_CHANGES_FILE): %w", err)
		}
	}
	if f.sinkURL != "" {
		s, err := NewSink(SinkOptions{URL: f.sinkURL, Format: f.sinkFormat, Logger: logger})
		if err != nil {
			return nil, fmt.Errorf("--changes.sink.url (CLOUDDB_CHANGES_SINK_URL): %w", err)
		}
		t.SetSink(s)
	}
	return t, nil
}

// SetSink makes t push its events to s, and starts s.
func (t *Timeline) SetSink(s *Sink) {
	s.dropped = t.metrics.dropped
	t.mu.Lock()
	t.sink = s
	t.mu.Unlock()
	s.Start()
}

// openFile replays the file into the ring and restores the state beside it.
func (t *Timeline) openFile(path string, maxSize int64, shard string) error {
	bad, err := readEvents(path, func(e Event) {
		if e.Cursor > t.cursor {
			t.cursor = e.Cursor
			t.ring.add(e)
		}
	})
	if err != nil {
		return err
	}
	if bad > 0 {
		t.logger.Warn("Lines of the changes file did not decode; they are skipped", "file", path, "lines", bad)
	}
	t.ring.expire(t.opts.Now())
	t.restoreState(path+".state", shard)
	w, err := openEventFile(path, maxSize)
	if err != nil {
		return err
	}
	t.file = startFileWriter(w, 0, t.metrics.dropped, t.logger)
	t.statePath, t.shard = path+".state", shard
	return nil
}

// stateFileName is the state file's state_file label.
const stateFileName = "changes"

// restoreState reads the state saved at path by shard. A file that cannot
// be used is moved aside (and counted) rather than overwritten: the first
// reads are a baseline then.
func (t *Timeline) restoreState(path, shard string) {
	st, opened, err := loadState(path)
	if err != nil {
		t.logger.Warn("The changes state file cannot be used; the first reads are a baseline", "err", err)
		if opened {
			if aside, merr := safefile.MoveAside(path, t.opts.Now()); merr == nil {
				t.health.Refused(stateFileName)
				t.logger.Warn("The changes state file was moved aside", "file", aside)
			}
		}
	}
	if st != nil && st.Shard != shard {
		t.logger.Warn("The changes state file was saved by another shard; the first reads are a baseline", "saved_shard", st.Shard, "shard", shard)
		st = nil
	}
	if st != nil && t.freshAPI {
		// Its objects are those of an API that ended with the last run.
		t.logger.Info("The changes state file is not compared with the embedded simulator, new at each start; the first reads are a baseline")
		t.cursor = max(t.cursor, st.Cursor)
		st = nil
	}
	t.health.Start(stateFileName, err == nil)
	if st == nil {
		return
	}
	t.cursor = max(t.cursor, st.Cursor)
	t.restored = map[string]*differ{}
	for id, p := range st.Projects {
		t.restored[id] = restoreDiffer(id, p)
	}
	for _, r := range st.Restarts {
		t.restarts[key{parent: r.ProjectID, id: r.ServiceID}] = r.At
	}
}

// StateSaveInterval is how often a changed state is saved while running.
const StateSaveInterval = 10 * time.Second

// Run saves the state file while ctx lives.
func (t *Timeline) Run(ctx context.Context) {
	if t.statePath == "" {
		return
	}
	tick := time.NewTicker(StateSaveInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			t.saveIfDirty()
		}
	}
}

// saveIfDirty saves the state when it changed. The file is written outside
// t.mu: a slow disk delays the next save, never a poll or the feed.
func (t *Timeline) saveIfDirty() {
	t.saving.Lock()
	defer t.saving.Unlock()
	t.mu.Lock()
	if !t.dirty || t.statePath == "" {
		t.mu.Unlock()
		return
	}
	path, file := t.statePath, t.file
	var queued uint64
	if file != nil {
		queued = file.queued
	}
	b, err := t.marshalStateLocked(t.shard)
	t.dirty = false
	t.mu.Unlock()
	if file != nil {
		file.waitWritten(queued)
	}
	if err == nil {
		err = t.writeState(path, b)
	}
	t.health.Written(stateFileName, err, t.opts.Now())
	if err != nil {
		t.mu.Lock()
		t.dirty = true
		t.mu.Unlock()
		t.logger.Warn("Cannot save the changes state file", "err", err)
	}
}

// Close flushes the sink and the file's queue (both until ctx is done),
// saves the state and closes the file.
func (t *Timeline) Close(ctx context.Context) {
	t.mu.Lock()
	file := t.file
	t.file = nil // nothing is enqueued once it is closed
	t.mu.Unlock()
	var wg sync.WaitGroup
	if file != nil {
		wg.Go(func() { file.close(ctx) })
	}
	if t.sink != nil {
		t.sink.Close(ctx)
	}
	wg.Wait()
	t.saveIfDirty()
}
