// Package changes derives the fleet's change history from successive
// snapshots: a differ per project, a bounded ring served as a feed, an
// optional durable file and sink, and the change metrics. The API has no
// events: everything here is what two complete reads of an object disagree on.
package changes

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// Object types.
const (
	TypeService    = "service"
	TypeReplicaSet = "replica_set"
	TypeVPC        = "vpc"
	TypePeering    = "peering"
	TypeAPIKey     = "api_key"
	TypeProject    = "project"
)

// Kinds.
const (
	KindCreated            = "created"
	KindDeleted            = "deleted"
	KindStatusChanged      = "status_changed"
	KindResized            = "resized"
	KindHAChanged          = "ha_changed"
	KindPoolerEnabled      = "pooler_enabled"
	KindPoolerDisabled     = "pooler_disabled"
	KindVPCAttached        = "vpc_attached"
	KindVPCDetached        = "vpc_detached"
	KindEnvironmentChanged = "environment_changed"
	KindRenamed            = "renamed"
	KindRestarted          = "restarted"
	KindRotated            = "rotated"
	KindAdded              = "added"
	KindRemoved            = "removed"
)

// Sources.
const (
	SourcePoll  = "poll"
	SourceLogs  = "logs"
	SourceAdmin = "admin"
)

// KindsOf lists the kinds of each object type, in a fixed order.
var KindsOf = []struct {
	Type  string
	Kinds []string
}{
	{TypeService, []string{KindCreated, KindDeleted, KindStatusChanged, KindResized, KindHAChanged, KindPoolerEnabled, KindPoolerDisabled,
		KindVPCAttached, KindVPCDetached, KindEnvironmentChanged, KindRenamed, KindRestarted}},
	{TypeReplicaSet, []string{KindCreated, KindDeleted, KindStatusChanged, KindResized, KindPoolerEnabled, KindPoolerDisabled,
		KindEnvironmentChanged, KindRenamed}},
	{TypeVPC, []string{KindCreated, KindDeleted, KindRenamed}},
	{TypePeering, []string{KindCreated, KindDeleted, KindStatusChanged}},
	{TypeAPIKey, []string{KindRotated}},
	{TypeProject, []string{KindAdded, KindRemoved}},
}

// knownKind reports whether kind is a kind of any object type.
func knownKind(kind string) bool {
	for _, t := range KindsOf {
		for _, k := range t.Kinds {
			if k == kind {
				return true
			}
		}
	}
	return false
}

// Fields are an event's before or after: the changed fields only.
type Fields map[string]any

// Event is one change. Times are pointers so that an unknown one is left out.
type Event struct {
	Cursor        uint64     `json:"cursor"`
	ID            string     `json:"id"`
	Time          time.Time  `json:"time"`
	WindowStart   *time.Time `json:"window_start,omitempty"`
	EffectiveTime *time.Time `json:"effective_time,omitempty"`
	ProjectID     string     `json:"project_id"`
	ObjectType    string     `json:"object_type"`
	ObjectID      string     `json:"object_id"`
	ObjectName    string     `json:"object_name,omitempty"`
	ParentID      string     `json:"parent_id,omitempty"`
	Kind          string     `json:"kind"`
	Before        Fields     `json:"before,omitempty"`
	After         Fields     `json:"after,omitempty"`
	Source        string     `json:"source"`
	Actor         string     `json:"actor,omitempty"`
}

// identify sets e.ID from what two exporters watching one project agree on:
// the project, the object, the kind, before and after (encoding/json sorts
// map keys, so the encoding is canonical).
func (e *Event) identify() {
	h := sha256.New()
	before, _ := json.Marshal(e.Before)
	after, _ := json.Marshal(e.After)
	for _, part := range [][]byte{[]byte(e.ProjectID), []byte(e.ObjectType), []byte(e.ObjectID), []byte(e.Kind), before, after} {
		h.Write(part)
		h.Write([]byte{0})
	}
	e.ID = hex.EncodeToString(h.Sum(nil)[:16])
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}
