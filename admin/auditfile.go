package admin

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/clouddb/clouddb_exporter/internal/safefile"
)

// auditFile is --admin.audit-log, reopened when its path no longer names
// the open file (after logrotate), so that no record goes to a file nobody
// reads. copytruncate needs nothing: writes append at the new end.
//
// The path is opened through safefile: a symbolic link, a FIFO or a device
// put there is refused (the write fails: 503, unless fail-open) and never
// blocks; no lock is held across an open, so that a slow file system holds
// up only the writes, never the other admin requests.
type auditFile struct {
	path string

	// mu guards f and info, never held across an open: concurrent reopens
	// each open the path, and the last one's file stays.
	mu sync.Mutex
	// f is nil while the file cannot be reopened: each write tries again.
	f    *os.File
	info os.FileInfo
	// closed: a write after Close fails rather than create the file again
	// (a directory being removed would not be empty) and leak it.
	closed bool
}

var (
	errNoAuditFile     = errors.New("the audit log is not open")
	errAuditFileClosed = errors.New("the audit log is closed")
)

func openAuditFile(path string) (*auditFile, error) {
	a := &auditFile{path: path}
	if err := a.Reopen(); err != nil {
		return nil, err
	}
	return a, nil
}

// Refresh reopens the path when it no longer names the open file.
func (a *auditFile) Refresh() error {
	a.mu.Lock()
	f, info, closed := a.f, a.info, a.closed
	a.mu.Unlock()
	if closed {
		return errAuditFileClosed
	}
	if f != nil {
		if fi, err := os.Lstat(a.path); err == nil && os.SameFile(fi, info) {
			return nil
		}
	}
	return a.Reopen()
}

// Write cuts a short write off again, so that the file holds no torn line.
func (a *auditFile) Write(p []byte) (int, error) {
	if err := a.Refresh(); err != nil {
		return 0, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return 0, errNoAuditFile
	}
	size, serr := a.f.Seek(0, io.SeekEnd)
	n, err := a.f.Write(p)
	if err != nil && n > 0 && serr == nil {
		if terr := a.f.Truncate(size); terr != nil {
			err = fmt.Errorf("%w (and the partial record could not be removed: %w)", err, terr)
		}
	}
	return n, err
}

// Reopen opens the path again, as on SIGHUP after a rotation. What the
// path names, if not a regular file, is refused and the old file closed:
// records go nowhere rather than to a file nobody reads.
func (a *auditFile) Reopen() error {
	a.mu.Lock()
	closed := a.closed
	a.mu.Unlock()
	if closed {
		return errAuditFileClosed
	}
	f, info, err := safefile.OpenAppend(a.path)
	a.mu.Lock()
	if a.closed { // closed while opening: its writer did not wait for it
		a.mu.Unlock()
		if f != nil {
			_ = f.Close()
		}
		return errAuditFileClosed
	}
	old := a.f
	a.f, a.info = f, info
	a.mu.Unlock()
	if old != nil {
		_ = old.Close() // each record was written whole with one call: nothing buffered to lose
	}
	return err
}

// Close closes the file for good: later writes and reopens fail.
func (a *auditFile) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	if a.f == nil {
		return nil
	}
	err := a.f.Close()
	a.f = nil
	return err
}
