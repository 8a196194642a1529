package apiclient_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/cloudsim"
)

// These tests run the client against the simulator (zero timings, so every
// asynchronous operation completes at once). They are in an external test
// package because cloudsim imports apiclient.

const simProject = "proj-sim"

var (
	readWrite = cloudsim.Credential{AccessKey: "ak-rw", SecretKey: "sk-rw", APIKey: "api-rw", ProjectID: simProject, Name: "rw"}
	readOnly  = cloudsim.Credential{AccessKey: "ak-ro", SecretKey: "sk-ro", APIKey: "api-ro", ProjectID: simProject, Name: "ro", ReadOnly: true}
)

func newSim(t *testing.T) (*cloudsim.Sim, string) {
	t.Helper()
	sim := cloudsim.New(cloudsim.Options{Credentials: []cloudsim.Credential{readWrite, readOnly}, Seed: 1, Revision: cloudsim.Revision2024})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return sim, srv.URL + "/v1"
}

// sleepRecorder stands in for the Client's sleeps: it records and returns.
type sleepRecorder struct {
	mu     sync.Mutex
	sleeps []time.Duration
}

func (s *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.sleeps = append(s.sleeps, d)
	s.mu.Unlock()
	return ctx.Err()
}

func simClient(t *testing.T, baseURL string, cred cloudsim.Credential, mutate func(*apiclient.Config)) (*apiclient.Client, *sleepRecorder) {
	t.Helper()
	cfg := apiclient.Config{
		BaseURL: baseURL, ProjectID: cred.ProjectID,
		AccessKey: apiclient.Secret(cred.AccessKey), SecretKey: apiclient.Secret(cred.SecretKey), APIKey: apiclient.Secret(cred.APIKey),
		RateLimit: 1e9, Burst: 1000,
	}
	if mutate != nil {
		mutate(&cfg)
	}
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec := &sleepRecorder{}
	apiclient.SetSleepForTest(c, rec.sleep)
	return c, rec
}

func must[T any](t *testing.T, what string) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
}

func mustOK(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// TestSimEveryOperation runs each of the 30 operations once, successfully,
// and checks that each reached the simulator exactly once.
func TestSimEveryOperation(t *testing.T) {
	sim, base := newSim(t)
	c, _ := simClient(t, base, readWrite, nil)
	ctx := t.Context()

	info := must[*apiclient.AuthInfo](t, "GetAuthInfo")(c.GetAuthInfo(ctx))
	if k := info.Key(); info.Type != "apiKey" || k == nil || k.Name != "rw" || k.Project.ID != simProject || k.Created.IsZero() {
		t.Errorf("auth info = %+v", info)
	}

	vpc := must[*apiclient.VPC](t, "CreateVPC")(c.CreateVPC(ctx, apiclient.CreateVPCRequest{Name: "net", CIDR: "10.0.0.0/16", RegionCode: "us-east-1"}))
	if vpc.ID == "" || vpc.CIDR != "10.0.0.0/16" {
		t.Errorf("created VPC = %+v", vpc)
	}
	if got := must[*apiclient.VPC](t, "GetVPC")(c.GetVPC(ctx, vpc.ID)); got.Name != "net" {
		t.Errorf("GetVPC = %+v", got)
	}
	if got := must[*apiclient.VPC](t, "RenameVPC")(c.RenameVPC(ctx, vpc.ID, apiclient.RenameVPCRequest{Name: "net2"})); got.Name != "net2" {
		t.Errorf("RenameVPC = %+v", got)
	}
	if got := must[[]apiclient.VPC](t, "ListVPCs")(c.ListVPCs(ctx)); len(got) != 1 || got[0].Name != "net2" {
		t.Errorf("ListVPCs = %+v", got)
	}

	pe := must[*apiclient.Peering](t, "CreatePeering")(c.CreatePeering(ctx, vpc.ID, apiclient.CreatePeeringRequest{PeerAccountID: "123", PeerRegionCode: "eu-west-1", PeerVPCID: "vpc-x"}))
	if pe.ID == "" || pe.Status != apiclient.PeeringPending {
		t.Errorf("created peering = %+v", pe)
	}
	if got := must[*apiclient.Peering](t, "GetPeering")(c.GetPeering(ctx, vpc.ID, pe.ID)); got.ID != pe.ID || got.PeerVPCID != "vpc-x" {
		t.Errorf("GetPeering = %+v", got)
	}
	if got := must[[]apiclient.Peering](t, "ListPeerings")(c.ListPeerings(ctx, vpc.ID)); len(got) != 1 || got[0].ID != pe.ID {
		t.Errorf("ListPeerings = %+v", got)
	}

	// Addons left nil must go out as [] (the simulator refuses null).
	svc := must[*apiclient.Service](t, "CreateService")(c.CreateService(ctx, apiclient.CreateServiceRequest{Name: "db", RegionCode: "us-east-1", CPUMillis: apiclient.SizeOf(1000), MemoryGBs: apiclient.SizeOf(4)}))
	if svc.ServiceID == "" || svc.InitialPassword == "" || svc.ServiceType != apiclient.ServiceTypePostgres || svc.Created.IsZero() {
		t.Errorf("created service = %+v", svc)
	}
	if got := must[*apiclient.Service](t, "GetService")(c.GetService(ctx, svc.ServiceID)); got.ServiceID != svc.ServiceID || got.InitialPassword != "" {
		t.Errorf("GetService = %+v", got)
	}
	if got := must[[]apiclient.Service](t, "ListServices")(c.ListServices(ctx)); len(got) != 1 || got[0].ServiceID != svc.ServiceID {
		t.Errorf("ListServices = %+v", got)
	}
	mustOK(t, "ResizeService", c.ResizeService(ctx, svc.ServiceID, apiclient.ResizeServiceRequest{CPUMillis: apiclient.SizeOf(2000), MemoryGBs: apiclient.SizeOf(8)}))
	mustOK(t, "UpdatePassword", c.UpdatePassword(ctx, svc.ServiceID, apiclient.UpdatePasswordRequest{Password: "n3w-pass"}))
	if m := must[*apiclient.Message](t, "SetServiceEnvironment")(c.SetServiceEnvironment(ctx, svc.ServiceID, apiclient.SetEnvironmentRequest{Environment: apiclient.EnvironmentProd})); m.Message == "" {
		t.Error("SetServiceEnvironment: empty message")
	}
	mustOK(t, "SetHA", c.SetHA(ctx, svc.ServiceID, apiclient.SetHARequest{ReplicaCount: new(int64(1))}))
	must[*apiclient.Message](t, "EnableServicePooler")(c.EnableServicePooler(ctx, svc.ServiceID))
	must[*apiclient.Message](t, "DisableServicePooler")(c.DisableServicePooler(ctx, svc.ServiceID))
	mustOK(t, "AttachToVPC", c.AttachToVPC(ctx, svc.ServiceID, apiclient.VPCAttachmentRequest{VPCID: vpc.ID}))
	mustOK(t, "DetachFromVPC", c.DetachFromVPC(ctx, svc.ServiceID, apiclient.VPCAttachmentRequest{VPCID: vpc.ID}))
	fork := must[*apiclient.Service](t, "ForkService")(c.ForkService(ctx, svc.ServiceID, apiclient.ForkServiceRequest{Name: "fork", RegionCode: "us-east-1", CPUMillis: apiclient.SizeOf(1000), MemoryGBs: apiclient.SizeOf(4)}))
	if fork.ForkedFrom == nil || fork.ForkedFrom.ServiceID != svc.ServiceID || fork.InitialPassword == "" {
		t.Errorf("fork = %+v", fork)
	}

	rs := must[*apiclient.ReplicaSet](t, "CreateReplicaSet")(c.CreateReplicaSet(ctx, svc.ServiceID, apiclient.CreateReplicaSetRequest{Name: "read", CPUMillis: 500, MemoryGBs: 2, Nodes: 2}))
	if rs.ID == "" || rs.Nodes != 2 {
		t.Errorf("created replica set = %+v", rs)
	}
	if got := must[[]apiclient.ReplicaSet](t, "ListReplicaSets")(c.ListReplicaSets(ctx, svc.ServiceID)); len(got) != 1 || got[0].ID != rs.ID {
		t.Errorf("ListReplicaSets = %+v", got)
	}
	must[*apiclient.Message](t, "ResizeReplicaSet")(c.ResizeReplicaSet(ctx, svc.ServiceID, rs.ID, apiclient.ResizeReplicaSetRequest{CPUMillis: "1000", MemoryGBs: "4", Nodes: new(int64(3))}))
	must[*apiclient.Message](t, "EnableReplicaSetPooler")(c.EnableReplicaSetPooler(ctx, svc.ServiceID, rs.ID))
	must[*apiclient.Message](t, "DisableReplicaSetPooler")(c.DisableReplicaSetPooler(ctx, svc.ServiceID, rs.ID))
	must[*apiclient.Message](t, "SetReplicaSetEnvironment")(c.SetReplicaSetEnvironment(ctx, svc.ServiceID, rs.ID, apiclient.SetEnvironmentRequest{Environment: apiclient.EnvironmentDev}))
	mustOK(t, "DeleteReplicaSet", c.DeleteReplicaSet(ctx, svc.ServiceID, rs.ID))

	mustOK(t, "DeletePeering", c.DeletePeering(ctx, vpc.ID, pe.ID))
	mustOK(t, "DeleteVPC", c.DeleteVPC(ctx, vpc.ID))
	mustOK(t, "DeleteService", c.DeleteService(ctx, svc.ServiceID))

	for _, op := range apiclient.Operations {
		if slices.Contains(revision2026Ops, op) || !simOpsCover(op) {
			continue // TestSimRevision2026Operations; admin's TestEveryWriteOperation
		}
		if n := sim.RequestCount(op); n != 1 {
			t.Errorf("simulator saw %d requests of %s, want 1", n, op)
		}
	}
}

// revision2026Ops are the operations the first revision does not serve.
var revision2026Ops = []string{apiclient.OpListProjects, apiclient.OpStartService, apiclient.OpStopService, apiclient.OpRenameService,
	apiclient.OpGetServiceMetricsAvailableSeries, apiclient.OpGetServiceMetricsSeries, apiclient.OpGetServiceLogs}

// TestSimRevision2026Operations runs the operations of revision 2026 and
// the new bodies against the simulator in that revision, once each.
func TestSimRevision2026Operations(t *testing.T) {
	sim := cloudsim.New(cloudsim.Options{Credentials: []cloudsim.Credential{readWrite}, Seed: 1, Timings: cloudsim.Timings{}})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	c, _ := simClient(t, srv.URL+"/v1", readWrite, nil)
	ctx := t.Context()

	if got := must[[]apiclient.Project](t, "ListProjects")(c.ListProjects(ctx)); len(got) != 1 || got[0].ID != simProject {
		t.Errorf("ListProjects = %+v", got)
	}
	svc := must[*apiclient.Service](t, "CreateService")(c.CreateService(ctx, apiclient.CreateServiceRequest{
		Name: "free", CPUMillis: apiclient.SizeShared, MemoryGBs: apiclient.SizeShared, ReplicaCount: new(int64(0)), EnvironmentTag: apiclient.EnvironmentProd}))
	if !svc.Shared() || svc.Environment() != apiclient.EnvironmentProd {
		t.Errorf("created = %+v", svc)
	}
	mustOK(t, "ResizeService", c.ResizeService(ctx, svc.ServiceID, apiclient.ResizeServiceRequest{CPUMillis: apiclient.SizeOf(1000), MemoryGBs: apiclient.SizeOf(4)}))
	mustOK(t, "SetHA", c.SetHA(ctx, svc.ServiceID, apiclient.SetHARequest{ReplicaCount: new(int64(2)), SyncReplicaCount: new(int64(1))}))
	if got := must[*apiclient.Service](t, "StopService")(c.StopService(ctx, svc.ServiceID)); !got.IsPaused() {
		t.Errorf("stopped = %s", got.Status)
	}
	if got := must[*apiclient.Service](t, "StartService")(c.StartService(ctx, svc.ServiceID)); got.Status != apiclient.ServiceReady {
		t.Errorf("started = %s", got.Status)
	}
	if got := must[*apiclient.Service](t, "RenameService")(c.RenameService(ctx, svc.ServiceID, apiclient.RenameServiceRequest{Name: "paid"})); got.Name != "paid" {
		t.Errorf("renamed = %+v", got)
	}
	at := svc.Created // the earliest point the PITR window holds
	fork := must[*apiclient.Service](t, "ForkService")(c.ForkService(ctx, svc.ServiceID, apiclient.ForkServiceRequest{ForkStrategy: apiclient.ForkPITR, TargetTime: &at}))
	if fork.ForkedFrom == nil || fork.ForkedFrom.ServiceID != svc.ServiceID || fork.Name != "paid-fork" {
		t.Errorf("fork = %+v", fork)
	}
	names := must[[]string](t, "GetServiceMetricsAvailableSeries")(c.GetServiceMetricsAvailableSeries(ctx, svc.ServiceID))
	if len(names) < len(apiclient.UsageSeriesSuffixes) {
		t.Errorf("available series = %v", names)
	}
	now := time.Now()
	series := must[[]apiclient.Series](t, "GetServiceMetricsSeries")(c.GetServiceMetricsSeries(ctx, svc.ServiceID, apiclient.SeriesRequest{
		Name: names[0], From: apiclient.Time{Time: now.Add(-5 * time.Minute)}, To: apiclient.Time{Time: now}, BucketSeconds: 60}))
	if len(series) != 3 || len(series[0].Data) < 5 {
		t.Errorf("series of %s = %+v, want the primary and 2 replicas", names[0], series)
	}
	if _, err := c.GetServiceLogs(ctx, svc.ServiceID, apiclient.LogsQuery{Since: now.Add(-time.Minute), Severities: []string{apiclient.SeverityError}}); err != nil {
		t.Errorf("GetServiceLogs: %v", err)
	}
	for _, op := range revision2026Ops {
		if n := sim.RequestCount(op); n != 1 {
			t.Errorf("simulator saw %d requests of %s, want 1", n, op)
		}
	}
}

// ids names the resources an operation addresses.
type ids struct{ svc, rs, vpc, peering string }

// simOps calls operations with valid bodies, so that the answer is decided
// by credentials and ids alone. A new operation needs no entry:
// TestSimEveryReadChecksCredentials and TestSimEveryWriteChecksCredentials
// take every one from the catalog.
type simOp struct {
	op    string
	write bool
	call  func(ctx context.Context, c *apiclient.Client, id ids) error
}

var simOps = []simOp{
	{apiclient.OpGetAuthInfo, false, func(ctx context.Context, c *apiclient.Client, _ ids) error { _, err := c.GetAuthInfo(ctx); return err }},
	{apiclient.OpListServices, false, func(ctx context.Context, c *apiclient.Client, _ ids) error { _, err := c.ListServices(ctx); return err }},
	{apiclient.OpCreateService, true, func(ctx context.Context, c *apiclient.Client, _ ids) error {
		_, err := c.CreateService(ctx, apiclient.CreateServiceRequest{Name: "x", Addons: []string{apiclient.AddonTimeSeries, apiclient.AddonAI}, RegionCode: "r", CPUMillis: apiclient.SizeOf(1), MemoryGBs: apiclient.SizeOf(1)})
		return err
	}},
	{apiclient.OpGetService, false, func(ctx context.Context, c *apiclient.Client, id ids) error {
		_, err := c.GetService(ctx, id.svc)
		return err
	}},
	{apiclient.OpDeleteService, true, func(ctx context.Context, c *apiclient.Client, id ids) error { return c.DeleteService(ctx, id.svc) }},
	{apiclient.OpResizeService, true, func(ctx context.Context, c *apiclient.Client, id ids) error {
		return c.ResizeService(ctx, id.svc, apiclient.ResizeServiceRequest{CPUMillis: apiclient.SizeOf(1), MemoryGBs: apiclient.SizeOf(1)})
	}},
	{apiclient.OpUpdatePassword, true, func(ctx context.Context, c *apiclient.Client, id ids) error {
		return c.UpdatePassword(ctx, id.svc, apiclient.UpdatePasswordRequest{Password: "pw"})
	}},
	{apiclient.OpSetServiceEnvironment, true, func(ctx context.Context, c *apiclient.Client, id ids) error {
		_, err := c.SetServiceEnvironment(ctx, id.svc, apiclient.SetEnvironmentRequest{Environment: apiclient.EnvironmentDev})
		return err
	}},
	{apiclient.OpSetHA, true, func(ctx context.Context, c *apiclient.Client, id ids) error {
		return c.SetHA(ctx, id.svc, apiclient.SetHARequest{ReplicaCount: new(int64(1))})
	}},
	{apiclient.OpEnableServicePooler, true, func(ctx context.Context, c *apiclient.Client, id ids) error {
		_, err := c.EnableServicePooler(ctx, id.svc)
		return err
	}},
	{apiclient.OpDisableServicePooler, true, func(ctx context.Context, c *apiclient.Client, id ids) error {
		_, err := c.DisableServicePooler(ctx, id.svc)
		return err
	}},
	{apiclient.OpForkService, true, func(ctx context.Context, c *apiclient.Client, id ids) error {
		_, err := c.ForkService(ctx, id.svc, apiclient.ForkServiceRequest{Name: "f", RegionCode: "r", CPUMillis: apiclient.SizeOf(1), MemoryGBs: apiclient.SizeOf(1)})
		return err
	}},
	{apiclient.OpAttachToVPC, true, func(ctx context.Context, c *apiclient.Client, id ids) error {
		return c.AttachToVPC(ctx, id.svc, apiclient.VPCAttachmentRequest{VPCID: id.vpc})
	}},
	{apiclient.OpDetachFromVPC, true, func(ctx context.Context, c *apiclient.Client, id ids) error {
		return c.DetachFromVPC(ctx, id.svc, apiclient.VPCAttachmentRequest{VPCID: id.vpc})
	}},
	{apiclient.OpListReplicaSets, false, func(ctx context.Context, c *apiclient.Client, id ids) error {
		_, err := c.ListReplicaSets(ctx, id.svc)
		return err
	}},
	{apiclient.OpCreateReplicaSet, true, func(ctx context.Context, c *apiclient.Client, id ids) error {
		_, err := c.CreateReplicaSet(ctx, id.svc, apiclient.CreateReplicaSetRequest{Name: "r", CPUMillis: 1, MemoryGBs: 1, Nodes: 1})
		return err
	}},
	{apiclient.OpDeleteReplicaSet, true, func(ctx context.Context, c *apiclient.Client, id ids) error {
		return c.DeleteReplicaSet(ctx, id.svc, id.rs)
	}},
	{apiclient.OpResizeReplicaSet, true, func(ctx context.Context, c *apiclient.Client, id ids) error {
		_, err := c.ResizeReplicaSet(ctx, id.svc, id.rs, apiclient.ResizeReplicaSetRequest{CPUMillis: "1", MemoryGBs: "1", Nodes: new(int64(1))})
		return err
	}},
	{apiclient.OpEnableReplicaSetPooler, true, func(ctx context.Context, c *apiclient.Client, id ids) error {
		_, err := c.EnableReplicaSetPooler(ctx, id.svc, id.rs)
		return err
	}},
	{apiclient.OpDisableReplicaSetPooler, true, func(ctx context.Context, c *apiclient.Client, id ids) error {
		_, err := c.DisableReplicaSetPooler(ctx, id.svc, id.rs)
		return err
	}},
	{apiclient.OpSetReplicaSetEnvironment, true, func(ctx context.Context, c *apiclient.Client, id ids) error {
		_, err := c.SetReplicaSetEnvironment(ctx, id.svc, id.rs, apiclient.SetEnvironmentRequest{Environment: apiclient.EnvironmentProd})
		return err
	}},
	{apiclient.OpListVPCs, false, func(ctx context.Context, c *apiclient.Client, _ ids) error { _, err := c.ListVPCs(ctx); return err }},
	{apiclient.OpCreateVPC, true, func(ctx context.Context, c *apiclient.Client, _ ids) error {
		_, err := c.CreateVPC(ctx, apiclient.CreateVPCRequest{Name: "v", CIDR: "10.1.0.0/16", RegionCode: "r"})
		return err
	}},
	{apiclient.OpGetVPC, false, func(ctx context.Context, c *apiclient.Client, id ids) error {
		_, err := c.GetVPC(ctx, id.vpc)
		return err
	}},
	{apiclient.OpRenameVPC, true, func(ctx context.Context, c *apiclient.Client, id ids) error {
		_, err := c.RenameVPC(ctx, id.vpc, apiclient.RenameVPCRequest{Name: "n"})
		return err
	}},
	{apiclient.OpDeleteVPC, true, func(ctx context.Context, c *apiclient.Client, id ids) error { return c.DeleteVPC(ctx, id.vpc) }},
	{apiclient.OpListPeerings, false, func(ctx context.Context, c *apiclient.Client, id ids) error {
		_, err := c.ListPeerings(ctx, id.vpc)
		return err
	}},
	{apiclient.OpCreatePeering, true, func(ctx context.Context, c *apiclient.Client, id ids) error {
		_, err := c.CreatePeering(ctx, id.vpc, apiclient.CreatePeeringRequest{PeerAccountID: "a", PeerRegionCode: "r", PeerVPCID: "v"})
		return err
	}},
	{apiclient.OpGetPeering, false, func(ctx context.Context, c *apiclient.Client, id ids) error {
		_, err := c.GetPeering(ctx, id.vpc, id.peering)
		return err
	}},
	{apiclient.OpDeletePeering, true, func(ctx context.Context, c *apiclient.Client, id ids) error {
		return c.DeletePeering(ctx, id.vpc, id.peering)
	}},
}

// seed creates one of each resource with the read-write credential.
func seed(t *testing.T, base string) ids {
	t.Helper()
	c, _ := simClient(t, base, readWrite, nil)
	ctx := t.Context()
	vpc := must[*apiclient.VPC](t, "CreateVPC")(c.CreateVPC(ctx, apiclient.CreateVPCRequest{Name: "v", CIDR: "10.0.0.0/16", RegionCode: "r"}))
	pe := must[*apiclient.Peering](t, "CreatePeering")(c.CreatePeering(ctx, vpc.ID, apiclient.CreatePeeringRequest{PeerAccountID: "a", PeerRegionCode: "r", PeerVPCID: "v"}))
	svc := must[*apiclient.Service](t, "CreateService")(c.CreateService(ctx, apiclient.CreateServiceRequest{Name: "s", RegionCode: "r", CPUMillis: apiclient.SizeOf(1000), MemoryGBs: apiclient.SizeOf(4)}))
	rs := must[*apiclient.ReplicaSet](t, "CreateReplicaSet")(c.CreateReplicaSet(ctx, svc.ServiceID, apiclient.CreateReplicaSetRequest{Name: "r", CPUMillis: 1, MemoryGBs: 1, Nodes: 1}))
	return ids{svc: svc.ServiceID, rs: rs.ID, vpc: vpc.ID, peering: pe.ID}
}

// simOpsCover reports whether simOps calls op.
func simOpsCover(op string) bool {
	return slices.ContainsFunc(simOps, func(o simOp) bool { return o.op == op })
}

func TestSimUnauthorized(t *testing.T) {
	sim, base := newSim(t)
	id := seed(t, base)
	wrong := readWrite
	wrong.SecretKey, wrong.APIKey = "wrong-secret", "wrong-api-key"
	c, _ := simClient(t, base, wrong, nil)
	for _, o := range simOps {
		err := o.call(t.Context(), c, id)
		if !apiclient.IsUnauthorized(err) {
			t.Errorf("%s with a wrong secret: err = %v, want 401", o.op, err)
		}
		if strings.Contains(err.Error(), "wrong-secret") || strings.Contains(err.Error(), "wrong-api-key") {
			t.Errorf("%s error shows a credential: %v", o.op, err)
		}
	}

	// Without an API key, the first revision refuses Basic once; then
	// getAuthInfo is refused before sending anything.
	before := sim.RequestCount(apiclient.OpGetAuthInfo) + 1
	noKey := readWrite
	noKey.APIKey = ""
	c, _ = simClient(t, base, noKey, nil)
	if _, err := c.GetAuthInfo(t.Context()); !errors.Is(err, apiclient.ErrNoAPIKey) {
		t.Errorf("GetAuthInfo without API key: err = %v", err)
	}
	if sim.RequestCount(apiclient.OpGetAuthInfo) != before {
		t.Error("GetAuthInfo without API key sent a request")
	}
}

func TestSimForbidden(t *testing.T) {
	_, base := newSim(t)
	id := seed(t, base)
	ro, _ := simClient(t, base, readOnly, nil)
	for _, o := range simOps {
		err := o.call(t.Context(), ro, id)
		if o.write && apiclient.StatusCode(err) != http.StatusForbidden {
			t.Errorf("read-only %s: err = %v, want 403", o.op, err)
		}
		if !o.write && err != nil {
			t.Errorf("read-only %s: %v, want success", o.op, err)
		}
	}

	// A credential bound to one project may not address another.
	c, _ := simClient(t, base, readWrite, func(cfg *apiclient.Config) { cfg.ProjectID = "someone-elses" })
	if _, err := c.ListServices(t.Context()); apiclient.StatusCode(err) != http.StatusForbidden {
		t.Errorf("listing another project: err = %v, want 403", err)
	}
}

func TestSimNotFound(t *testing.T) {
	_, base := newSim(t)
	id := seed(t, base)
	c, _ := simClient(t, base, readWrite, nil)
	// Each resource in turn is unknown while the others exist, so that the
	// 404 comes from the id under test.
	for _, unknown := range []ids{
		{svc: "no-such-service", rs: id.rs, vpc: id.vpc, peering: id.peering},
		{svc: id.svc, rs: "no-such-rs", vpc: id.vpc, peering: id.peering},
		{svc: id.svc, rs: id.rs, vpc: "no-such-vpc", peering: id.peering},
		{svc: id.svc, rs: id.rs, vpc: id.vpc, peering: "no/such peering"},
	} {
		for _, o := range simOps {
			if !usesUnknown(o.op, id, unknown) {
				continue
			}
			if err := o.call(t.Context(), c, unknown); !apiclient.IsNotFound(err) {
				t.Errorf("%s with %+v: err = %v, want 404", o.op, unknown, err)
			}
		}
	}
}

// usesUnknown reports whether op addresses the one id that differs between
// known and unknown.
func usesUnknown(op string, known, unknown ids) bool {
	svcOps := []string{apiclient.OpGetService, apiclient.OpDeleteService, apiclient.OpResizeService, apiclient.OpUpdatePassword,
		apiclient.OpSetServiceEnvironment, apiclient.OpSetHA, apiclient.OpEnableServicePooler, apiclient.OpDisableServicePooler,
		apiclient.OpForkService, apiclient.OpAttachToVPC, apiclient.OpDetachFromVPC, apiclient.OpListReplicaSets, apiclient.OpCreateReplicaSet}
	rsOps := []string{apiclient.OpDeleteReplicaSet, apiclient.OpResizeReplicaSet, apiclient.OpEnableReplicaSetPooler,
		apiclient.OpDisableReplicaSetPooler, apiclient.OpSetReplicaSetEnvironment}
	vpcOps := []string{apiclient.OpGetVPC, apiclient.OpRenameVPC, apiclient.OpDeleteVPC, apiclient.OpListPeerings,
		apiclient.OpCreatePeering, apiclient.OpAttachToVPC, apiclient.OpGetPeering, apiclient.OpDeletePeering}
	peeringOps := []string{apiclient.OpGetPeering, apiclient.OpDeletePeering}
	switch {
	case known.svc != unknown.svc:
		return slices.Contains(svcOps, op) || slices.Contains(rsOps, op)
	case known.rs != unknown.rs:
		return slices.Contains(rsOps, op)
	case known.vpc != unknown.vpc:
		// detachFromVPC is left out: the simulator may answer 409 (not
		// attached) or 404 there, and the spec does not say which.
		return slices.Contains(vpcOps, op)
	default:
		return slices.Contains(peeringOps, op)
	}
}

func TestSimBadRequest(t *testing.T) {
	_, base := newSim(t)
	id := seed(t, base)
	c, _ := simClient(t, base, readWrite, nil)
	ctx := t.Context()
	for name, call := range map[string]func() error{
		"createService cpu 0": func() error {
			_, err := c.CreateService(ctx, apiclient.CreateServiceRequest{Name: "x", RegionCode: "r", CPUMillis: apiclient.SizeOf(0), MemoryGBs: apiclient.SizeOf(1)})
			return err
		},
		"createService unknown addon": func() error {
			_, err := c.CreateService(ctx, apiclient.CreateServiceRequest{Name: "x", Addons: []string{"graph"}, RegionCode: "r", CPUMillis: apiclient.SizeOf(1), MemoryGBs: apiclient.SizeOf(1)})
			return err
		},
		"resizeService negative": func() error {
			return c.ResizeService(ctx, id.svc, apiclient.ResizeServiceRequest{CPUMillis: apiclient.SizeOf(-1), MemoryGBs: apiclient.SizeOf(1)})
		},
		"updatePassword empty": func() error { return c.UpdatePassword(ctx, id.svc, apiclient.UpdatePasswordRequest{}) },
		"setServiceEnvironment QA": func() error {
			_, err := c.SetServiceEnvironment(ctx, id.svc, apiclient.SetEnvironmentRequest{Environment: "QA"})
			return err
		},
		"setHA 99": func() error { return c.SetHA(ctx, id.svc, apiclient.SetHARequest{ReplicaCount: new(int64(99))}) },
		"forkService blank name": func() error {
			_, err := c.ForkService(ctx, id.svc, apiclient.ForkServiceRequest{Name: " ", RegionCode: "r", CPUMillis: apiclient.SizeOf(1), MemoryGBs: apiclient.SizeOf(1)})
			return err
		},
		"attachToVPC blank vpc": func() error { return c.AttachToVPC(ctx, id.svc, apiclient.VPCAttachmentRequest{}) },
		"createReplicaSet 0 nodes": func() error {
			_, err := c.CreateReplicaSet(ctx, id.svc, apiclient.CreateReplicaSetRequest{Name: "r", CPUMillis: 1, MemoryGBs: 1})
			return err
		},
		"resizeReplicaSet 0 memory": func() error {
			_, err := c.ResizeReplicaSet(ctx, id.svc, id.rs, apiclient.ResizeReplicaSetRequest{CPUMillis: "1", Nodes: new(int64(1))})
			return err
		},
		"setReplicaSetEnvironment empty": func() error {
			_, err := c.SetReplicaSetEnvironment(ctx, id.svc, id.rs, apiclient.SetEnvironmentRequest{})
			return err
		},
		"createVPC bad cidr": func() error {
			_, err := c.CreateVPC(ctx, apiclient.CreateVPCRequest{Name: "v", CIDR: "10.0.0.0/99", RegionCode: "r"})
			return err
		},
		"renameVPC blank": func() error { _, err := c.RenameVPC(ctx, id.vpc, apiclient.RenameVPCRequest{}); return err },
		"createPeering blank": func() error {
			_, err := c.CreatePeering(ctx, id.vpc, apiclient.CreatePeeringRequest{PeerAccountID: "a"})
			return err
		},
	} {
		err := call()
		var apiErr *apiclient.APIError
		if apiclient.StatusCode(err) != http.StatusBadRequest || !errors.As(err, &apiErr) || apiErr.Code == "" || apiErr.Message == "" {
			t.Errorf("%s: err = %v, want 400 with code and message", name, err)
		}
	}
}

func TestSimConflict(t *testing.T) {
	sim, base := newSim(t)
	id := seed(t, base)
	c, _ := simClient(t, base, readWrite, nil)
	ctx := t.Context()

	if err := c.DeleteVPC(ctx, id.vpc); apiclient.StatusCode(err) != http.StatusConflict {
		t.Errorf("deleting a VPC with a peering: err = %v, want 409", err)
	}
	if err := c.DetachFromVPC(ctx, id.svc, apiclient.VPCAttachmentRequest{VPCID: id.vpc}); apiclient.StatusCode(err) != http.StatusConflict {
		t.Errorf("detaching an unattached service: err = %v, want 409", err)
	}
	mustOK(t, "AttachToVPC", c.AttachToVPC(ctx, id.svc, apiclient.VPCAttachmentRequest{VPCID: id.vpc}))
	if err := c.AttachToVPC(ctx, id.svc, apiclient.VPCAttachmentRequest{VPCID: id.vpc}); apiclient.StatusCode(err) != http.StatusConflict {
		t.Errorf("attaching an attached service: err = %v, want 409", err)
	}
	if err := sim.SetServiceStatus(simProject, id.svc, apiclient.ServiceConfiguring); err != nil {
		t.Fatal(err)
	}
	if err := c.ResizeService(ctx, id.svc, apiclient.ResizeServiceRequest{CPUMillis: apiclient.SizeOf(1), MemoryGBs: apiclient.SizeOf(1)}); apiclient.StatusCode(err) != http.StatusConflict {
		t.Errorf("resizing a CONFIGURING service: err = %v, want 409", err)
	}
	if got := must[*apiclient.Service](t, "GetService")(c.GetService(ctx, id.svc)); got.Status != apiclient.ServiceConfiguring {
		t.Errorf("status = %q, want the forced CONFIGURING", got.Status)
	}
}

func TestSimFaults(t *testing.T) {
	tests := []struct {
		name      string
		fault     cloudsim.Fault
		call      func(ctx context.Context, c *apiclient.Client) error
		op        string
		wantReqs  int
		wantErr   func(error) bool // nil: success
		wantSleep time.Duration    // a requested sleep that must have been recorded; 0: none checked
	}{
		{
			name:  "read recovers from 503",
			fault: cloudsim.Fault{Operation: apiclient.OpListServices, Status: 503, Count: 2},
			call:  func(ctx context.Context, c *apiclient.Client) error { _, err := c.ListServices(ctx); return err },
			op:    apiclient.OpListServices, wantReqs: 3,
		},
		{
			name:  "read honours 429 Retry-After",
			fault: cloudsim.Fault{Operation: apiclient.OpListVPCs, Status: 429, RetryAfter: "3", Count: 1},
			call:  func(ctx context.Context, c *apiclient.Client) error { _, err := c.ListVPCs(ctx); return err },
			op:    apiclient.OpListVPCs, wantReqs: 2, wantSleep: 3 * time.Second,
		},
		{
			name:  "read recovers from a dropped connection",
			fault: cloudsim.Fault{Operation: apiclient.OpGetAuthInfo, DropConnection: true, Count: 1},
			call:  func(ctx context.Context, c *apiclient.Client) error { _, err := c.GetAuthInfo(ctx); return err },
			op:    apiclient.OpGetAuthInfo, wantReqs: 2,
		},
		{
			name:  "write not retried on 500",
			fault: cloudsim.Fault{Operation: apiclient.OpCreateVPC, Status: 500, Count: 1},
			call: func(ctx context.Context, c *apiclient.Client) error {
				_, err := c.CreateVPC(ctx, apiclient.CreateVPCRequest{Name: "v", CIDR: "10.9.0.0/16", RegionCode: "r"})
				return err
			},
			op: apiclient.OpCreateVPC, wantReqs: 1, wantErr: func(err error) bool { return apiclient.StatusCode(err)/100 == 5 },
		},
		{
			name:  "write not retried on a dropped connection",
			fault: cloudsim.Fault{Operation: apiclient.OpCreateService, DropConnection: true, Count: 1},
			call: func(ctx context.Context, c *apiclient.Client) error {
				_, err := c.CreateService(ctx, apiclient.CreateServiceRequest{Name: "x", RegionCode: "r", CPUMillis: apiclient.SizeOf(1), MemoryGBs: apiclient.SizeOf(1)})
				return err
			},
			op: apiclient.OpCreateService, wantReqs: 1,
			wantErr: func(err error) bool { var t *apiclient.TransportError; return errors.As(err, &t) },
		},
		{
			name:  "write retried on 429",
			fault: cloudsim.Fault{Operation: apiclient.OpCreateVPC, Status: 429, RetryAfter: "1", Count: 1},
			call: func(ctx context.Context, c *apiclient.Client) error {
				_, err := c.CreateVPC(ctx, apiclient.CreateVPCRequest{Name: "v", CIDR: "10.9.0.0/16", RegionCode: "r"})
				return err
			},
			op: apiclient.OpCreateVPC, wantReqs: 2, wantSleep: time.Second,
		},
		{
			name:  "retry budget runs out",
			fault: cloudsim.Fault{Operation: apiclient.OpListServices, Status: 503},
			call:  func(ctx context.Context, c *apiclient.Client) error { _, err := c.ListServices(ctx); return err },
			op:    apiclient.OpListServices, wantReqs: 1 + apiclient.DefaultMaxRetries,
			wantErr: func(err error) bool {
				return (apiclient.StatusCode(err)/100 == 5) && strings.Contains(err.Error(), "after 4 attempts")
			},
		},
		{
			name:  "malformed body is a decode error, not retried",
			fault: cloudsim.Fault{Operation: apiclient.OpGetService, Malformed: true, Count: 1},
			call:  func(ctx context.Context, c *apiclient.Client) error { _, err := c.GetService(ctx, "any"); return err },
			op:    apiclient.OpGetService, wantReqs: 1,
			wantErr: func(err error) bool { var d *apiclient.DecodeError; return errors.As(err, &d) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim, base := newSim(t)
			// A fresh client: its first request opens a new connection,
			// which net/http never replays by itself, so the count below
			// is the client's own attempts.
			c, rec := simClient(t, base, readWrite, nil)
			sim.AddFault(tt.fault)
			err := tt.call(t.Context(), c)
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatalf("err = %v, want success", err)
			case tt.wantErr != nil && !tt.wantErr(err):
				t.Fatalf("err = %v, not the expected kind", err)
			}
			if n := sim.RequestCount(tt.op); n != tt.wantReqs {
				t.Errorf("simulator saw %d requests of %s, want %d", n, tt.op, tt.wantReqs)
			}
			if tt.wantSleep != 0 && !slices.Contains(rec.sleeps, tt.wantSleep) {
				t.Errorf("sleeps %v lack the Retry-After %v", rec.sleeps, tt.wantSleep)
			}
		})
	}
}

// TestSimDemoDecodes reads the whole demo scenario, which exercises every
// optional field the simulator emits.
func TestSimDemoDecodes(t *testing.T) {
	sim, base := newSim(t)
	sim.LoadDemo(simProject)
	c, _ := simClient(t, base, readOnly, nil)
	ctx := t.Context()
	services := must[[]apiclient.Service](t, "ListServices")(c.ListServices(ctx))
	if len(services) == 0 {
		t.Fatal("demo has no services")
	}
	replicaSets, poolers := 0, 0
	for _, s := range services {
		if s.ServiceID == "" || s.Status == "" || s.Created.IsZero() {
			t.Errorf("service decoded incompletely: %+v", s)
		}
		if s.ConnectionPooler != nil {
			poolers++
		}
		rs := must[[]apiclient.ReplicaSet](t, "ListReplicaSets")(c.ListReplicaSets(ctx, s.ServiceID))
		replicaSets += len(rs)
	}
	if replicaSets == 0 || poolers == 0 {
		t.Errorf("demo decoded %d replica sets and %d poolers, want some of each", replicaSets, poolers)
	}
	peerings, withError := 0, 0
	for _, v := range must[[]apiclient.VPC](t, "ListVPCs")(c.ListVPCs(ctx)) {
		for _, p := range must[[]apiclient.Peering](t, "ListPeerings")(c.ListPeerings(ctx, v.ID)) {
			got := must[*apiclient.Peering](t, "GetPeering")(c.GetPeering(ctx, v.ID, p.ID))
			if got.ID != p.ID {
				t.Errorf("GetPeering(%s) = %+v", p.ID, got)
			}
			peerings++
			if p.ErrorMessage != nil {
				withError++
			}
		}
	}
	if peerings == 0 || withError == 0 {
		t.Errorf("demo decoded %d peerings, %d with an error message", peerings, withError)
	}
}
