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

	"github.com/clouddb/clouddb_exporter/internal/safefile"
)

// Bounds of the log state file (--state.file).
const (
	// MaxLogResume bounds the reads a position saved long ago costs.
	MaxLogResume           = time.Hour
	LogPositionsWriteEvery = 10 * time.Second
	// maxPositionsFile is checked (stat) before a byte is read: the file
	// takes about 210 bytes a service for the log positions and some 150
	// for the rightsizing windows (3.6 MB at 10,000 services, 36 MB at the
	// largest fleet supported, 100,000); the decoder holds one service's
	// value at a time, and the windows' section whole.
	maxPositionsFile = 64 << 20
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
	health *safefile.Health

	mu       sync.Mutex
	projects map[string]savedProject
	// sections are the other parts' state (statesections.go).
	sections map[string][]byte
	dirty    bool
	closed   bool
	failing  bool

	writeMu sync.Mutex
	// info is the file last read or written: another one found at the
	// path is checked before it is replaced. Guarded by writeMu.
	info os.FileInfo
	// stuck: a refused file could not be moved aside; nothing is written
	// over it. Guarded by writeMu once open.
	stuck bool
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
	st, err := os.Lstat(path)
	switch {
	case err == nil && st.IsDir():
		return fmt.Errorf("%s is a directory", path)
	case err == nil && st.Mode().IsRegular() && st.Size() > 0 && !isOurs(path):
		return notOurs(path)
	}
	return nil
}

func notOurs(path string) error {
	return fmt.Errorf("%s is not a log state file of this exporter (another program's file?): it is left as it is; point the flag at another path or move the file away", path)
}

// stateFileName is the log state file's state_file label.
const stateFileName = "logs"

// OpenLogPositions reads the state file at path: all of it or, with one
// WARN, none. A file refused (not a regular file, too large, corrupt, of
// another version) is moved aside at once, never overwritten. The error is
// for a path that cannot hold the file, and for another program's file,
// which the exporter never overwrites. health may be nil.
func OpenLogPositions(path string, logger *slog.Logger, health *safefile.Health) (*LogPositions, error) {
	if err := CheckLogPositions(path); err != nil {
		return nil, err
	}
	p := &LogPositions{path: path, logger: logger, health: health, projects: map[string]savedProject{}, sections: map[string][]byte{}}
	projects, sections, info, err := readPositions(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		logger.Info("No log state file yet: counting starts now", "file", path)
	case errors.Is(err, errNotOurs):
		return nil, notOurs(path)
	case err != nil:
		p.refuse(false, err)
		health.Start(stateFileName, false)
		return p, nil
	case len(projects) == 0:
		p.info, p.sections = info, sections
		logger.Info("Log state file empty: counting starts now", "file", path)
	default:
		p.projects, p.info, p.sections = projects, info, sections
		logger.Info("Log state file read: each project resumes from its positions when its log reader starts", "file", path, "projects", len(projects))
	}
	health.Start(stateFileName, true)
	return p, nil
}

// refuse moves the file at p.path aside with one WARN: it is kept for a
// look, and never overwritten.
// later: found at the path while running, not read at start.
func (p *LogPositions) refuse(later bool, reason error) {
	aside, err := safefile.MoveAside(p.path, time.Now())
	switch {
	case err != nil:
		p.logger.Warn("Log state file refused; it cannot be moved aside and is left as it is, unwritten", "file", p.path, "reason", reason, "err", err)
		p.stuck = true
		return
	case later:
		p.logger.Warn("A file that is not this exporter's log state file was put at its path; it is moved aside", "file", p.path, "reason", reason, "moved_to", aside)
	default:
		p.logger.Warn("Log state file refused: counting starts afresh; the file is moved aside", "file", p.path, "reason", reason, "moved_to", aside)
	}
	p.health.Refused(stateFileName)
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
	switch id := apiIdentity(apiURL); {
	case !ok:
		if len(p.projects) > 0 {
			p.logger.Info("The log state file holds no positions for this project: its counting starts now", "project_id", projectID, "file", p.path)
		}
		return nil
	case sp.apiURL != id:
		p.logger.Warn("Log state file refused for this project: its positions are another API's; counting starts afresh",
			"project_id", projectID, "saved_api_url", sp.apiURL, "api_url", id)
		return nil
	}
	p.logger.Info("Log counting resumes from the state file for the services it holds", "project_id", projectID, "saved_services", len(sp.services), "file", p.path)
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
	if !p.dirty || p.stuck {
		p.mu.Unlock()
		return
	}
	projects, sections := maps.Clone(p.projects), maps.Clone(p.sections)
	p.dirty = false
	p.mu.Unlock()
	if !p.keepForeign() {
		p.mu.Lock()
		p.dirty = true
		p.mu.Unlock()
		return
	}
	err := safefile.WriteAtomic(p.path, func(w io.Writer) error { return writePositions(w, projects, sections) })
	if err == nil {
		p.info, _ = safefile.Lstat(p.path)
	}
	p.health.Written(stateFileName, err, time.Now())
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

// keepForeign moves aside what was put at the path since the exporter read
// or wrote it, unless it is a state file of this exporter: another
// program's file, a symbolic link or a FIFO is kept, never replaced. False
// when it could not be moved: nothing is written over it.
func (p *LogPositions) keepForeign() bool {
	fi, err := safefile.Lstat(p.path)
	if err != nil || (p.info != nil && os.SameFile(fi, p.info)) || (fi.Mode().IsRegular() && (fi.Size() == 0 || isOurs(p.path))) {
		return true
	}
	p.refuse(true, errNotOurs)
	return !p.stuck
}
