// Package safefile opens the files the exporter reads and writes (the
// audit log, the state files) as a careful daemon does: a symbolic link is
// not followed, a FIFO or a device does not block the open, and anything
// but a regular file is refused before a byte is read or written. The
// files an operator gives it to read (keys, tokens, the configuration
// file) are read through their links (ReadLinked), with the same care.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// ErrNotRegular is the error of a path that names a symbolic link, a FIFO,
// a device, a socket or a directory.
var ErrNotRegular = errors.New("not a regular file")

// Open opens path for reading. The caller closes the file.
func Open(path string) (*os.File, os.FileInfo, error) {
	return open(path, os.O_RDONLY, 0)
}

// OpenAppend opens path for appending, creating it with mode 0600. An
// existing file that others may read or write is made 0600; one whose mode
// cannot be changed (another owner's) is refused.
func OpenAppend(path string) (*os.File, os.FileInfo, error) {
	f, info, err := open(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, err
	}
	if info.Mode().Perm()&0o077 != 0 {
		if err := f.Chmod(0o600); err != nil {
			_ = f.Close() // nothing written
			return nil, nil, fmt.Errorf("%s has mode %04o and cannot be made 0600: %w", path, info.Mode().Perm(), err)
		}
		if info, err = f.Stat(); err != nil {
			_ = f.Close() // nothing written
			return nil, nil, err
		}
	}
	return f, info, nil
}

func open(path string, flag int, perm os.FileMode) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, flag|noFollow, perm)
	if err != nil {
		if info, lerr := os.Lstat(path); lerr == nil && !info.Mode().IsRegular() {
			return nil, nil, notRegular(path, info.Mode())
		}
		return nil, nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = notRegular(path, info.Mode())
	}
	if err != nil {
		_ = f.Close() // nothing read or written
		return nil, nil, err
	}
	return f, info, nil
}

// ReadLinked reads a file an operator gives the exporter (a key, a token, a
// configuration file): through symbolic links, since a Kubernetes Secret's
// files are links, but without waiting on a FIFO, which would hang whoever
// reads (a poller re-reading its keys after a 401, a reload) for ever.
// Anything but a regular file at the end of the links is refused, and so
// is one over limit bytes.
func ReadLinked(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|noBlock, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only: nothing to lose
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, notRegular(path, info.Mode())
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(b)) > limit {
		err = fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

func notRegular(path string, mode fs.FileMode) error {
	kind := "a special file"
	switch {
	case mode&fs.ModeSymlink != 0:
		kind = "a symbolic link"
	case mode&fs.ModeNamedPipe != 0:
		kind = "a FIFO"
	case mode&fs.ModeDevice != 0:
		kind = "a device"
	case mode&fs.ModeSocket != 0:
		kind = "a socket"
	case mode.IsDir():
		kind = "a directory"
	}
	return fmt.Errorf("%s is %s: %w", path, kind, ErrNotRegular)
}

// Lstat says what path names, without following a symbolic link.
func Lstat(path string) (os.FileInfo, error) { return os.Lstat(path) }

// MoveAside renames what path names (a symbolic link itself, not its
// target) to NAME.refused-TIME beside it, and returns the new path.
func MoveAside(path string, now time.Time) (string, error) {
	aside := path + ".refused-" + now.UTC().Format("20060102T150405.000000000Z")
	if err := os.Rename(path, aside); err != nil {
		return "", err
	}
	return aside, nil
}

// WriteAtomic writes a temporary file in path's directory with mode 0600,
// syncs it and renames it over path: a crash leaves the old or the new
// file, never a part. The rename replaces what path names (a symbolic link
// itself, never its target); the caller decides beforehand whether that
// may be replaced.
func WriteAtomic(path string, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	err = write(tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return err
	}
	// The rename itself is durable once the directory is synced.
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
