package cloudsim

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// Kinds of success bodies.
const (
	bodyNone       = "no body"
	bodyService    = "service"
	bodyMessage    = "{message}"
	bodyReplicaSet = "replica set"
	bodyVPC        = "VPC"
	bodyPeering    = "peering"
)

// successAnswer is what a write answers when it succeeds.
type successAnswer struct {
	status int
	body   string
}

// writeAnswers is the addendum's table "Success answers of every write
// (revision 2026)" and, for the first revision, the answers of
// cloud-api.md's endpoint tables (section 4), copied by hand from the spec:
// the simulator must not be its own reference. A write absent from a
// revision's column does not exist in that revision.
var writeAnswers = map[string]map[string]successAnswer{
	Revision2026: {
		apiclient.OpCreateService:            {http.StatusAccepted, bodyService},
		apiclient.OpStartService:             {http.StatusAccepted, bodyService},
		apiclient.OpStopService:              {http.StatusAccepted, bodyService},
		apiclient.OpResizeService:            {http.StatusAccepted, bodyService},
		apiclient.OpSetHA:                    {http.StatusAccepted, bodyService},
		apiclient.OpForkService:              {http.StatusAccepted, bodyService},
		apiclient.OpRenameService:            {http.StatusOK, bodyService},
		apiclient.OpAttachToVPC:              {http.StatusAccepted, bodyMessage},
		apiclient.OpDetachFromVPC:            {http.StatusAccepted, bodyMessage},
		apiclient.OpResizeReplicaSet:         {http.StatusAccepted, bodyMessage},
		apiclient.OpEnableServicePooler:      {http.StatusOK, bodyMessage},
		apiclient.OpDisableServicePooler:     {http.StatusOK, bodyMessage},
		apiclient.OpSetServiceEnvironment:    {http.StatusOK, bodyMessage},
		apiclient.OpEnableReplicaSetPooler:   {http.StatusOK, bodyMessage},
		apiclient.OpDisableReplicaSetPooler:  {http.StatusOK, bodyMessage},
		apiclient.OpSetReplicaSetEnvironment: {http.StatusOK, bodyMessage},
		apiclient.OpRenameVPC:                {http.StatusOK, bodyMessage},
		apiclient.OpCreateReplicaSet:         {http.StatusAccepted, bodyReplicaSet},
		apiclient.OpCreateVPC:                {http.StatusCreated, bodyVPC},
		apiclient.OpCreatePeering:            {http.StatusCreated, bodyPeering},
		apiclient.OpDeleteService:            {http.StatusAccepted, bodyNone},
		apiclient.OpDeleteReplicaSet:         {http.StatusAccepted, bodyNone},
		apiclient.OpUpdatePassword:           {http.StatusNoContent, bodyNone},
		apiclient.OpDeleteVPC:                {http.StatusNoContent, bodyNone},
		apiclient.OpDeletePeering:            {http.StatusNoContent, bodyNone},
	},
	Revision2024: {
		apiclient.OpCreateService:            {http.StatusAccepted, bodyService},
		apiclient.OpDeleteService:            {http.StatusAccepted, bodyNone},
		apiclient.OpResizeService:            {http.StatusAccepted, bodyNone},
		apiclient.OpUpdatePassword:           {http.StatusNoContent, bodyNone},
		apiclient.OpSetServiceEnvironment:    {http.StatusOK, bodyMessage},
		apiclient.OpSetHA:                    {http.StatusAccepted, bodyNone},
		apiclient.OpEnableServicePooler:      {http.StatusOK, bodyMessage},
		apiclient.OpDisableServicePooler:     {http.StatusOK, bodyMessage},
		apiclient.OpForkService:              {http.StatusAccepted, bodyService},
		apiclient.OpAttachToVPC:              {http.StatusAccepted, bodyNone},
		apiclient.OpDetachFromVPC:            {http.StatusAccepted, bodyNone},
		apiclient.OpCreateReplicaSet:         {http.StatusAccepted, bodyReplicaSet},
		apiclient.OpDeleteReplicaSet:         {http.StatusAccepted, bodyNone},
		apiclient.OpResizeReplicaSet:         {http.StatusAccepted, bodyMessage},
		apiclient.OpEnableReplicaSetPooler:   {http.StatusOK, bodyMessage},
		apiclient.OpDisableReplicaSetPooler:  {http.StatusOK, bodyMessage},
		apiclient.OpSetReplicaSetEnvironment: {http.StatusOK, bodyMessage},
		apiclient.OpCreateVPC:                {http.StatusCreated, bodyVPC},
		apiclient.OpRenameVPC:                {http.StatusOK, bodyVPC},
		apiclient.OpDeleteVPC:                {http.StatusNoContent, bodyNone},
		apiclient.OpCreatePeering:            {http.StatusCreated, bodyPeering},
		apiclient.OpDeletePeering:            {http.StatusNoContent, bodyNone},
	},
}

// writeStep is one write of the walk; path and body see the ids the
// earlier steps' answers gave.
type writeStep struct {
	op     string
	method string
	path   func(w *walkIDs) string
	body   func(rev string, w *walkIDs) any
}

// walkIDs are the resources the walk creates.
type walkIDs struct{ service, replicaSet, vpc, peering string }

func (w *walkIDs) svc() string  { return servicesPath + "/" + w.service }
func (w *walkIDs) rs() string   { return w.svc() + "/replicaSets/" + w.replicaSet }
func (w *walkIDs) vpcs() string { return "/v1/projects/" + testProject + "/vpcs" }
func (w *walkIDs) vpcP() string { return w.vpcs() + "/" + w.vpc }

func fixed(body any) func(string, *walkIDs) any { return func(string, *walkIDs) any { return body } }

// writeWalk makes every write once, in an order in which none conflicts
// with another under zero timings.
var writeWalk = []writeStep{
	{apiclient.OpCreateService, "POST", func(*walkIDs) string { return servicesPath }, func(rev string, _ *walkIDs) any {
		if rev == Revision2024 {
			return createBody("walk", "time-series")
		}
		return map[string]any{"name": "walk", "addons": []string{"time-series"}, "cpu_millis": "1000", "memory_gbs": "4"}
	}},
	{apiclient.OpResizeService, "POST", func(w *walkIDs) string { return w.svc() + "/resize" }, fixed(map[string]any{"cpu_millis": "2000", "memory_gbs": "8"})},
	{apiclient.OpSetHA, "POST", func(w *walkIDs) string { return w.svc() + "/setHA" }, fixed(map[string]any{"replica_count": 1})},
	{apiclient.OpUpdatePassword, "POST", func(w *walkIDs) string { return w.svc() + "/updatePassword" }, fixed(map[string]any{"password": "s3cret"})},
	{apiclient.OpSetServiceEnvironment, "POST", func(w *walkIDs) string { return w.svc() + "/setEnvironment" }, fixed(map[string]any{"environment": "PROD"})},
	{apiclient.OpEnableServicePooler, "POST", func(w *walkIDs) string { return w.svc() + "/enablePooler" }, nil},
	{apiclient.OpDisableServicePooler, "POST", func(w *walkIDs) string { return w.svc() + "/disablePooler" }, nil},
	{apiclient.OpForkService, "POST", func(w *walkIDs) string { return w.svc() + "/forkService" }, func(rev string, _ *walkIDs) any {
		if rev == Revision2024 {
			return map[string]any{"name": "walk-fork", "region_code": "us-east-1", "cpu_millis": 1000, "memory_gbs": 4}
		}
		return map[string]any{"fork_strategy": ForkNow}
	}},
	{apiclient.OpCreateVPC, "POST", func(w *walkIDs) string { return w.vpcs() }, fixed(map[string]any{"name": "walk-vpc", "cidr": "10.9.0.0/16", "region_code": "us-east-1"})},
	{apiclient.OpAttachToVPC, "POST", func(w *walkIDs) string { return w.svc() + "/attachToVPC" }, func(_ string, w *walkIDs) any { return map[string]any{"vpc_id": w.vpc} }},
	{apiclient.OpDetachFromVPC, "POST", func(w *walkIDs) string { return w.svc() + "/detachFromVPC" }, func(_ string, w *walkIDs) any { return map[string]any{"vpc_id": w.vpc} }},
	{apiclient.OpRenameVPC, "POST", func(w *walkIDs) string { return w.vpcP() + "/rename" }, fixed(map[string]any{"name": "walk-vpc-2"})},
	{apiclient.OpCreatePeering, "POST", func(w *walkIDs) string { return w.vpcP() + "/peerings" }, fixed(peeringBody())},
	{apiclient.OpDeletePeering, "DELETE", func(w *walkIDs) string { return w.vpcP() + "/peerings/" + w.peering }, nil},
	{apiclient.OpCreateReplicaSet, "POST", func(w *walkIDs) string { return w.svc() + "/replicaSets" }, fixed(rsBody())},
	{apiclient.OpResizeReplicaSet, "POST", func(w *walkIDs) string { return w.rs() + "/resize" }, func(rev string, _ *walkIDs) any {
		if rev == Revision2024 {
			return map[string]any{"cpu_millis": 2000, "memory_gbs": 8, "nodes": 2}
		}
		return map[string]any{"cpu_millis": "2000", "memory_gbs": "8"}
	}},
	{apiclient.OpEnableReplicaSetPooler, "POST", func(w *walkIDs) string { return w.rs() + "/enablePooler" }, nil},
	{apiclient.OpDisableReplicaSetPooler, "POST", func(w *walkIDs) string { return w.rs() + "/disablePooler" }, nil},
	{apiclient.OpSetReplicaSetEnvironment, "POST", func(w *walkIDs) string { return w.rs() + "/setEnvironment" }, fixed(map[string]any{"environment": "DEV"})},
	{apiclient.OpDeleteReplicaSet, "DELETE", func(w *walkIDs) string { return w.rs() }, nil},
	{apiclient.OpStopService, "POST", func(w *walkIDs) string { return w.svc() + "/stop" }, nil},
	{apiclient.OpStartService, "POST", func(w *walkIDs) string { return w.svc() + "/start" }, nil},
	{apiclient.OpRenameService, "POST", func(w *walkIDs) string { return w.svc() + "/rename" }, fixed(map[string]any{"name": "walk-2"})},
	{apiclient.OpDeleteVPC, "DELETE", func(w *walkIDs) string { return w.vpcP() }, nil},
	{apiclient.OpDeleteService, "DELETE", func(w *walkIDs) string { return w.svc() }, nil},
}

// TestWriteAnswers walks every write of the catalog in both revisions and
// checks its success answer against the spec's tables: status, kind of
// body and its content type.
func TestWriteAnswers(t *testing.T) {
	var walked []string
	for _, s := range writeWalk {
		walked = append(walked, s.op)
	}
	// A write in neither the walk nor the table has its answers checked
	// against docs/api/openapi.yaml by the contract test, from its admin
	// endpoint's example.
	for _, o := range apiclient.Catalog() {
		_, tabled := writeAnswers[Revision2026][o.Name]
		if o.Write && slices.Contains(walked, o.Name) != tabled {
			t.Errorf("write %s: walked %v, in the revision 2026 table %v", o.Name, !tabled, tabled)
		}
	}
	for _, rev := range []string{Revision2026, Revision2024} {
		t.Run(rev, func(t *testing.T) {
			e := newEnvRev(t, Timings{}, rev)
			w := &walkIDs{}
			for _, s := range writeWalk {
				var body any
				if s.body != nil {
					body = s.body(rev, w)
				}
				status, raw, header := e.do(s.method, s.path(w), body)
				want, exists := writeAnswers[rev][s.op]
				if !exists {
					if status != http.StatusNotFound {
						t.Errorf("%s does not exist in revision %s but answered %d %s", s.op, rev, status, raw)
					}
					continue
				}
				if status != want.status {
					t.Fatalf("%s: status %d, want %d; body %s", s.op, status, want.status, raw)
				}
				ct := header.Get("Content-Type")
				switch {
				case want.body == bodyNone && (len(raw) != 0 || ct != ""):
					t.Errorf("%s: want no body, got %q (Content-Type %q)", s.op, raw, ct)
				case want.body != bodyNone && ct != "application/json":
					t.Errorf("%s: Content-Type %q, want application/json", s.op, ct)
				case want.body != bodyNone:
					if kind := bodyKind(raw); kind != want.body {
						t.Errorf("%s: body is a %s, want a %s: %s", s.op, kind, want.body, raw)
					}
				}
				remember(w, s.op, raw)
			}
		})
	}
}

// bodyKind tells which object a success body is by its identifying fields.
func bodyKind(raw []byte) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return "non-object"
	}
	has := func(k string) bool { _, ok := m[k]; return ok }
	switch {
	case has("service_id") && has("status"):
		return bodyService
	case len(m) == 1 && has("message") && raw[len(raw)-1] == '}' && string(m["message"])[0] == '"':
		return bodyMessage
	case has("id") && has("nodes"):
		return bodyReplicaSet
	case has("id") && has("cidr"):
		return bodyVPC
	case has("id") && has("peer_vpc_id"):
		return bodyPeering
	}
	return "unknown object"
}

// remember keeps the ids a create answer gives.
func remember(w *walkIDs, op string, raw []byte) {
	var v struct {
		ServiceID string `json:"service_id"`
		ID        string `json:"id"`
	}
	_ = json.Unmarshal(raw, &v)
	switch op {
	case apiclient.OpCreateService:
		w.service = v.ServiceID
	case apiclient.OpCreateReplicaSet:
		w.replicaSet = v.ID
	case apiclient.OpCreateVPC:
		w.vpc = v.ID
	case apiclient.OpCreatePeering:
		w.peering = v.ID
	}
}
