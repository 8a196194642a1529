package dataplane

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
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

type positionsFile struct {
	Format   string                  `json:"format"`
	Version  int                     `json:"version"`
	Projects map[string]savedProject `json:"projects"`
}

type savedProject struct {
	// A position is another API's when APIURL differs.
	APIURL   string                 `json:"api_url"`
	Services map[string]savedCursor `json:"services"`
}

type savedCursor struct {
	Boundary   time.Time          `json:"boundary"`
	AtBoundary map[string]int     `json:"at_boundary"`
	Counts     map[string]float64 `json:"counts"`
	ReadUntil  time.Time          `json:"read_until"`
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

func readPositions(path string) (map[string]savedProject, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var buf bytes.Buffer
	if n, err := buf.ReadFrom(io.LimitReader(f, maxPositionsFile+1)); err != nil {
		return nil, err
	} else if n > maxPositionsFile {
		return nil, fmt.Errorf("larger than %d MiB", maxPositionsFile>>20)
	}
	return parsePositions(buf.Bytes())
}

func parsePositions(b []byte) (map[string]savedProject, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var pf positionsFile
	if err := dec.Decode(&pf); err != nil {
		return nil, fmt.Errorf("not a log state file: %w", err)
	}
	if dec.More() {
		return nil, errors.New("not a log state file: data after its end")
	}
	if pf.Format != positionsFormat {
		return nil, fmt.Errorf("not a log state file of this exporter (format %q)", pf.Format)
	}
	if pf.Version != positionsVersion {
		return nil, fmt.Errorf("format version %d, this exporter reads version %d", pf.Version, positionsVersion)
	}
	for id, sp := range pf.Projects {
		for sid, sc := range sp.Services {
			if err := sc.check(); err != nil {
				return nil, fmt.Errorf("project %q service %q: %w", id, sid, err)
			}
		}
	}
	if pf.Projects == nil {
		pf.Projects = map[string]savedProject{}
	}
	return pf.Projects, nil
}

func (sc savedCursor) check() error {
	if sc.Boundary.IsZero() || sc.ReadUntil.IsZero() {
		return errors.New("no boundary or read time")
	}
	for k, n := range sc.AtBoundary {
		if _, err := strconv.ParseUint(k, 16, 64); err != nil || n < 1 {
			return fmt.Errorf("entry %q counted %d times at the boundary", k, n)
		}
	}
	for sev, n := range sc.Counts {
		if severityOf(sev) != sev || n < 0 || math.IsNaN(n) || math.IsInf(n, 0) {
			return fmt.Errorf("count %v of severity %q", n, sev)
		}
	}
	return nil
}

// apiIdentity drops the user information and query: they may hold a secret.
func apiIdentity(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host + u.EscapedPath()
}

func (p *LogPositions) resume(projectID, apiURL string) map[string]savedCursor {
	p.mu.Lock()
	defer p.mu.Unlock()
	sp, ok := p.projects[projectID]
	if !ok {
		return nil
	}
	if id := apiIdentity(apiURL); sp.APIURL != id {
		p.logger.Warn("Log state file refused for this project: its positions are another API's; counting starts afresh",
			"project_id", projectID, "saved_api_url", sp.APIURL, "api_url", id)
		return nil
	}
	return maps.Clone(sp.Services)
}

func (p *LogPositions) save(projectID, apiURL string, services map[string]savedCursor) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.projects[projectID] = savedProject{APIURL: apiIdentity(apiURL), Services: services}
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
// old or the new file, never a part.
func (p *LogPositions) write() {
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	p.mu.Lock()
	if !p.dirty {
		p.mu.Unlock()
		return
	}
	b, err := json.Marshal(positionsFile{Format: positionsFormat, Version: positionsVersion, Projects: p.projects})
	p.dirty = false
	p.mu.Unlock()
	if err == nil {
		err = writeAtomic(p.path, b)
	}
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

func writeAtomic(path string, b []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	_, err = tmp.Write(b)
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
