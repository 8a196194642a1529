package changes

import (
	"strings"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// ReadyMessage is what a PostgreSQL log entry says when the database has
// (re)started: the log reader's entries holding it are restarted events.
const ReadyMessage = "database system is ready to accept connections"

// ObserveRestart records that a service's log said, at at, that the
// database is ready to accept connections: a restarted event dated by the
// entry (effective_time), once per entry however often it is read.
func (t *Timeline) ObserveRestart(projectID, serviceID string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := key{parent: projectID, id: serviceID}
	if last, ok := t.restarts[k]; ok && !at.After(last) {
		return
	}
	t.restarts[k] = at
	name := ""
	if d := t.differs[projectID]; d != nil {
		if n := d.services.find(idKey(serviceID)); n >= 0 {
			name = d.services.nameOf(&d.services.ents[n])
		}
	}
	t.recordLocked(Event{ProjectID: projectID, ObjectType: TypeService, ObjectID: serviceID, ObjectName: name,
		EffectiveTime: timePtr(at), Kind: KindRestarted, Source: SourceLogs,
		After: Fields{"ready_at": at.UTC().Format(time.RFC3339Nano)}})
}

// ObserveLogEntries looks for restarts in a page of a service's log entries.
func (t *Timeline) ObserveLogEntries(projectID, serviceID string, entries []apiclient.LogEntry) {
	for i := range entries {
		if e := &entries[i]; !e.Timestamp.IsZero() && strings.Contains(e.Message, ReadyMessage) {
			t.ObserveRestart(projectID, serviceID, e.Timestamp.Time)
		}
	}
}
