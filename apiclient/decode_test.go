package apiclient

import (
	"bytes"
	"context"
	"net/http"
	"reflect"
	"testing"
	"time"
)

// TestDecodeServices decodes literal JSON written from the spec's field
// tables (docs/api.md, "Service"), not marshalled from the structs, so that a wrong tag
// fails here.
func TestDecodeServices(t *testing.T) {
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	tests := []struct {
		name  string
		json  string
		check func(t *testing.T, s Service)
	}{
		{
			name: "full service",
			json: `[{"service_id":"s1","project_id":"p","name":"db","region_code":"us-east-1","service_type":"TIMESERIESDB",
				"status":"READY","created":"2024-05-01T10:00:00.123456Z","paused":true,
				"resources":[{"id":"r1","spec":{"cpu_millis":1000,"memory_gbs":4,"volume_type":"gp3"}}],
				"metadata":{"environment":"PROD"},"endpoint":{"host":"h.example","port":5432},
				"connection_pooler":{"endpoint":{"host":"p.example","port":6432}}}]`,
			check: func(t *testing.T, s Service) {
				want := Service{ServiceID: "s1", ProjectID: "p", Name: "db", RegionCode: "us-east-1", ServiceType: ServiceTypeTimeSeries,
					Status: ServiceReady, Created: Time{at("2024-05-01T10:00:00.123456Z")}, Paused: boolp(true),
					Resources: []Resource{{ID: "r1", Spec: &ResourceSpec{CPUMillis: intp(1000), MemoryGBs: intp(4), VolumeType: "gp3"}}},
					Metadata:  &Metadata{Environment: "PROD"}, Endpoint: &Endpoint{Host: "h.example", Port: 5432},
					ConnectionPooler: &ConnectionPooler{Endpoint: &Endpoint{Host: "p.example", Port: 6432}}}
				if !reflect.DeepEqual(s, want) {
					t.Errorf("got %#v\nwant %#v", s, want)
				}
			},
		},
		{
			name: "unknown fields ignored, unknown enum values kept",
			json: `[{"service_id":"s1","status":"HIBERNATING","service_type":"GRAPHDB","new_field":{"a":[1,2]},
				"endpoint":{"host":"h","port":1,"tls":true},"resources":[{"id":"r","spec":{"cpu_millis":1,"iops":3}}]}]`,
			check: func(t *testing.T, s Service) {
				if s.Status != "HIBERNATING" || s.ServiceType != "GRAPHDB" || s.Endpoint.Host != "h" || ptrValue(s.Resources[0].Spec.CPUMillis) != 1 {
					t.Errorf("got %#v", s)
				}
			},
		},
		{
			name: "absent optional objects are nil",
			json: `[{"service_id":"s1","resources":[{"id":"r"}]}]`,
			check: func(t *testing.T, s Service) {
				if s.Endpoint != nil || s.ConnectionPooler != nil || s.Metadata != nil || s.Resources[0].Spec != nil || !s.Created.IsZero() {
					t.Errorf("got %#v", s)
				}
				if s.Environment() != "" {
					t.Errorf("Environment() = %q", s.Environment())
				}
			},
		},
		{
			name: "null optional objects are nil",
			json: `[{"service_id":"s1","endpoint":null,"connection_pooler":null,"metadata":null,"created":null,
				"resources":[{"id":"r","spec":null}],"forked_from":null,"initial_password":null}]`,
			check: func(t *testing.T, s Service) {
				if s.Endpoint != nil || s.ConnectionPooler != nil || s.Metadata != nil || s.Resources[0].Spec != nil || s.ForkedFrom != nil || !s.Created.IsZero() {
					t.Errorf("got %#v", s)
				}
			},
		},
		{
			name: "null resources and pooler without endpoint",
			json: `[{"service_id":"s1","resources":null,"connection_pooler":{}}]`,
			check: func(t *testing.T, s Service) {
				if len(s.Resources) != 0 || s.ConnectionPooler == nil || s.ConnectionPooler.Endpoint != nil {
					t.Errorf("got %#v", s)
				}
			},
		},
		{
			name: "created without fractional seconds",
			json: `[{"created":"2024-05-01T10:00:00Z"}]`,
			check: func(t *testing.T, s Service) {
				if !s.Created.Equal(at("2024-05-01T10:00:00Z")) {
					t.Errorf("created = %v", s.Created)
				}
			},
		},
		{
			name: "created without zone is UTC",
			json: `[{"created":"2024-05-01T10:00:00.5"}]`,
			check: func(t *testing.T, s Service) {
				if !s.Created.Equal(at("2024-05-01T10:00:00.5Z")) {
					t.Errorf("created = %v", s.Created)
				}
			},
		},
		{
			name: "created with offset",
			json: `[{"created":"2024-05-01T12:00:00+02:00"}]`,
			check: func(t *testing.T, s Service) {
				if !s.Created.Equal(at("2024-05-01T10:00:00Z")) {
					t.Errorf("created = %v", s.Created)
				}
			},
		},
		{
			name: "integers as strings and null",
			json: `[{"endpoint":{"host":"h","port":"5432"},"resources":[{"id":"r","spec":{"cpu_millis":"1000","memory_gbs":null,"volume_type":""}}]}]`,
			check: func(t *testing.T, s Service) {
				if s.Endpoint.Port != 5432 || ptrValue(s.Resources[0].Spec.CPUMillis) != 1000 || s.Resources[0].Spec.MemoryGBs != nil {
					t.Errorf("got %#v", s)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []Service
			if err := decodeBody(OpListServices, []byte(tt.json), &got, nil); err != nil {
				t.Fatalf("decode: %v", err)
			}
			if len(got) != 1 {
				t.Fatalf("decoded %d services, want 1", len(got))
			}
			tt.check(t, got[0])
		})
	}
}

func TestDecodeOtherResources(t *testing.T) {
	var rs []ReplicaSet
	mustDecode(t, `[{"id":"r1","name":"n","status":"rebalancing","nodes":"3","cpu_millis":2000,"memory_gbs":null,
		"endpoint":{"host":"h","port":5432},"connection_pooler":null,"metadata":{"environment":"DEV"},"zone":"a"}]`, &rs)
	wantRS := []ReplicaSet{{ID: "r1", Name: "n", Status: "rebalancing", Nodes: 3, CPUMillis: 2000,
		Endpoint: &Endpoint{Host: "h", Port: 5432}, Metadata: &Metadata{Environment: "DEV"}}}
	if !reflect.DeepEqual(rs, wantRS) {
		t.Errorf("replica sets = %#v", rs)
	}

	var peerings []Peering
	mustDecode(t, `[{"id":"p1","status":"active","error_message":null},{"id":"p2","status":"failed","error_message":"quota"},{"id":"p3"}]`, &peerings)
	if peerings[0].ErrorMessage != nil || peerings[1].ErrorMessage == nil || *peerings[1].ErrorMessage != "quota" ||
		peerings[1].Status != "failed" || peerings[2].ErrorMessage != nil {
		t.Errorf("peerings = %#v", peerings)
	}

	var info AuthInfo
	mustDecode(t, `{"apiKey":{"created":"2024-01-02T03:04:05.678Z","issuing_user":{"id":"u1","email":"a@b.c","name":"A"},
		"name":"ci","project":{"id":"p","name":"P","plan_type":"ENTERPRISE"},"public_key":"pk","scopes":["x"]},"type":"apiKey"}`, &info)
	if info.Type != "apiKey" || info.Key().Project.PlanType != "ENTERPRISE" || info.Key().IssuingUser.Email != "a@b.c" ||
		info.Key().Created.Nanosecond() != 678000000 {
		t.Errorf("auth info = %#v", info)
	}
}

func mustDecode(t *testing.T, data string, out any) {
	t.Helper()
	if err := decodeBody("test", []byte(data), out, nil); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
}

// TestNullAndEmptyLists checks that every list operation turns null and []
// into an empty, non-nil slice.
func TestNullAndEmptyLists(t *testing.T) {
	for _, body := range []string{"null", "[]", " null \n"} {
		srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, body) })
		c, _, _ := newTestClient(t, srv, nil)
		ctx := t.Context()
		lists := map[string]func() (any, error){
			OpListServices:    func() (any, error) { return c.ListServices(ctx) },
			OpListReplicaSets: func() (any, error) { return c.ListReplicaSets(ctx, "s") },
			OpListVPCs:        func() (any, error) { return c.ListVPCs(ctx) },
			OpListPeerings:    func() (any, error) { return c.ListPeerings(ctx, "v") },
		}
		for op, list := range lists {
			got, err := list()
			if err != nil {
				t.Fatalf("%s of %q: %v", op, body, err)
			}
			if v := reflect.ValueOf(got); v.IsNil() || v.Len() != 0 {
				t.Errorf("%s of %q = %#v, want an empty non-nil slice", op, body, got)
			}
		}
	}
}

func TestDecodeRejectsWrongShapes(t *testing.T) {
	for _, data := range []string{``, `{`, `{"service_id":"s"}`, `"services"`, `[{"service_id":"s"}`} {
		var got []Service
		if err := decodeBody(OpListServices, []byte(data), &got, func(FieldError) {}); err == nil {
			t.Errorf("decode %q: no error", data)
		}
	}
}

// TestDecodeOneBadFieldCostsOneField: a value that does not decode drops
// that field of that element only, and is recorded on the resource.
func TestDecodeOneBadFieldCostsOneField(t *testing.T) {
	data := `[
		{"service_id": "a", "status": "READY", "created": "yesterday", "resources": [{"id": "r", "spec": {"cpu_millis": 1e308, "memory_gbs": 4}}]},
		{"service_id": "b", "status": "READY", "paused": "yes", "endpoint": {"host": "h", "port": "eighty"}},
		42,
		{"service_id": "c", "status": "UNSTABLE", "resources": [{"id": "r", "spec": {"cpu_millis": "NaN", "memory_gbs": "8"}}]}
	]`
	var got []Service
	var drops []FieldError
	if err := decodeBody(OpListServices, []byte(data), &got, func(e FieldError) { drops = append(drops, e) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].ServiceID != "a" || got[1].ServiceID != "b" || got[2].ServiceID != "c" {
		t.Fatalf("services %+v: want a, b, c (the non-object left out)", got)
	}
	fields := func(s Service) []string {
		var out []string
		for _, d := range s.Dropped {
			out = append(out, d.Field)
		}
		return out
	}
	for i, want := range [][]string{{"created", "resources.0.spec.cpu_millis"}, {"paused", "endpoint.port"}, {"resources.0.spec.cpu_millis"}} {
		if got := fields(got[i]); !reflect.DeepEqual(got, want) {
			t.Errorf("service %s dropped %v, want %v", got, got, want)
		}
	}
	if len(drops) != 6 { // five fields and one element
		t.Errorf("%d drops reported, want 6: %+v", len(drops), drops)
	}
	a := got[0]
	if a.Status != "READY" || ptrValue(a.Resources[0].Spec.MemoryGBs) != 4 || a.Resources[0].ID != "r" || !a.Created.IsZero() {
		t.Errorf("service a kept %+v", a)
	}
	if !a.FieldDropped("resources.0.spec.cpu_millis") || a.FieldDropped("resources.0.spec.memory_gbs") {
		t.Error("FieldDropped does not tell the dropped field")
	}
	if got[1].Endpoint == nil || got[1].Endpoint.Host != "h" || ptrValue(got[2].Resources[0].Spec.MemoryGBs) != 8 {
		t.Errorf("siblings of a bad field lost: %+v %+v", got[1].Endpoint, got[2].Resources[0].Spec)
	}
}

// TestDecodeErrorsObserved: each field left out is counted once for its
// operation.
func TestDecodeErrorsObserved(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, `[{"id": "rs", "nodes": "many", "cpu_millis": 1e308}]`)
	})
	c, _, obs := newTestClient(t, srv, nil)
	list, err := c.ListReplicaSets(context.Background(), "s")
	if err != nil || len(list) != 1 || len(list[0].Dropped) != 2 || !list[0].FieldDropped("nodes") {
		t.Fatalf("list %+v err %v", list, err)
	}
	if !reflect.DeepEqual(obs.decodeErrors, []string{OpListReplicaSets, OpListReplicaSets}) {
		t.Errorf("decode errors observed: %v", obs.decodeErrors)
	}
}

// decodeBody decodes a whole answer as a call does, without bounds.
func decodeBody(op string, data []byte, out any, drop func(FieldError)) error {
	return decodeStream(op, bytes.NewReader(data), out, drop, nil, func() ([]byte, bool) {
		return data[:min(len(data), snippetPrefix)], len(data) > snippetPrefix
	}, streamOptions{})
}
