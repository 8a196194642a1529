package changes

import (
	"context"
	"log/slog"
	"sync"
)

// DefaultFileQueue bounds the events waiting for the changes file's writer
// (about 1 KiB each, without the ring's slack).
const DefaultFileQueue = 10000

// fileWriter appends events to the changes file from its own goroutine, so
// that a stalled disk (a hung NFS mount, a FIFO put in the file's place, a
// full disk retried by the kernel) never holds the poll that published
// them: the queue is bounded and what does not fit is dropped and counted.
type fileWriter struct {
	file    *eventFile
	q       chan Event
	done    chan struct{}
	dropped func(reason string, n int)
	logger  *slog.Logger
	// queued is the cursor of the last event queued, under the timeline's
	// lock; written that of the last one the file was handed (or refused),
	// under mu. stopped: nothing more will be written.
	queued  uint64
	mu      sync.Mutex
	cond    *sync.Cond
	written uint64
	stopped bool
	// waiting, in tests, is called each time a save waits for the file.
	waiting func()
}

func startFileWriter(f *eventFile, queue int, dropped func(string, int), logger *slog.Logger) *fileWriter {
	w := &fileWriter{file: f, q: make(chan Event, cmpOr(queue, DefaultFileQueue)), done: make(chan struct{}),
		dropped: dropped, logger: logger}
	w.cond = sync.NewCond(&w.mu)
	go w.run()
	return w
}

// enqueue never waits: a full queue drops e.
func (w *fileWriter) enqueue(e Event) {
	select {
	case w.q <- e:
		w.queued = e.Cursor
	default:
		w.dropped(reasonFileQueue, 1)
	}
}

func (w *fileWriter) run() {
	defer close(w.done)
	defer w.stop()
	for e := range w.q {
		if err := w.file.append(&e); err != nil {
			w.dropped(reasonFile, 1)
			w.logger.Warn("Cannot write a change to the changes file", "err", err)
		}
		w.mu.Lock()
		w.written = e.Cursor
		w.cond.Broadcast()
		w.mu.Unlock()
	}
}

func (w *fileWriter) stop() {
	w.mu.Lock()
	w.stopped = true
	w.cond.Broadcast()
	w.mu.Unlock()
}

// waitWritten returns once the file was handed the event of cursor c, or
// the writer stopped: the state saved after it then never claims a change
// that a crash would leave out of the file.
func (w *fileWriter) waitWritten(c uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.written < c && !w.stopped {
		if w.waiting != nil {
			w.waiting()
		}
		w.cond.Wait()
	}
}

// close writes what is queued, until ctx is done, and closes the file. The
// caller makes sure that nothing is enqueued any more. A write still stuck
// when ctx is done is left to the process's exit.
func (w *fileWriter) close(ctx context.Context) {
	close(w.q)
	select {
	case <-w.done:
		_ = w.file.close()
	case <-ctx.Done():
		w.stop()
		n := len(w.q)
		w.dropped(reasonFile, n)
		w.logger.Warn("The changes file did not take the last changes in time", "dropped", n)
	}
}
