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
	// MaxLogResume is how far back the first read after a start reaches
	// from a saved position: older entries are not read, so that a
	// position saved long ago costs no more than this many reads.
	MaxLogResume = time.Hour
	// LogPositionsWriteEvery is how often, at most, the file is written.
	LogPositionsWriteEvery = 10 * time.Second
	// maxPositionsFile bounds the file read: far above what 100,000
	// services take, it keeps a wrong path from filling the memory.
	maxPositionsFile = 256 << 20
)

// positionsFormat and positionsVersion mark the file as this exporter's,
// in the format this code reads.
const (
	positionsFormat  = "clouddb_exporter log positions"
	positionsVersion = 1
)

// LogPositions is the log collector's state file: for each project and
// service where its counting stands and its counts, so that counting
// resumes after a restart where it stopped, as a log shipper's positions
// file does. The readers save into it after each pass; it is written
// atomically at most every LogPositionsWriteEvery and at Close. Its
// methods are safe for concurrent use.
type LogPositions struct {
	path   string
	logger *slog.Logger

	mu       sync.Mutex
	projects map[string]savedProject
	dirty    bool
	closed   bool
	// failing is set while writes fail: logged once.
	failing bool

	writeMu sync.Mutex
}

// positionsFile is the file's content.
type positionsFile struct {
	Format   string                  `json:"format"`
	Version  int                     `json:"version"`
	Projects map[string]savedProject `json:"projects"`
}

// savedProject is where one project's counting stands.
type savedProject struct {
	// APIURL is the project's API (scheme, host and path only): a
	// position is another API's when it differs.
	APIURL   string                 `json:"api_url"`
	Services map[string]savedCursor `json:"services"`
}

// savedCursor is what a logCursor needs to go on exactly: the boundary,
// the entries counted at it (by entryKey, in hex), the counts, and until
// when the service's entries were read.
type savedCursor struct {
	Boundary   time.Time          `json:"boundary"`
	AtBoundary map[string]int     `json:"at_boundary"`
	Counts     map[string]float64 `json:"counts"`
	ReadUntil  time.Time          `json:"read_until"`
}

// CheckLogPositions checks a state file's path without writing: its
// directory must exist, and the path must not be a directory.
func CheckLogPositions(path string) error {
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return fmt.Errorf("the directory of %s does not exist", path)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	return nil
}

// OpenLogPositions reads the state file at path. A missing file starts
// fresh; one that cannot be used (unreadable, corrupt, of another format
// or version) is refused whole with one WARN line, and counting starts
// fresh: a file is never read in part. The error is for a path that
// cannot hold the file.
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

// parsePositions decodes and checks a state file: all of it, or an error.
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

// check tells whether a saved cursor can be resumed from.
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

// apiIdentity is the part of an API URL that names the API: never its
// user information or query, which may hold a secret.
func apiIdentity(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host + u.EscapedPath()
}

// resume returns the saved positions of a project of the API at apiURL:
// none when there are none, or when they are another API's (one WARN).
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

// save records a project's positions, written at the next write.
func (p *LogPositions) save(projectID, apiURL string, services map[string]savedCursor) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.projects[projectID] = savedProject{APIURL: apiIdentity(apiURL), Services: services}
	p.dirty = true
}

// Run writes the file every LogPositionsWriteEvery when it changed, until
// ctx ends.
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

// Close writes the file a last time; later saves are ignored. A nil
// LogPositions (no state file) does nothing.
func (p *LogPositions) Close() {
	if p == nil {
		return
	}
	p.write()
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
}

// write writes the file if it changed: to a temporary file in the same
// directory, synced, renamed over it, so that a crash leaves the old file
// or the new one, never a part.
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
	// After a successful rename there is nothing left to remove.
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
