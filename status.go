package main

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"net/http"
	"time"

	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/clouddb/clouddb_exporter/changes"
	"github.com/clouddb/clouddb_exporter/dataplane"
	"github.com/clouddb/clouddb_exporter/fleet"
)

//go:embed status.html
var statusHTML string

var statusTemplate = template.Must(template.New("status").Parse(statusHTML))

// statusPage is the landing page, from the last snapshots; it never calls the API.
type statusPage struct {
	snapshots func() []*fleet.Snapshot
	notReady  func() string
	links     []web.LandingLinks
	now       func() time.Time
	// dataPlane says whether a project's configuration enables a data-plane
	// part; nil: as the snapshot shows (its data is nil until the first read).
	dataPlane func(projectID, part string) bool
	// changes gives a project's latest changes, newest first; nil with --no-changes.
	changes func(projectID string, n int) []changes.Event
}

// statusChanges is how many changes a project lists.
const statusChanges = 50

type statusView struct {
	Version  string
	Links    []web.LandingLinks
	NotReady string
	Projects []projectView
}

type projectView struct {
	ID, Name        string
	Up              bool
	Access          string
	Taken, DataAge  string
	Budget, Refresh string
	Readers         []readerView
	OverBudget      bool
	Parts           []partView
	// ChangesOn: the timeline runs; Changes are its latest, in plain words.
	ChangesOn bool
	Changes   []string
}

// readerView is a data-plane reader's row: its title and whether it is on and has read.
type readerView struct{ Title, State string }

type partView struct {
	Name                             string
	Success                          bool
	LastSuccess, Duration, LastError string
}

func newStatusPage(p statusPage) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		view := statusView{Version: version.Info(), Links: p.links, NotReady: p.notReady()}
		now := p.now()
		for _, s := range p.snapshots() {
			v := projectOf(s, now)
			for _, part := range dataplane.Parts() {
				read := s.Data[part.Name] != nil
				on := read
				if p.dataPlane != nil {
					on = p.dataPlane(s.ProjectID, part.Name)
				}
				v.Readers = append(v.Readers, readerView{part.Title, readerState(on, read)})
			}
			if p.changes != nil {
				v.ChangesOn = true
				for _, e := range p.changes(s.ProjectID, statusChanges) {
					v.Changes = append(v.Changes, e.Describe())
				}
			}
			view.Projects = append(view.Projects, v)
		}
		var buf bytes.Buffer
		if err := statusTemplate.Execute(&buf, view); err != nil {
			http.Error(w, "Cannot render the status page", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(buf.Bytes())
	})
}

func projectOf(s *fleet.Snapshot, now time.Time) projectView {
	v := projectView{
		ID: s.ProjectID, Name: s.ProjectName, Up: s.Access.Up, Access: "up",
		Taken: s.Taken.UTC().Format(time.RFC3339), DataAge: age(now, s.Read),
	}
	switch {
	case !s.Access.Known:
		v.Access = "unknown: no services list answered yet"
	case !s.Access.Up:
		v.Access = "down: " + s.Access.Cause
	}
	v.Budget, v.Refresh = "not planned yet", ""
	if b := s.Budget; b.Needed > 0 {
		allowed := "no limit"
		if b.PerInterval >= 0 {
			allowed = fmt.Sprintf("%d allowed", b.PerInterval)
		}
		v.Budget = fmt.Sprintf("%d of %d calls per cycle (%s)", b.Planned, b.Needed, allowed)
		v.Refresh = b.RefreshPeriod.String()
		v.OverBudget = b.Planned < b.Needed
	}
	for _, p := range s.Parts {
		v.Parts = append(v.Parts, partView{
			Name: p.Name, Success: p.Success, LastSuccess: age(now, p.LastSuccess) + " ago",
			Duration: took(p.Duration), LastError: p.LastError,
		})
		if p.LastSuccess.IsZero() {
			v.Parts[len(v.Parts)-1].LastSuccess = "never"
		}
	}
	return v
}

func readerState(on, read bool) string {
	switch {
	case !on:
		return "off"
	case !read:
		return "on, nothing read yet"
	}
	return "on"
}

func took(d time.Duration) string {
	if d < time.Millisecond {
		return "<1ms"
	}
	return d.Round(time.Millisecond).String()
}

// "never" for the zero time.
func age(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return max(now.Sub(t), 0).Round(time.Second).String()
}
