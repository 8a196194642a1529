package changes

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/clouddb/clouddb_exporter/internal/safefile"
)

// eventFile is the append-only NDJSON file of events, rotated once to
// path+".1" when it would grow past max bytes. Its files are opened with
// safefile: no symbolic link followed, nothing but a regular file.
type eventFile struct {
	path string
	max  int64
	f    *os.File
	info os.FileInfo // f's, to tell when path names another file
	size int64
	buf  []byte
}

// DefaultFileMaxSize bounds the changes file (and its one rotation).
const DefaultFileMaxSize = 64 << 20

func openEventFile(path string, maxSize int64) (*eventFile, error) {
	if maxSize <= 0 {
		maxSize = DefaultFileMaxSize
	}
	f, st, err := safefile.OpenAppend(path)
	if err != nil {
		return nil, err
	}
	return &eventFile{path: path, max: maxSize, f: f, info: st, size: st.Size()}, nil
}

// append writes one line; past the size bound the file is rotated first.
func (w *eventFile) append(e *Event) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	w.buf = append(append(w.buf[:0], b...), '\n')
	if err := w.reopenIfMoved(); err != nil {
		return err
	}
	if w.size > 0 && w.size+int64(len(w.buf)) > w.max/2 {
		if err := w.rotate(); err != nil {
			return err
		}
	}
	n, err := w.f.Write(w.buf)
	w.size += int64(n)
	return err
}

// reopenIfMoved opens a new file when path no longer names the open one
// (deleted, moved or replaced by hand, as logrotate does): events written
// to a file no one can open again would be lost to the next start.
func (w *eventFile) reopenIfMoved() error {
	if w.info != nil {
		if st, err := safefile.Lstat(w.path); err == nil && os.SameFile(st, w.info) {
			return nil
		}
	}
	return w.reopen()
}

// rotate keeps one older file: the two together stay under max.
func (w *eventFile) rotate() error {
	if err := os.Rename(w.path, w.path+".1"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return w.reopen()
}

func (w *eventFile) reopen() error {
	f, st, err := safefile.OpenAppend(w.path)
	if err != nil {
		return err
	}
	_ = w.f.Close()
	w.f, w.info, w.size = f, st, st.Size()
	return nil
}

func (w *eventFile) close() error { return w.f.Close() }

// readEvents reads the rotated file, then the file: the events oldest first.
// A line that does not decode (cut by a crash) is skipped and counted.
func readEvents(path string, each func(Event)) (bad int, err error) {
	for _, p := range []string{path + ".1", path} {
		f, _, err := safefile.Open(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return bad, err
		}
		n, err := readLines(f, each)
		_ = f.Close()
		bad += n
		if err != nil {
			return bad, fmt.Errorf("%s: %w", p, err)
		}
	}
	return bad, nil
}

func readLines(r io.Reader, each func(Event)) (bad int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var e Event
		if len(sc.Bytes()) == 0 {
			continue
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Cursor == 0 {
			bad++
			continue
		}
		each(e)
	}
	return bad, sc.Err()
}
