package dataplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Bounds of the log state file (--collect.logs.state-file).
const (
	// MaxLogResume bounds the reads a position saved long ago costs.
	MaxLogResume           = time.Hour
	LogPositionsWriteEvery = 10 * time.Second
	// maxPositionsFile keeps a wrong path from filling the memory.
	maxPositionsFile = 256 << 20
)

const (
	positionsFormat  = "clouddb_exporter log positions"
	positionsVersion = 1
)

// LogPositions is the log collector's state file, like a log shipper's
// positions file; its methods are safe for concurrent use.
type LogPositions struct {
	path   string
	logger *slog.Logger

	mu       sync.Mutex
	projects map[string]savedProject
	dirty    bool
	closed   bool
	failing  bool

	writeMu sync.Mutex
}

type savedProject struct {
	// A position is another API's when apiURL differs.
	apiURL   string
	services savedServices
}

// savedServices are sorted by service id; once saved, never changed.
type savedServices []savedCursor

// savedCursor is a service's position in 48 bytes and a few for its keys:
// as a map by service of two maps each (counts by severity name, boundary
// entries by hex key) the positions kept some 700 bytes a service.
type savedCursor struct {
	boundary, readUntil int64 // Unix ns
	// counts, with the service's id, is shared with the cursor.
	counts *ServiceLogs
	// atBoundary: sorted, a key as many times as counted.
	atBoundary []uint32
}

func (s savedServices) find(id string) (savedCursor, bool) {
	i, ok := slices.BinarySearchFunc(s, id, func(sc savedCursor, id string) int { return strings.Compare(sc.counts.ServiceID(), id) })
	if !ok {
		return savedCursor{}, false
	}
	return s[i], true
}

// CheckLogPositions checks a state file's path without writing.
func CheckLogPositions(path string) error {
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return fmt.Errorf("the directory of %s does not exist", path)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	return nil
}

// OpenLogPositions reads the state file at path: all of it or, with one
// WARN, none. The error is for a path that cannot hold the file.
func OpenLogPositions(path string, logger *slog.Logger) (*LogPositions, error) {
	if err := CheckLogPositions(path); err != nil {
		return nil, err
	}
	p := &LogPositions{path: path, logger: logger, projects: map[string]savedProject{}}
	projects, err := readPositions(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		logger.Info("No log state file yet: counting starts now", "file", path)
	case err != nil:
		logger.Warn("Log state file refused: counting starts afresh, and the file is replaced", "file", path, "reason", err)
	default:
		p.projects = projects
		logger.Info("Log state file read: counting resumes where it stopped", "file", path, "projects", len(projects))
	}
	return p, nil
}

// apiIdentity drops the user information and query: they may hold a secret.
func apiIdentity(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host + u.EscapedPath()
}

// resume returns the project's saved positions, shared: they never change.
func (p *LogPositions) resume(projectID, apiURL string) savedServices {
	p.mu.Lock()
	defer p.mu.Unlock()
	sp, ok := p.projects[projectID]
	if !ok {
		return nil
	}
	if id := apiIdentity(apiURL); sp.apiURL != id {
		p.logger.Warn("Log state file refused for this project: its positions are another API's; counting starts afresh",
			"project_id", projectID, "saved_api_url", sp.apiURL, "api_url", id)
		return nil
	}
	return sp.services
}

func (p *LogPositions) save(projectID, apiURL string, services savedServices) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.projects[projectID] = savedProject{apiURL: apiIdentity(apiURL), services: services}
	p.dirty = true
}

// Run writes the file every LogPositionsWriteEvery when it changed, until ctx ends.
func (p *LogPositions) Run(ctx context.Context) {
	t := time.NewTicker(LogPositionsWriteEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p.write()
		}
	}
}

// Close writes the file a last time; later saves are ignored. Nil does nothing.
func (p *LogPositions) Close() {
	if p == nil {
		return
	}
	p.write()
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
}

// write renames a synced temporary file over the file: a crash leaves the
// old or the new file, never a part. The positions saved never change: it
// streams them outside the lock, not holding up a pass saving meanwhile.
func (p *LogPositions) write() {
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	p.mu.Lock()
	if !p.dirty {
		p.mu.Unlock()
		return
	}
	projects := maps.Clone(p.projects)
	p.dirty = false
	p.mu.Unlock()
	err := writeAtomic(p.path, func(w io.Writer) error { return writePositions(w, projects) })
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case err != nil:
		p.dirty = true
		if !p.failing {
			p.logger.Warn("Cannot write the log state file: a restart would not resume from the latest positions", "file", p.path, "err", err)
		}
		p.failing = true
	case p.failing:
		p.failing = false
		p.logger.Info("The log state file is written again", "file", p.path)
	}
}

func writeAtomic(path string, write func(io.Writer) error) error {
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
