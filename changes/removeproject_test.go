package changes

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/clouddb/clouddb_exporter/fleet"
)

type nopPublisher struct{}

func (nopPublisher) SetSnapshot(*fleet.Snapshot) {}
func (nopPublisher) RemoveProject(string)        {}

// A project that stops being polled takes its series with it, as every
// family's do; its removed event stays on the feed.
func TestRemovedProjectLeavesNoSeries(t *testing.T) {
	tl := New(Options{})
	tl.SetProjects([]string{"kept", "gone"})
	tl.metrics.addProject("kept")
	tl.metrics.addProject("gone")
	tl.metrics.count(&Event{ProjectID: "gone", ObjectType: TypeService, ObjectID: "svc", Kind: KindRenamed})

	tl.Wrap(nopPublisher{}).RemoveProject("gone")
	tl.SetProjects([]string{"kept"})

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(tl)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var kept int
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "project_id" && l.GetValue() == "gone" {
					t.Errorf("%s has a series of the removed project: %v", f.GetName(), m.GetLabel())
				}
				if l.GetName() == "project_id" && l.GetValue() == "kept" {
					kept++
				}
			}
		}
	}
	if kept == 0 {
		t.Error("the running project lost its series")
	}
	if n := testutil.CollectAndCount(tl, "clouddb_changes_total"); n != kept {
		t.Errorf("clouddb_changes_total: %d series, want the running project's %d", n, kept)
	}
	_, events, _ := feed(t, tl, "?kind=removed")
	if len(events) != 1 || events[0].ProjectID != "gone" || !strings.EqualFold(events[0].ObjectType, TypeProject) {
		t.Errorf("feed: %+v, want the project's removed event", events)
	}
}
