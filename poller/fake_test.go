package poller

import (
	"context"
	"fmt"
	"sync"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// fakeClient is an in-memory API with per-call failures and call counts.
type fakeClient struct {
	mu          sync.Mutex
	apiKey      bool
	services    []apiclient.Service
	replicaSets map[string][]apiclient.ReplicaSet
	vpcs        []apiclient.VPC
	peerings    map[string][]apiclient.Peering
	// fail maps "operation" or "operation/id" to the error to return.
	fail  map[string]error
	calls map[string]int
	// asked counts the calls by "operation/id".
	asked map[string]int
	// hang lists the services whose replica sets never answer.
	hang map[string]bool
	// inline makes service answers carry read_replica_sets (revision 2026).
	inline bool
	// onCall, when set, runs at each call, before it answers.
	onCall func(op string)
	// cutList, when positive, cuts the services list after that many
	// services: the call fails with errBoom, as an answer cut short does.
	cutList int
}

// withInline returns svc as the API shows it: with its replica sets inline
// when f.inline. f.mu is held.
func (f *fakeClient) withInline(svc apiclient.Service) apiclient.Service {
	if f.inline {
		svc.ReadReplicaSets = append([]apiclient.ReplicaSet{}, f.replicaSets[svc.ServiceID]...)
	}
	return svc
}

func newFakeClient() *fakeClient {
	return &fakeClient{
		replicaSets: map[string][]apiclient.ReplicaSet{},
		peerings:    map[string][]apiclient.Peering{},
		fail:        map[string]error{},
		calls:       map[string]int{},
		asked:       map[string]int{},
		hang:        map[string]bool{},
	}
}

var errBoom = &apiclient.APIError{StatusCode: 500, Code: "INTERNAL_ERROR", Message: "boom"}
var errNotFound = &apiclient.APIError{StatusCode: 404, Code: "NOT_FOUND", Message: "not found"}

func (f *fakeClient) call(op, id string) error {
	if f.onCall != nil {
		f.onCall(op)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[op]++
	f.asked[op+"/"+id]++
	if err := f.fail[op+"/"+id]; err != nil {
		return err
	}
	return f.fail[op]
}

func (f *fakeClient) count(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

func (f *fakeClient) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		n += c
	}
	return n
}

func (f *fakeClient) resetCalls() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = map[string]int{}
	f.asked = map[string]int{}
}

func (f *fakeClient) countOf(op, id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asked[op+"/"+id]
}

func (f *fakeClient) set(fn func(f *fakeClient)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeClient) ProjectID() string   { return "p1" }
func (f *fakeClient) ReadsAuthInfo() bool { return f.apiKey }

func (f *fakeClient) GetAuthInfo(context.Context) (*apiclient.AuthInfo, error) {
	if err := f.call(apiclient.OpGetAuthInfo, ""); err != nil {
		return nil, err
	}
	return &apiclient.AuthInfo{Type: "apiKey", APIKey: &apiclient.APIKeyInfo{Name: "k", PublicKey: "pk"}}, nil
}

func (f *fakeClient) StreamServices(_ context.Context, begin func(), each func(*apiclient.Service)) error {
	if err := f.call(apiclient.OpListServices, ""); err != nil {
		return err
	}
	f.mu.Lock()
	out := make([]apiclient.Service, len(f.services))
	for i, svc := range f.services {
		out[i] = f.withInline(svc)
	}
	cut := f.cutList
	f.mu.Unlock()
	begin()
	for i := range out {
		if cut > 0 && i == cut {
			return errBoom
		}
		each(&out[i])
	}
	return nil
}

func (f *fakeClient) GetService(_ context.Context, id string) (*apiclient.Service, error) {
	if err := f.call(apiclient.OpGetService, id); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.services {
		if s.ServiceID == id {
			s = f.withInline(s)
			return &s, nil
		}
	}
	return nil, errNotFound
}

func (f *fakeClient) ListReplicaSets(ctx context.Context, serviceID string) ([]apiclient.ReplicaSet, error) {
	if err := f.call(apiclient.OpListReplicaSets, serviceID); err != nil {
		return nil, err
	}
	f.mu.Lock()
	hang := f.hang[serviceID]
	f.mu.Unlock()
	if hang {
		<-ctx.Done() // a call that never answers: only the caller's deadline ends it
		return nil, ctx.Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]apiclient.ReplicaSet(nil), f.replicaSets[serviceID]...), nil
}

func (f *fakeClient) ListVPCs(context.Context) ([]apiclient.VPC, error) {
	if err := f.call(apiclient.OpListVPCs, ""); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]apiclient.VPC(nil), f.vpcs...), nil
}

func (f *fakeClient) GetVPC(_ context.Context, id string) (*apiclient.VPC, error) {
	if err := f.call(apiclient.OpGetVPC, id); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, v := range f.vpcs {
		if v.ID == id {
			return &v, nil
		}
	}
	return nil, errNotFound
}

func (f *fakeClient) ListPeerings(_ context.Context, vpcID string) ([]apiclient.Peering, error) {
	if err := f.call(apiclient.OpListPeerings, vpcID); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]apiclient.Peering(nil), f.peerings[vpcID]...), nil
}

func (f *fakeClient) GetPeering(_ context.Context, vpcID, id string) (*apiclient.Peering, error) {
	if err := f.call(apiclient.OpGetPeering, id); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.peerings[vpcID] {
		if p.ID == id {
			return &p, nil
		}
	}
	return nil, errNotFound
}

// fleetOf fills f with n services (one replica set each) and v VPCs (one
// peering each), all settled.
func fleetOf(f *fakeClient, n, v int) {
	for i := range n {
		id := fmt.Sprintf("svc%02d", i)
		f.services = append(f.services, apiclient.Service{ServiceID: id, Name: id, Status: apiclient.ServiceReady})
		f.replicaSets[id] = []apiclient.ReplicaSet{{ID: "rs-" + id, Status: apiclient.ReplicaSetActive, Nodes: 1}}
	}
	for i := range v {
		id := fmt.Sprintf("vpc%02d", i)
		f.vpcs = append(f.vpcs, apiclient.VPC{ID: id, Name: id})
		f.peerings[id] = []apiclient.Peering{{ID: "pr-" + id, Status: apiclient.PeeringActive}}
	}
}
