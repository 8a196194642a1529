package admin

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// auditFile is --admin.audit-log, reopened when its path no longer names
// the open file (after logrotate), so that no record goes to a file nobody
// reads. copytruncate needs nothing: writes append at the new end.
type auditFile struct {
	path string

	mu sync.Mutex
	// f is nil while the file cannot be reopened: each write tries again.
	f    *os.File
	info os.FileInfo
}

func openAuditFile(path string) (*auditFile, error) {
	a := &auditFile{path: path}
	if err := a.reopen(); err != nil {
		return nil, err
	}
	return a, nil
}

// Write cuts a short write off again, so that the file holds no torn line.
func (a *auditFile) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.current(); err != nil {
		return 0, err
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

// Reopen opens the path again, as on SIGHUP after a rotation.
func (a *auditFile) Reopen() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reopen()
}

// Close closes the file; a later write would reopen it.
func (a *auditFile) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return nil
	}
	err := a.f.Close()
	a.f = nil
	return err
}

func (a *auditFile) current() error {
	if a.f != nil {
		if fi, err := os.Stat(a.path); err == nil && os.SameFile(fi, a.info) {
			return nil
		}
	}
	return a.reopen()
}

func (a *auditFile) reopen() error {
	if a.f != nil {
		_ = a.f.Close() // each record was written whole with one call: nothing buffered to lose
		a.f = nil
	}
	f, err := os.OpenFile(a.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	info, err := f.Stat()
	if err != nil {
		_ = f.Close() // never written
		return err
	}
	a.f, a.info = f, info
	return nil
}
