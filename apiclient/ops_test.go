package apiclient

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"testing"
	"time"
)

// Ids with characters that must be path-escaped, and their escaped forms.
const (
	sID    = "svc 1/a"
	sIDEsc = "svc%201%2Fa"
	rID    = "rs?x"
	rIDEsc = "rs%3Fx"
	vID    = "vpc#1"
	vIDEsc = "vpc%231"
	pID    = "pe%r"
	pIDEsc = "pe%25r"
)

type opCase struct {
	op     string
	call   func(ctx context.Context, c *Client) (any, error)
	method string
	uri    string // request URI below the server root, as sent
	body   string // expected JSON request body; "" for none
	status int    // documented success status
	resp   string // response body
	want   any    // expected result; nil for operations returning only an error
}

var (
	errMsg      = "boom"
	created, _  = time.Parse(time.RFC3339, "2024-05-01T10:00:00Z")
	serviceJSON = `{"service_id":"s1","project_id":"proj-1","name":"db","region_code":"us-east-1",
		"service_type":"POSTGRES","status":"READY","created":"2024-05-01T10:00:00Z","paused":false,
		"resources":[{"id":"r1","spec":{"cpu_millis":1000,"memory_gbs":4,"volume_type":""}}],
		"metadata":{"environment":"DEV"},"endpoint":{"host":"h","port":5432}}`
	serviceWant = Service{
		ServiceID: "s1", ProjectID: "proj-1", Name: "db", RegionCode: "us-east-1", ServiceType: "POSTGRES",
		Status: "READY", Created: Time{created}, Paused: boolp(false),
		Resources: []Resource{{ID: "r1", Spec: &ResourceSpec{CPUMillis: intp(1000), MemoryGBs: intp(4)}}},
		Metadata:  &Metadata{Environment: "DEV"}, Endpoint: &Endpoint{Host: "h", Port: 5432},
	}
	msgJSON = `{"message":"done"}`
	msgWant = &Message{Message: "done"}
	rsJSON  = `{"id":"rs1","name":"r","status":"active","nodes":2,"cpu_millis":500,"memory_gbs":2}`
	rsWant  = ReplicaSet{ID: "rs1", Name: "r", Status: "active", Nodes: 2, CPUMillis: 500, MemoryGBs: 2}
	vpcJSON = `{"id":"v1","name":"net","cidr":"10.0.0.0/16","region_code":"us-east-1"}`
	vpcWant = VPC{ID: "v1", Name: "net", CIDR: "10.0.0.0/16", RegionCode: "us-east-1"}
	peJSON  = `{"id":"p1","peer_account_id":"a","peer_region_code":"eu","peer_vpc_id":"pv","provisioned_id":"x","status":"active","error_message":"boom"}`
	peWant  = Peering{ID: "p1", PeerAccountID: "a", PeerRegionCode: "eu", PeerVPCID: "pv", ProvisionedID: "x", Status: "active", ErrorMessage: &errMsg}
)

func withPassword(s Service, pw Secret) *Service {
	s.InitialPassword = pw
	return &s
}

var opCases = []opCase{
	{
		op: OpGetAuthInfo, method: "GET", uri: "/v1/auth/info", status: 200,
		call: func(ctx context.Context, c *Client) (any, error) { return c.GetAuthInfo(ctx) },
		resp: `{"apiKey":{"created":"2024-05-01T10:00:00Z","issuing_user":{"id":"u","email":"u@x","name":"U"},
			"name":"k","project":{"id":"proj-1","name":"P","plan_type":"FREE"},"public_key":"pk"},"type":"apiKey"}`,
		want: &AuthInfo{Type: "apiKey", APIKeyDeprecated: &APIKeyInfo{Created: Time{created}, IssuingUser: User{ID: "u", Email: "u@x", Name: "U"},
			Name: "k", Project: AuthProject{ID: "proj-1", Name: "P", PlanType: "FREE"}, PublicKey: "pk"}},
	},
	{
		op: OpListServices, method: "GET", uri: "/v1/projects/proj-1/services", status: 200,
		call: func(ctx context.Context, c *Client) (any, error) { return c.ListServices(ctx) },
		resp: "[" + serviceJSON + "]", want: []Service{serviceWant},
	},
	{
		op: OpCreateService, method: "POST", uri: "/v1/projects/proj-1/services", status: 202,
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.CreateService(ctx, CreateServiceRequest{Name: "db", RegionCode: "us-east-1", CPUMillis: SizeOf(1000), MemoryGBs: SizeOf(4)})
		},
		body: `{"name":"db","addons":[],"region_code":"us-east-1","cpu_millis":"1000","memory_gbs":"4"}`,
		resp: serviceJSON[:len(serviceJSON)-1] + `,"initial_password":"pw"}`, want: withPassword(serviceWant, "pw"),
	},
	{
		op: OpGetService, method: "GET", uri: "/v1/projects/proj-1/services/" + sIDEsc, status: 200,
		call: func(ctx context.Context, c *Client) (any, error) { return c.GetService(ctx, sID) },
		resp: serviceJSON, want: &serviceWant,
	},
	{
		op: OpDeleteService, method: "DELETE", uri: "/v1/projects/proj-1/services/" + sIDEsc, status: 202,
		call: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteService(ctx, sID) },
		resp: "accepted, not JSON",
	},
	{
		op: OpResizeService, method: "POST", uri: "/v1/projects/proj-1/services/" + sIDEsc + "/resize", status: 202,
		call: func(ctx context.Context, c *Client) (any, error) {
			return nil, c.ResizeService(ctx, sID, ResizeServiceRequest{CPUMillis: SizeOf(2000), MemoryGBs: SizeOf(8)})
		},
		body: `{"cpu_millis":"2000","memory_gbs":"8"}`, resp: msgJSON,
	},
	{
		op: OpUpdatePassword, method: "POST", uri: "/v1/projects/proj-1/services/" + sIDEsc + "/updatePassword", status: 204,
		call: func(ctx context.Context, c *Client) (any, error) {
			return nil, c.UpdatePassword(ctx, sID, UpdatePasswordRequest{Password: "n3w"})
		},
		body: `{"password":"n3w"}`,
	},
	{
		op: OpSetServiceEnvironment, method: "POST", uri: "/v1/projects/proj-1/services/" + sIDEsc + "/setEnvironment", status: 200,
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.SetServiceEnvironment(ctx, sID, SetEnvironmentRequest{Environment: EnvironmentProd})
		},
		body: `{"environment":"PROD"}`, resp: msgJSON, want: msgWant,
	},
	{
		op: OpSetHA, method: "POST", uri: "/v1/projects/proj-1/services/" + sIDEsc + "/setHA", status: 202,
		call: func(ctx context.Context, c *Client) (any, error) {
			return nil, c.SetHA(ctx, sID, SetHARequest{ReplicaCount: new(int64(2)), SyncReplicaCount: new(int64(1))})
		},
		body: `{"replica_count":2,"sync_replica_count":1}`,
	},
	{
		op: OpEnableServicePooler, method: "POST", uri: "/v1/projects/proj-1/services/" + sIDEsc + "/enablePooler", status: 200,
		call: func(ctx context.Context, c *Client) (any, error) { return c.EnableServicePooler(ctx, sID) },
		resp: msgJSON, want: msgWant,
	},
	{
		op: OpDisableServicePooler, method: "POST", uri: "/v1/projects/proj-1/services/" + sIDEsc + "/disablePooler", status: 200,
		call: func(ctx context.Context, c *Client) (any, error) { return c.DisableServicePooler(ctx, sID) },
		resp: msgJSON, want: msgWant,
	},
	{
		op: OpForkService, method: "POST", uri: "/v1/projects/proj-1/services/" + sIDEsc + "/forkService", status: 202,
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.ForkService(ctx, sID, ForkServiceRequest{ForkStrategy: ForkPITR, TargetTime: &Time{Time: created}, Name: "f", CPUMillis: SizeShared, MemoryGBs: SizeShared})
		},
		body: `{"fork_strategy":"PITR","target_time":"2024-05-01T10:00:00Z","name":"f","cpu_millis":"shared","memory_gbs":"shared"}`,
		resp: `{"service_id":"s2","initial_password":"fpw","forked_from":{"project_id":"proj-1","service_id":"s1","is_standby":false}}`,
		want: &Service{ServiceID: "s2", InitialPassword: "fpw", ForkedFrom: &ForkedFrom{ProjectID: "proj-1", ServiceID: "s1"}},
	},
	{
		op: OpStartService, method: "POST", uri: "/v1/projects/proj-1/services/" + sIDEsc + "/start", status: 202,
		call: func(ctx context.Context, c *Client) (any, error) { return c.StartService(ctx, sID) },
		resp: `{"service_id":"s1","status":"RESUMING"}`, want: &Service{ServiceID: "s1", Status: ServiceResuming},
	},
	{
		op: OpStopService, method: "POST", uri: "/v1/projects/proj-1/services/" + sIDEsc + "/stop", status: 202,
		call: func(ctx context.Context, c *Client) (any, error) { return c.StopService(ctx, sID) },
		resp: `{"service_id":"s1","status":"PAUSING"}`, want: &Service{ServiceID: "s1", Status: ServicePausing},
	},
	{
		op: OpRenameService, method: "POST", uri: "/v1/projects/proj-1/services/" + sIDEsc + "/rename", status: 200,
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.RenameService(ctx, sID, RenameServiceRequest{Name: "n2"})
		},
		body: `{"name":"n2"}`, resp: `{"service_id":"s1","name":"n2"}`, want: &Service{ServiceID: "s1", Name: "n2"},
	},
	{
		op: OpGetServiceMetricsAvailableSeries, method: "GET", uri: "/v1/projects/proj-1/services/" + sIDEsc + "/metrics/available-series", status: 200,
		call: func(ctx context.Context, c *Client) (any, error) { return c.GetServiceMetricsAvailableSeries(ctx, sID) },
		resp: `["p_system_cpu_usage_millicores",7,"p_database_qps"]`, want: []string{"p_system_cpu_usage_millicores", "p_database_qps"},
	},
	{
		op: OpGetServiceMetricsSeries, method: "POST", uri: "/v1/projects/proj-1/services/" + sIDEsc + "/metrics/series", status: 200,
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.GetServiceMetricsSeries(ctx, sID, SeriesRequest{Name: "p_database_qps", From: Time{created}, To: Time{created.Add(2 * time.Minute)}, BucketSeconds: 60})
		},
		body: `{"name":"p_database_qps","from":"2024-05-01T10:00:00Z","to":"2024-05-01T10:02:00Z","bucket_seconds":60}`,
		resp: `[{"labels":{"role":"primary","ordinal":0,"zone":"a"},"data":[{"time":"2024-05-01T10:00:00Z","value":1.5},{"time":"2024-05-01T10:01:00Z","value":null}]}]`,
		want: []Series{{Labels: SeriesLabels{"role": "primary", "ordinal": "0", "zone": "a"}, Data: []SeriesPoint{
			{Time: Time{created}, Value: NullableFloat{Value: 1.5, Valid: true}}, {Time: Time{created.Add(time.Minute)}}}}},
	},
	{
		op: OpGetServiceLogs, method: "GET", uri: "/v1/projects/proj-1/services/" + sIDEsc + "/logs?cursor=c%2B1&node=0&search=a&search=b&severities=ERROR&severities=FATAL&since=2024-05-01T10%3A00%3A00Z&until=2024-05-01T10%3A01%3A00Z", status: 200,
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.GetServiceLogs(ctx, sID, LogsQuery{Node: new(0), Cursor: "c+1", Since: created, Until: created.Add(time.Minute),
				Search: []string{"a", "b"}, Severities: []string{SeverityError, SeverityFatal}})
		},
		resp: `{"entries":[{"timestamp":"2024-05-01T10:00:30Z","message":"m","severity":"ERROR"}],"last_cursor":"next"}`,
		want: &LogPage{Entries: []LogEntry{{Timestamp: Time{created.Add(30 * time.Second)}, Message: "m", Severity: SeverityError}}, LastCursor: "next"},
	},
	{
		op: OpListProjects, method: "GET", uri: "/v1/projects", status: 200,
		call: func(ctx context.Context, c *Client) (any, error) { return c.ListProjects(ctx) },
		resp: `[{"id":"p1","name":"One"},{"id":"p2","name":"Two"}]`, want: []Project{{ID: "p1", Name: "One"}, {ID: "p2", Name: "Two"}},
	},
	{
		op: OpAttachToVPC, method: "POST", uri: "/v1/projects/proj-1/services/" + sIDEsc + "/attachToVPC", status: 202,
		call: func(ctx context.Context, c *Client) (any, error) {
			return nil, c.AttachToVPC(ctx, sID, VPCAttachmentRequest{VPCID: "v1"})
		},
		body: `{"vpc_id":"v1"}`,
	},
	{
		op: OpDetachFromVPC, method: "POST", uri: "/v1/projects/proj-1/services/" + sIDEsc + "/detachFromVPC", status: 202,
		call: func(ctx context.Context, c *Client) (any, error) {
			return nil, c.DetachFromVPC(ctx, sID, VPCAttachmentRequest{VPCID: "v1"})
		},
		body: `{"vpc_id":"v1"}`, resp: "{",
	},
	{
		op: OpListReplicaSets, method: "GET", uri: "/v1/projects/proj-1/services/" + sIDEsc + "/replicaSets", status: 200,
		call: func(ctx context.Context, c *Client) (any, error) { return c.ListReplicaSets(ctx, sID) },
		resp: "[" + rsJSON + "]", want: []ReplicaSet{rsWant},
	},
	{
		op: OpCreateReplicaSet, method: "POST", uri: "/v1/projects/proj-1/services/" + sIDEsc + "/replicaSets", status: 202,
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.CreateReplicaSet(ctx, sID, CreateReplicaSetRequest{Name: "r", CPUMillis: 500, MemoryGBs: 2, Nodes: 2})
		},
		body: `{"name":"r","cpu_millis":500,"memory_gbs":2,"nodes":2}`, resp: rsJSON, want: &rsWant,
	},
	{
		op: OpDeleteReplicaSet, method: "DELETE", uri: "/v1/projects/proj-1/services/" + sIDEsc + "/replicaSets/" + rIDEsc, status: 202,
		call: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteReplicaSet(ctx, sID, rID) },
	},
	{
		op: OpResizeReplicaSet, method: "POST", uri: "/v1/projects/proj-1/services/" + sIDEsc + "/replicaSets/" + rIDEsc + "/resize", status: 202,
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.ResizeReplicaSet(ctx, sID, rID, ResizeReplicaSetRequest{CPUMillis: "1000", MemoryGBs: "4"})
		},
		body: `{"cpu_millis":"1000","memory_gbs":"4"}`, resp: msgJSON, want: msgWant,
	},
	{
		op: OpEnableReplicaSetPooler, method: "POST", uri: "/v1/projects/proj-1/services/" + sIDEsc + "/replicaSets/" + rIDEsc + "/enablePooler", status: 200,
		call: func(ctx context.Context, c *Client) (any, error) { return c.EnableReplicaSetPooler(ctx, sID, rID) },
		resp: msgJSON, want: msgWant,
	},
	{
		op: OpDisableReplicaSetPooler, method: "POST", uri: "/v1/projects/proj-1/services/" + sIDEsc + "/replicaSets/" + rIDEsc + "/disablePooler", status: 200,
		call: func(ctx context.Context, c *Client) (any, error) { return c.DisableReplicaSetPooler(ctx, sID, rID) },
		resp: msgJSON, want: msgWant,
	},
	{
		op: OpSetReplicaSetEnvironment, method: "POST", uri: "/v1/projects/proj-1/services/" + sIDEsc + "/replicaSets/" + rIDEsc + "/setEnvironment", status: 200,
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.SetReplicaSetEnvironment(ctx, sID, rID, SetEnvironmentRequest{Environment: EnvironmentDev})
		},
		body: `{"environment":"DEV"}`, resp: msgJSON, want: msgWant,
	},
	{
		op: OpListVPCs, method: "GET", uri: "/v1/projects/proj-1/vpcs", status: 200,
		call: func(ctx context.Context, c *Client) (any, error) { return c.ListVPCs(ctx) },
		resp: "[" + vpcJSON + "]", want: []VPC{vpcWant},
	},
	{
		op: OpCreateVPC, method: "POST", uri: "/v1/projects/proj-1/vpcs", status: 201,
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.CreateVPC(ctx, CreateVPCRequest{Name: "net", CIDR: "10.0.0.0/16", RegionCode: "us-east-1"})
		},
		body: `{"name":"net","cidr":"10.0.0.0/16","region_code":"us-east-1"}`, resp: vpcJSON, want: &vpcWant,
	},
	{
		op: OpGetVPC, method: "GET", uri: "/v1/projects/proj-1/vpcs/" + vIDEsc, status: 200,
		call: func(ctx context.Context, c *Client) (any, error) { return c.GetVPC(ctx, vID) },
		resp: vpcJSON, want: &vpcWant,
	},
	{
		op: OpRenameVPC, method: "POST", uri: "/v1/projects/proj-1/vpcs/" + vIDEsc + "/rename", status: 200,
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.RenameVPC(ctx, vID, RenameVPCRequest{Name: "net"})
		},
		body: `{"name":"net"}`, resp: vpcJSON, want: &vpcWant,
	},
	{
		op: OpDeleteVPC, method: "DELETE", uri: "/v1/projects/proj-1/vpcs/" + vIDEsc, status: 204,
		call: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteVPC(ctx, vID) },
	},
	{
		op: OpListPeerings, method: "GET", uri: "/v1/projects/proj-1/vpcs/" + vIDEsc + "/peerings", status: 200,
		call: func(ctx context.Context, c *Client) (any, error) { return c.ListPeerings(ctx, vID) },
		resp: "[" + peJSON + "]", want: []Peering{peWant},
	},
	{
		op: OpCreatePeering, method: "POST", uri: "/v1/projects/proj-1/vpcs/" + vIDEsc + "/peerings", status: 201,
		call: func(ctx context.Context, c *Client) (any, error) {
			return c.CreatePeering(ctx, vID, CreatePeeringRequest{PeerAccountID: "a", PeerRegionCode: "eu", PeerVPCID: "pv"})
		},
		body: `{"peer_account_id":"a","peer_region_code":"eu","peer_vpc_id":"pv"}`,
		resp: `{"id":"p1","peer_account_id":"a","peer_region_code":"eu","peer_vpc_id":"pv","provisioned_id":"x","status":"pending"}`,
		want: &Peering{ID: "p1", PeerAccountID: "a", PeerRegionCode: "eu", PeerVPCID: "pv", ProvisionedID: "x", Status: "pending"},
	},
	{
		op: OpGetPeering, method: "GET", uri: "/v1/projects/proj-1/vpcs/" + vIDEsc + "/peerings/" + pIDEsc, status: 200,
		call: func(ctx context.Context, c *Client) (any, error) { return c.GetPeering(ctx, vID, pID) },
		resp: peJSON, want: &peWant,
	},
	{
		op: OpDeletePeering, method: "DELETE", uri: "/v1/projects/proj-1/vpcs/" + vIDEsc + "/peerings/" + pIDEsc, status: 204,
		call: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeletePeering(ctx, vID, pID) },
	},
}

// TestOpCasesAreCatalogOperations: opCases check decoded values and
// exact requests beyond the generic tests (TestEveryReadCallsItsCatalogEntry,
// TestEveryWriteCallsItsCatalogEntry), which need no case: a case is
// optional, but names an operation of the catalog once.
func TestOpCasesAreCatalogOperations(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range opCases {
		if _, ok := byName[tc.op]; !ok || seen[tc.op] {
			t.Errorf("operation %s unknown or listed twice", tc.op)
		}
		seen[tc.op] = true
	}
}

func TestOperations(t *testing.T) {
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(testAccessKey+":"+testSecretKey))
	for _, tc := range opCases {
		t.Run(tc.op, func(t *testing.T) {
			srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, tc.status, tc.resp) })
			c, _, obs := newTestClient(t, srv, nil)

			got, err := tc.call(t.Context(), c)
			if err != nil {
				t.Fatalf("%s: unexpected error: %v", tc.op, err)
			}
			if tc.want != nil && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s decoded\n%#v\nwant\n%#v", tc.op, got, tc.want)
			}

			reqs := srv.requests()
			if len(reqs) != 1 {
				t.Fatalf("%s sent %d requests, want 1", tc.op, len(reqs))
			}
			r := reqs[0]
			if r.Method != tc.method || r.URI != tc.uri {
				t.Errorf("%s sent %s %s, want %s %s", tc.op, r.Method, r.URI, tc.method, tc.uri)
			}
			wantAuth := basic
			if tc.op == OpGetAuthInfo {
				wantAuth = "Bearer " + testAPIKey
			}
			if r.Auth != wantAuth {
				t.Errorf("%s Authorization = %q, want %q", tc.op, r.Auth, wantAuth)
			}
			if r.Accept != "application/json" || r.UserAgent != DefaultUserAgent {
				t.Errorf("%s Accept = %q, User-Agent = %q", tc.op, r.Accept, r.UserAgent)
			}
			if tc.body == "" {
				if len(r.Body) != 0 || r.ContentType != "" {
					t.Errorf("%s sent body %q with Content-Type %q, want none", tc.op, r.Body, r.ContentType)
				}
			} else {
				if r.ContentType != "application/json" {
					t.Errorf("%s Content-Type = %q", tc.op, r.ContentType)
				}
				assertSameJSON(t, r.Body, tc.body)
			}
			if want := []string{tc.op + " " + strconv.Itoa(tc.status)}; !reflect.DeepEqual(obs.requests, want) {
				t.Errorf("observer saw %v, want %v", obs.requests, want)
			}
		})
	}
}

// TestOperationsRejectOtherStatus checks that each operation insists on its
// documented status: another 2xx is an *APIError too.
func TestOperationsRejectOtherStatus(t *testing.T) {
	for _, tc := range opCases {
		t.Run(tc.op, func(t *testing.T) {
			other := http.StatusOK
			if tc.status == http.StatusOK {
				other = http.StatusCreated
			}
			srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, other, tc.resp) })
			c, _, _ := newTestClient(t, srv, nil)
			got, err := tc.call(t.Context(), c)
			var apiErr *APIError
			if !errors.As(err, &apiErr) || apiErr.StatusCode != other || apiErr.Operation != tc.op {
				t.Fatalf("%s answered %d: err = %v, want *APIError with that status", tc.op, other, err)
			}
			if got != nil && !reflect.ValueOf(got).IsNil() {
				t.Errorf("%s returned %#v alongside an error", tc.op, got)
			}
		})
	}
}

func assertSameJSON(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("request body %q is not JSON: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad test JSON %q: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("request body = %s, want %s", got, want)
	}
}
