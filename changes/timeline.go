package changes

import (
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/safefile"
)

// Publisher receives the running projects' snapshots (projects.Publisher).
type Publisher interface {
	SetSnapshot(s *fleet.Snapshot)
	RemoveProject(projectID string)
}

// Options configure a Timeline.
type Options struct {
	// Retention and MaxEvents bound the ring: an event leaves it when older
	// than Retention or when MaxEvents newer ones follow it.
	Retention time.Duration
	MaxEvents int
	Logger    *slog.Logger
	Now       func() time.Time
	// ActorWindow is how long after an admin write a change of its object
	// is attributed to the write's caller.
	ActorWindow time.Duration
}

// Defaults of Options.
const (
	DefaultRetention   = 24 * time.Hour
	DefaultMaxEvents   = 10000
	DefaultActorWindow = 15 * time.Minute
)

// Timeline derives events from the snapshots it is handed and keeps them.
// Its methods are safe for concurrent use.
type Timeline struct {
	opts    Options
	logger  *slog.Logger
	metrics *metrics

	mu      sync.Mutex
	differs map[string]*differ
	ring    ring
	cursor  uint64
	// projects is the set of running projects, nil before the first
	// non-empty one (the baseline).
	projects map[string]bool
	writes   map[key]write
	// restarts is each service's last restart seen in its log, by project.
	restarts map[key]time.Time
	file     *fileWriter
	health   *safefile.Health
	// statePath is where the state is saved ("" without a file), by shard.
	statePath, shard string
	// freshAPI: the saved state is not compared with the API (--simulate).
	freshAPI bool
	sink     *Sink
	// dirty: a complete read changed what the state file should hold.
	dirty bool
	// saving serialises the state's saves, which write outside mu;
	// writeState is writeStateFile but in tests.
	saving     sync.Mutex
	writeState func(path string, b []byte) error
	// restored holds the differs read from the state file, used once.
	restored map[string]*differ
}

// write is an admin write, remembered to name the actor of what follows it.
type write struct {
	actor string
	until time.Time
}

// New returns a Timeline.
func New(opts Options) *Timeline {
	if opts.Retention <= 0 {
		opts.Retention = DefaultRetention
	}
	if opts.MaxEvents <= 0 {
		opts.MaxEvents = DefaultMaxEvents
	}
	if opts.ActorWindow <= 0 {
		opts.ActorWindow = DefaultActorWindow
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Timeline{
		opts:    opts,
		logger:  opts.Logger,
		metrics: newMetrics(),
		differs: map[string]*differ{},
		ring:    ring{maxAge: opts.Retention, max: opts.MaxEvents},
		writes:  map[key]write{},

		restarts: map[key]time.Time{},

		writeState: writeStateFile,
	}
}

// Wrap returns a Publisher that hands each snapshot to next, then to t.
func (t *Timeline) Wrap(next Publisher) Publisher { return wrapped{next: next, t: t} }

type wrapped struct {
	next Publisher
	t    *Timeline
}

func (w wrapped) SetSnapshot(s *fleet.Snapshot) {
	w.next.SetSnapshot(s)
	w.t.Observe(s)
}

// RemoveProject drops the project's change series first, so that the
// exposition's removal, which gathers the self-metrics again, sees them gone.
func (w wrapped) RemoveProject(id string) {
	w.t.removeProject(id)
	w.next.RemoveProject(id)
}

// Observe compares s with the project's previous snapshots and records what changed.
func (t *Timeline) Observe(s *fleet.Snapshot) {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.differs[s.ProjectID]
	if d == nil {
		d = t.restored[s.ProjectID]
		delete(t.restored, s.ProjectID)
		if d == nil {
			d = newDiffer(s.ProjectID)
		}
		t.differs[s.ProjectID] = d
		t.metrics.addProject(s.ProjectID)
	}
	lists := d.completeReads()
	events := d.observe(s)
	if d.completeReads() != lists {
		t.dirty = true
	}
	for i := range events {
		e := events[i]
		e.Time = s.Taken.UTC()
		t.recordLocked(e)
	}
}

// recordLocked numbers e, names its actor and keeps it. t.mu must be held.
func (t *Timeline) recordLocked(e Event) {
	if e.Time.IsZero() {
		e.Time = t.opts.Now().UTC()
	}
	t.attribute(&e)
	e.identify()
	t.cursor++
	e.Cursor = t.cursor
	t.ring.expire(e.Time)
	if n := t.ring.add(e); n > 0 {
		t.metrics.dropped(reasonRing, n)
	}
	t.metrics.count(&e)
	t.dirty = true
	if t.file != nil {
		t.file.enqueue(e)
	}
	if t.sink != nil {
		t.sink.enqueue(e)
	}
}

// attribute names the caller of an admin write that the change follows.
func (t *Timeline) attribute(e *Event) {
	for _, k := range []key{{parent: e.ProjectID, id: e.ObjectID}, {parent: e.ProjectID, id: e.ParentID}} {
		if k.id == "" {
			continue
		}
		if w, ok := t.writes[k]; ok && !e.Time.After(w.until) {
			e.Actor, e.Source = w.actor, SourceAdmin
			return
		}
	}
}

// ObserveWrite remembers that caller wrote to objects of a project through
// the admin surface: a change of one of them that follows is theirs.
func (t *Timeline) ObserveWrite(projectID string, objectIDs []string, caller string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.opts.Now()
	for k, w := range t.writes {
		if now.After(w.until) {
			delete(t.writes, k)
		}
	}
	for _, id := range objectIDs {
		if id != "" {
			t.writes[key{parent: projectID, id: id}] = write{actor: caller, until: now.Add(t.opts.ActorWindow)}
		}
	}
}

// SetProjects records the running projects after a (re)load: projects that
// come or go after the first non-empty set are added or removed events.
func (t *Timeline) SetProjects(ids []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.projects == nil {
		if len(ids) > 0 {
			t.projects = map[string]bool{}
			for _, id := range ids {
				t.projects[id] = true
			}
		}
		return
	}
	for _, id := range ids {
		if !t.projects[id] {
			t.projects[id] = true
			t.recordLocked(Event{ProjectID: id, ObjectType: TypeProject, ObjectID: id, Kind: KindAdded, Source: SourcePoll})
		}
	}
	for _, id := range slicesSorted(t.projects) {
		if !slices.Contains(ids, id) {
			delete(t.projects, id)
			t.recordLocked(Event{ProjectID: id, ObjectType: TypeProject, ObjectID: id, Kind: KindRemoved, Source: SourcePoll})
		}
	}
}

func (t *Timeline) removeProject(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.differs, id)
	t.metrics.removeProject(id)
	t.dirty = true
}

// events returns what q selects, oldest first, and the cursors of the
// oldest and newest events kept.
func (t *Timeline) events(q Query) (events []Event, first, last uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ring.expire(t.opts.Now())
	first, last = t.ring.bounds()
	return t.ring.query(q), first, last
}

// Latest returns up to n events of a project, newest first.
func (t *Timeline) Latest(projectID string, n int) []Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ring.expire(t.opts.Now())
	return t.ring.latest(projectID, n)
}
