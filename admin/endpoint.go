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

const (
	kindService    = "service"
	kindReplicaSet = "replica_set"
	kindVPC        = "vpc"
	kindPeering    = "peering"
)

const (
	idProject    = "project_id"
	idService    = "service_id"
	idReplicaSet = "replica_set_id"
	idVPC        = "vpc_id"
	idPeering    = "peering_id"
)

// endpoint is what the catalog cannot know of a write: its rules, the
// body's validation, the call and the resource it affects.
type endpoint struct {
	op string
	// bind fills api and ids (the path value names after project_id).
	api        apiclient.Operation
	ids        []string
	idempotent bool
	guard      *prodGuard
	// optIn operations are refused unless --admin.allow names them.
	optIn bool
	// secret returns the body's secret, kept out of the API's error text,
	// which may echo it.
	secret        func(body any) string
	answersSecret bool
	decode        func(raw []byte) (any, error)
	call          func(ctx context.Context, c *apiclient.Client, ids ids, body any) (any, error)
	// target tells which resource to refresh and how it settles.
	target  func(ids ids, result any) target
	example Example
}

// Example is a write's valid and invalid request on the simulator's demo
// fleet, which the generic tests of every write make.
type Example struct {
	// On names the demo resource addressed (for a peering, its VPC).
	On string
	// Body is valid ({vpc:NAME} stands for that VPC's id); Bad is refused
	// with a 400 that names BadField.
	Body, Bad, BadField string
	// Status, if set, replaces the success status on a fresh demo fleet.
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

// Request returns the example's path below /api/v1 and body on a demo fleet.
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

// prodGuard is the ?confirm=<id> a write to a resource needs unless its
// environment, read fresh just before the write, is DEV.
type prodGuard struct {
	verb string // for messages: "delete it"
	// applies, if not nil, tells whether a decoded body needs confirming.
	applies func(body any) bool
}

func (e *endpoint) secretOf(body any) string {
	if e.secret == nil {
		return ""
	}
	return e.secret(body)
}

func guardAlways(verb string) *prodGuard { return &prodGuard{verb: verb} }

func (e *endpoint) guards(body any) bool {
	return e.guard != nil && (e.guard.applies == nil || e.guard.applies(body))
}

// guardToDev guards a switch to DEV: otherwise switching a PROD resource to
// DEV first would bypass the delete's guard.
var guardToDev = &prodGuard{verb: "switch it to " + apiclient.EnvironmentDev, applies: func(body any) bool {
	req, ok := body.(apiclient.SetEnvironmentRequest)
	return ok && req.Environment == apiclient.EnvironmentDev
}}

func (e *endpoint) guardedResource(v ids) (what, id string) {
	if slices.Contains(e.ids, idReplicaSet) {
		return "replica set", v[idReplicaSet]
	}
	return "service", v[idService]
}

func (e *endpoint) pattern() string {
	return e.api.Method + " " + apiPrefix + e.api.Path
}

type ids map[string]string

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
	settleNone   = ""       // synchronous: refresh only
	settleReady  = "ready"  // service READY, replica set active
	settleGone   = "gone"   // deleted
	settlePaused = "paused" // a stopped service
)

type target struct {
	kind                                      string
	serviceID, replicaSetID, vpcID, peeringID string
	settle                                    string
}

func bodyless(raw []byte) (any, error) { return nil, decodeEmpty(raw) }

func serviceTarget(settle string) func(ids, any) target {
	return func(v ids, _ any) target {
		return target{kind: kindService, serviceID: v[idService], settle: settle}
	}
}

func replicaSetTarget(settle string) func(ids, any) target {
	return func(v ids, _ any) target {
		return target{kind: kindReplicaSet, serviceID: v[idService], replicaSetID: v[idReplicaSet], settle: settle}
	}
}

func endpoints() []*endpoint {
	var all []*endpoint
	all = append(all, serviceEndpoints()...)
	all = append(all, replicaSetEndpoints()...)
	all = append(all, vpcEndpoints()...)
	all = append(all, peeringEndpoints()...)
	return all
}

// bind joins the catalog's writes with their endpoints, in the catalog's
// order: exactly one endpoint per write, and no endpoint without one.
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
