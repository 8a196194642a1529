package changes

import (
	"encoding/json"
	"math"
	"strings"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// none is a number the API left out (a shared service's size, no HA).
const none = -1

// Bits of a field set's unknown mask: a field that did not decode is never
// compared, so a bad value is not taken for a change.
const (
	unkStatus = 1 << iota
	unkName
	unkEnv
	unkSize
	unkHA
	unkPooler
	unkVPC
	unkNodes
)

// svcFields is what a service's events compare; comparable, no pointers, so
// that keeping it costs no allocation.
type svcFields struct {
	Name, Status, Env, VPC string
	CPU, Mem, Replicas     num32
	Sync                   num32
	Pooler                 bool
	Unknown                uint16 `json:",omitempty"`
}

// num32 is a size the API gave (millicores, GB, nodes, replicas) in 32
// bits: one beyond them, no size the API could mean, is held as the
// nearest they hold.
type num32 int32

func toNum32(n int64) num32 {
	return num32(max(math.MinInt32, min(n, math.MaxInt32)))
}

// UnmarshalJSON reads the state of a version that kept 64 bits.
func (n *num32) UnmarshalJSON(b []byte) error {
	var v int64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*n = toNum32(v)
	return nil
}

func num(i *apiclient.Int) num32 {
	if i == nil {
		return none
	}
	return toNum32(int64(*i))
}

// droppedMask maps each field that did not decode to its bit.
func droppedMask(dropped []apiclient.FieldError, prefixes map[string]uint16) uint16 {
	var m uint16
	for _, e := range dropped {
		for p, bit := range prefixes {
			if strings.HasPrefix(e.Field, p) {
				m |= bit
			}
		}
	}
	return m
}

var svcDropped = map[string]uint16{
	"status": unkStatus, "name": unkName, "metadata": unkEnv, "resources": unkSize,
	"ha_replicas": unkHA, "connection_pooler": unkPooler, "vpc_endpoint": unkVPC, "vpcEndpoint": unkVPC,
}

func serviceFields(s *apiclient.Service) svcFields {
	f := svcFields{Name: s.Name, Status: s.Status, Env: s.Environment(), CPU: none, Mem: none, Replicas: none, Sync: none,
		Pooler: s.ConnectionPooler != nil}
	if len(s.Resources) > 0 && s.Resources[0].Spec != nil {
		f.CPU, f.Mem = num(s.Resources[0].Spec.CPUMillis), num(s.Resources[0].Spec.MemoryGBs)
	}
	if s.HAReplicas != nil {
		f.Replicas, f.Sync = num(s.HAReplicas.ReplicaCount), num(s.HAReplicas.SyncReplicaCount)
	}
	if v := s.VPCAddress(); v != nil {
		f.VPC = v.VPCID
	}
	if len(s.Dropped) > 0 {
		f.Unknown = droppedMask(s.Dropped, svcDropped)
	}
	return f
}

// change is one event a comparison found, before its envelope.
type change struct {
	kind          string
	before, after Fields
}

// emit receives the changes of one comparison.
type emit func(change)

// known reports whether a group of fields is known on both sides.
func known(a, b, bits uint16) bool { return (a|b)&bits == 0 }

func numField(n num32) any {
	if n == none {
		return nil
	}
	return int64(n)
}

func diffService(a, b *svcFields, out emit) {
	if a.Status != b.Status && known(a.Unknown, b.Unknown, unkStatus) {
		out(change{KindStatusChanged, Fields{"status": a.Status}, Fields{"status": b.Status}})
	}
	if (a.CPU != b.CPU || a.Mem != b.Mem) && known(a.Unknown, b.Unknown, unkSize) {
		out(change{KindResized, Fields{"cpu_millis": numField(a.CPU), "memory_gbs": numField(a.Mem)},
			Fields{"cpu_millis": numField(b.CPU), "memory_gbs": numField(b.Mem)}})
	}
	if (a.Replicas != b.Replicas || a.Sync != b.Sync) && known(a.Unknown, b.Unknown, unkHA) {
		out(change{KindHAChanged, Fields{"replica_count": numField(a.Replicas), "sync_replica_count": numField(a.Sync)},
			Fields{"replica_count": numField(b.Replicas), "sync_replica_count": numField(b.Sync)}})
	}
	diffPooler(a.Pooler, b.Pooler, known(a.Unknown, b.Unknown, unkPooler), out)
	if a.VPC != b.VPC && known(a.Unknown, b.Unknown, unkVPC) {
		if a.VPC != "" {
			out(change{KindVPCDetached, Fields{"vpc_id": a.VPC}, nil})
		}
		if b.VPC != "" {
			out(change{KindVPCAttached, nil, Fields{"vpc_id": b.VPC}})
		}
	}
	diffEnvName(a.Env, b.Env, a.Name, b.Name, a.Unknown, b.Unknown, out)
}

func diffPooler(a, b, ok bool, out emit) {
	switch {
	case !ok || a == b:
	case b:
		out(change{KindPoolerEnabled, Fields{"connection_pooler": false}, Fields{"connection_pooler": true}})
	default:
		out(change{KindPoolerDisabled, Fields{"connection_pooler": true}, Fields{"connection_pooler": false}})
	}
}

func diffEnvName(envA, envB, nameA, nameB string, unkA, unkB uint16, out emit) {
	if envA != envB && known(unkA, unkB, unkEnv) {
		out(change{KindEnvironmentChanged, Fields{"environment": envA}, Fields{"environment": envB}})
	}
	if nameA != nameB && known(unkA, unkB, unkName) {
		out(change{KindRenamed, Fields{"name": nameA}, Fields{"name": nameB}})
	}
}

// keep returns b with a's value for each group b does not know: the next
// comparison is then with the last value that decoded.
func (b svcFields) keep(a svcFields) svcFields {
	u := b.Unknown &^ a.Unknown
	if u&unkStatus != 0 {
		b.Status = a.Status
	}
	if u&unkName != 0 {
		b.Name = a.Name
	}
	if u&unkEnv != 0 {
		b.Env = a.Env
	}
	if u&unkSize != 0 {
		b.CPU, b.Mem = a.CPU, a.Mem
	}
	if u&unkHA != 0 {
		b.Replicas, b.Sync = a.Replicas, a.Sync
	}
	if u&unkPooler != 0 {
		b.Pooler = a.Pooler
	}
	if u&unkVPC != 0 {
		b.VPC = a.VPC
	}
	b.Unknown &= a.Unknown
	return b
}

// rsFields is what a replica set's events compare.
type rsFields struct {
	Name, Status, Env string
	Nodes, CPU, Mem   num32
	Pooler            bool
	Unknown           uint16 `json:",omitempty"`
}

var rsDropped = map[string]uint16{
	"status": unkStatus, "name": unkName, "metadata": unkEnv, "cpu_millis": unkSize, "memory_gbs": unkSize,
	"nodes": unkNodes, "connection_pooler": unkPooler,
}

func replicaSetFields(r *apiclient.ReplicaSet) rsFields {
	f := rsFields{Name: r.Name, Status: r.Status, Env: r.Environment(), Nodes: toNum32(int64(r.Nodes)), CPU: toNum32(int64(r.CPUMillis)),
		Mem: toNum32(int64(r.MemoryGBs)), Pooler: r.ConnectionPooler != nil}
	if len(r.Dropped) > 0 {
		f.Unknown = droppedMask(r.Dropped, rsDropped)
	}
	return f
}

func diffReplicaSet(a, b *rsFields, out emit) {
	if a.Status != b.Status && known(a.Unknown, b.Unknown, unkStatus) {
		out(change{KindStatusChanged, Fields{"status": a.Status}, Fields{"status": b.Status}})
	}
	if (a.Nodes != b.Nodes || a.CPU != b.CPU || a.Mem != b.Mem) && known(a.Unknown, b.Unknown, unkSize|unkNodes) {
		out(change{KindResized, Fields{"nodes": int64(a.Nodes), "cpu_millis": int64(a.CPU), "memory_gbs": int64(a.Mem)},
			Fields{"nodes": int64(b.Nodes), "cpu_millis": int64(b.CPU), "memory_gbs": int64(b.Mem)}})
	}
	diffPooler(a.Pooler, b.Pooler, known(a.Unknown, b.Unknown, unkPooler), out)
	diffEnvName(a.Env, b.Env, a.Name, b.Name, a.Unknown, b.Unknown, out)
}

func (b rsFields) keep(a rsFields) rsFields {
	u := b.Unknown &^ a.Unknown
	if u&unkStatus != 0 {
		b.Status = a.Status
	}
	if u&unkName != 0 {
		b.Name = a.Name
	}
	if u&unkEnv != 0 {
		b.Env = a.Env
	}
	if u&(unkSize|unkNodes) != 0 {
		b.Nodes, b.CPU, b.Mem = a.Nodes, a.CPU, a.Mem
	}
	if u&unkPooler != 0 {
		b.Pooler = a.Pooler
	}
	b.Unknown &= a.Unknown
	return b
}

// vpcFields: a VPC keeps no record of a field that did not decode (it reads
// ""), so an empty name is taken as unknown rather than as a rename.
type vpcFields struct{ Name string }

func diffVPC(a, b *vpcFields, out emit) {
	if a.Name != b.Name && a.Name != "" && b.Name != "" {
		out(change{KindRenamed, Fields{"name": a.Name}, Fields{"name": b.Name}})
	}
}

func (b vpcFields) keep(a vpcFields) vpcFields {
	if b.Name == "" {
		b.Name = a.Name
	}
	return b
}

// peeringFields: the error message is free text, kept in the event only.
// Peer, the peer VPC's id, is the peering's name: the state file keeps it
// as the name, and keep carries it over so that it is never compared.
type peeringFields struct {
	Status, Error string
	Unknown       uint16 `json:",omitempty"`
	Peer          string `json:"-"`
}

func peeringFieldsOf(p *apiclient.Peering) peeringFields {
	f := peeringFields{Status: p.Status, Peer: p.PeerVPCID}
	if p.ErrorMessage != nil {
		f.Error = *p.ErrorMessage
	}
	if len(p.Dropped) > 0 {
		f.Unknown = droppedMask(p.Dropped, map[string]uint16{"status": unkStatus, "error_message": unkStatus})
	}
	return f
}

func diffPeering(a, b *peeringFields, out emit) {
	if (a.Status != b.Status || a.Error != b.Error) && known(a.Unknown, b.Unknown, unkStatus) {
		out(change{KindStatusChanged, Fields{"status": a.Status, "error_message": a.Error}, Fields{"status": b.Status, "error_message": b.Error}})
	}
}

func (b peeringFields) keep(a peeringFields) peeringFields {
	b.Peer = a.Peer
	if b.Unknown&^a.Unknown != 0 {
		b.Status, b.Error = a.Status, a.Error
	}
	b.Unknown &= a.Unknown
	return b
}
