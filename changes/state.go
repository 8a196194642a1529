package changes

import (
	"encoding/hex"
	"encoding/json"
	"io"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/safefile"
)

// The state file (the changes file's path + ".state") holds what the
// differs knew at the last save: after a restart, what changed while the
// exporter was down is emitted, with window_start at the last read before.
const stateVersion = 1

type savedState struct {
	Version  int                      `json:"version"`
	Shard    string                   `json:"shard"`
	Saved    time.Time                `json:"saved"`
	Cursor   uint64                   `json:"cursor"`
	Projects map[string]*savedProject `json:"projects"`
	// Restarts is each service's last restart seen in its log.
	Restarts []savedRestart `json:"restarts,omitempty"`
}

type savedProject struct {
	Services    savedList[svcFields]     `json:"services"`
	ReplicaSets savedList[rsFields]      `json:"replica_sets"`
	VPCs        savedList[vpcFields]     `json:"vpcs"`
	Peerings    savedList[peeringFields] `json:"peerings"`
	Key         *savedKey                `json:"api_key,omitempty"`
}

type savedList[F comparable] struct {
	Baselined bool            `json:"baselined"`
	Last      time.Time       `json:"last_complete_read"`
	Entries   []savedEntry[F] `json:"entries"`
}

type savedEntry[F comparable] struct {
	Parent string    `json:"parent,omitempty"`
	ID     string    `json:"id"`
	Name   string    `json:"name,omitempty"`
	Read   time.Time `json:"read"`
	Missed int       `json:"missed,omitempty"`
	Fields F         `json:"fields"`
}

type savedRestart struct {
	ProjectID string    `json:"project_id"`
	ServiceID string    `json:"service_id"`
	At        time.Time `json:"at"`
}

// savedKey keeps the public key's hash, never the key.
type savedKey struct {
	PublicSHA256 string    `json:"public_sha256"`
	Name         string    `json:"name"`
	Created      time.Time `json:"created"`
	Read         time.Time `json:"read"`
}

func (t *tracker[E, F, K]) save() savedList[F] {
	l := savedList[F]{Baselined: t.baselined, Last: t.last, Entries: make([]savedEntry[F], 0, len(t.ents))}
	for i := range t.ents {
		en := &t.ents[i]
		parent, id := en.k.ids()
		l.Entries = append(l.Entries, savedEntry[F]{Parent: parent, ID: id, Name: t.nameOf(en), Read: timeOf(en.read), Missed: int(en.missed), Fields: en.f})
	}
	return l
}

func (d *differ) save() *savedProject {
	p := &savedProject{Services: d.services.save(), ReplicaSets: d.replicaSets.save(), VPCs: d.vpcs.save(), Peerings: d.peerings.save()}
	if d.key.known {
		p.Key = &savedKey{PublicSHA256: hex.EncodeToString(d.key.public[:]), Name: d.key.name, Created: d.key.created, Read: d.key.read}
	}
	return p
}

// restoreKey sets the API key's state from its saved hash.
func (d *differ) restoreKey(k *savedKey) {
	if b, err := hex.DecodeString(k.PublicSHA256); err == nil && len(b) == len(d.key.public) {
		copy(d.key.public[:], b)
		d.key.known, d.key.name, d.key.created, d.key.read = true, k.Name, k.Created, k.Read
	}
}

// marshalStateLocked returns the state file's content. t.mu must be held.
func (t *Timeline) marshalStateLocked(shard string) ([]byte, error) {
	st := savedState{Version: stateVersion, Shard: shard, Saved: t.opts.Now().UTC(), Cursor: t.cursor, Projects: map[string]*savedProject{}}
	for id, d := range t.differs {
		st.Projects[id] = d.save()
	}
	for id, d := range t.restored {
		st.Projects[id] = d.save() // a project not running yet keeps its state
	}
	for k, at := range t.restarts {
		st.Restarts = append(st.Restarts, savedRestart{ProjectID: k.parent, ServiceID: k.id, At: at})
	}
	return json.Marshal(st)
}

// writeStateFile writes the state file whole (a new file renamed over the
// old), so that a crash leaves the old or the new.
func writeStateFile(path string, b []byte) error {
	return safefile.WriteAtomic(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// maxStateFile bounds the state file, checked before a byte is read. It
// is decoded one object at a time (see stateread.go) and holds about 200 B
// an object: the largest fleet supported, 100,000 services with their
// replica sets, VPCs and peerings, fits well under it.
const maxStateFile = 64 << 20
