package admin

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// Resource kinds, for refreshing and tracking.
const (
	kindService    = "service"
	kindReplicaSet = "replica_set"
	kindVPC        = "vpc"
	kindPeering    = "peering"
)

// Path value names.
const (
	idProject    = "project_id"
	idService    = "service_id"
	idReplicaSet = "replica_set_id"
	idVPC        = "vpc_id"
	idPeering    = "peering_id"
)

// endpoint is one write operation of the admin surface. Its route, success
// status and asynchrony come from the operation's entry in the API's
// catalog (apiclient.Catalog): the route is the upstream method and path
// under /api/v1. What the catalog cannot know is here: idempotency, the
// PROD guard, the body's validation, the call and the resource it affects.
type endpoint struct {
	op string
	// api is op's catalog entry and ids its path value names after
	// project_id, in path order; bind fills both.
	api apiclient.Operation
	ids []string
	// idempotent operations accept an Idempotency-Key.
	idempotent bool
	// guard, when set, is the PROD confirmation the operation needs.
	guard *prodGuard
	// optIn operations lose data, lock people out or hand out a password:
	// they are refused unless --admin.allow names them.
	optIn bool
	// secret, when set, returns the secret a request's body carries, kept
	// out of the API's error text, which may echo it.
	secret func(body any) string
	// answersSecret operations may answer with a password: the answer is
	// kept out of caches.
	answersSecret bool
	// decode validates the body and returns the typed upstream body, nil
	// for operations that take none.
	decode func(raw []byte) (any, error)
	// call runs the upstream operation and returns its typed answer, nil
	// for operations answered without a body.
	call func(ctx context.Context, c *apiclient.Client, ids ids, body any) (any, error)
	// target tells which resource to refresh and, for asynchronous
	// operations, how it settles.
	target func(ids ids, result any) target
	// example is the request the generic tests make on the simulator's
	// demo fleet, so that a new write needs no hand-written test case.
	example Example
}

// Example is a write operation's valid and invalid request on the
// simulator's demo fleet (cloudsim's LoadDemo): the generic tests of every
// write make it, here and in the contract and whole-binary tests.
type Example struct {
	// On names the demo resource the path addresses: a service, replica
	// set or VPC, or the VPC whose first peering it addresses.
	On string
	// Body is valid ({vpc:NAME} stands for that demo VPC's id); Bad is
	// refused with a 400 that names BadField.
	Body, Bad, BadField string
	// Status, when set, is the API's answer on a fresh demo fleet instead
	// of the operation's success.
	Status int
}

var demoVPCRef = regexp.MustCompile(`\{vpc:([\w-]+)\}`)

// Demo holds the ids of a demo fleet's resources by name.
type Demo struct {
	Services    map[string]string
	ReplicaSets map[string][2]string // service id, replica set id
	VPCs        map[string]string
	Peerings    map[string][]string // by VPC name
}

// Request returns the example's path below /api/v1 and its body on a demo
// fleet of the project.
func (x Example) Request(o apiclient.Operation, projectID string, d Demo) (path, body string, err error) {
	v := ids{idProject: projectID}
	rs := d.ReplicaSets[x.On]
	v[idService], v[idReplicaSet] = cmp.Or(rs[0], d.Services[x.On]), rs[1]
	v[idVPC] = d.VPCs[x.On]
	if p := d.Peerings[x.On]; len(p) > 0 {
		v[idPeering] = p[0]
	}
	for _, name := range o.IDs() {
		if v[name] == "" {
			return "", "", fmt.Errorf("the example of %s names no demo resource for {%s}: %q", o.Name, name, x.On)
		}
	}
	body = demoVPCRef.ReplaceAllStringFunc(x.Body, func(ref string) string {
		return d.VPCs[demoVPCRef.FindStringSubmatch(ref)[1]]
	})
	e := endpoint{api: o}
	return e.upstreamPath(v), body, nil
}

// Examples returns every write operation's example, by name.
func Examples() map[string]Example {
	out := map[string]Example{}
	for _, e := range endpoints() {
		out[e.op] = e.example
	}
	return out
}

// prodGuard is the confirmation an operation that loses data or breaks a
// PROD resource needs: ?confirm=<the resource's id>, unless the resource's
// environment, read fresh just before the write, is DEV.
type prodGuard struct {
	// verb says what the operation does to the resource, for messages:
	// "delete it".
	verb string
	// applies tells whether a request's decoded body calls for the
	// confirmation; nil means every request does.
	applies func(body any) bool
}

// secretOf returns the secret of a request's body, "" for none.
func (e *endpoint) secretOf(body any) string {
	if e.secret == nil {
		return ""
	}
	return e.secret(body)
}

// guardAlways guards every request of an operation.
func guardAlways(verb string) *prodGuard { return &prodGuard{verb: verb} }

// guards reports whether the endpoint's guard applies to a request with
// this decoded body.
func (e *endpoint) guards(body any) bool {
	return e.guard != nil && (e.guard.applies == nil || e.guard.applies(body))
}

// guardToDev guards a switch to DEV: the delete's guard would otherwise be
// bypassed by switching a PROD resource to DEV first. DEV to DEV passes
// the guard on its fresh read; a switch to PROD needs nothing.
var guardToDev = &prodGuard{verb: "switch it to " + apiclient.EnvironmentDev, applies: func(body any) bool {
	req, ok := body.(apiclient.SetEnvironmentRequest)
	return ok && req.Environment == apiclient.EnvironmentDev
}}

// guardedResource returns what the guard reads and the id ?confirm= must
// name: the replica set in the path, else the service.
func (e *endpoint) guardedResource(v ids) (what, id string) {
	if slices.Contains(e.ids, idReplicaSet) {
		return "replica set", v[idReplicaSet]
	}
	return "service", v[idService]
}

// pattern is the ServeMux pattern of the endpoint.
func (e *endpoint) pattern() string {
	return e.api.Method + " " + apiPrefix + e.api.Path
}

// ids are the path values of one request.
type ids map[string]string

// upstreamPath fills the endpoint's path template with escaped ids.
func (e *endpoint) upstreamPath(v ids) string {
	var b strings.Builder
	tmpl := e.api.Path
	for {
		open := strings.IndexByte(tmpl, '{')
		if open < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		end := strings.IndexByte(tmpl, '}')
		b.WriteString(tmpl[:open])
		b.WriteString(url.PathEscape(v[tmpl[open+1:end]]))
		tmpl = tmpl[end+1:]
	}
}

// Settled states an asynchronous operation waits for.
const (
	settleNone  = ""      // synchronous: refresh only
	settleReady = "ready" // service READY, replica set active
	settleGone  = "gone"  // deleted
	// settlePaused is a stopped service: PAUSED.
	settlePaused = "paused"
)

// target is the resource a write affected.
type target struct {
	kind                                      string
	serviceID, replicaSetID, vpcID, peeringID string
	settle                                    string
}

// bodyless decodes the body of an operation that takes none.
func bodyless(raw []byte) (any, error) { return nil, decodeEmpty(raw) }

// serviceTarget is the target of a write to the service in the path.
func serviceTarget(settle string) func(ids, any) target {
	return func(v ids, _ any) target {
		return target{kind: kindService, serviceID: v[idService], settle: settle}
	}
}

// replicaSetTarget is the target of a write to the replica set in the path.
func replicaSetTarget(settle string) func(ids, any) target {
	return func(v ids, _ any) target {
		return target{kind: kindReplicaSet, serviceID: v[idService], replicaSetID: v[idReplicaSet], settle: settle}
	}
}

// endpoints lists the admin side of every write operation, by resource;
// bind puts them in the catalog's order.
func endpoints() []*endpoint {
	var all []*endpoint
	all = append(all, serviceEndpoints()...)
	all = append(all, replicaSetEndpoints()...)
	all = append(all, vpcEndpoints()...)
	all = append(all, peeringEndpoints()...)
	return all
}

// bind joins the catalog's write operations with their endpoints, in the
// catalog's order. Every write operation needs exactly one endpoint (its
// validation) and every endpoint a write operation.
func bind(catalog []apiclient.Operation, specs []*endpoint) ([]*endpoint, error) {
	byOp := make(map[string]*endpoint, len(specs))
	for _, e := range specs {
		if byOp[e.op] != nil {
			return nil, fmt.Errorf("operation %s has two admin endpoints", e.op)
		}
		byOp[e.op] = e
	}
	var bound []*endpoint
	for _, o := range catalog {
		e := byOp[o.Name]
		delete(byOp, o.Name)
		switch {
		case !o.Write && e != nil:
			return nil, fmt.Errorf("operation %s is a read: it has no admin endpoint", o.Name)
		case !o.Write:
			continue
		case e == nil:
			return nil, fmt.Errorf("write operation %s has no admin endpoint (its body's validation, call and target)", o.Name)
		}
		b := *e
		b.api, b.ids = o, o.IDs()
		bound = append(bound, &b)
	}
	if len(byOp) > 0 {
		return nil, fmt.Errorf("admin endpoints %v are not in the operation catalog", slices.Sorted(maps.Keys(byOp)))
	}
	return bound, nil
}
