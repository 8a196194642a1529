package cloudsim

import (
	"net/http"
	"strings"
	"testing"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

const vpcsPath = "/v1/projects/" + testProject + "/vpcs"

func (e *env) createVPC(name string) string {
	e.t.Helper()
	body := map[string]any{"name": name, "cidr": "10.0.0.0/16", "region_code": "us-east-1"}
	return decode[apiclient.VPC](e.t, e.must(http.StatusCreated, "POST", vpcsPath, body)).ID
}

func TestVPCOperations(t *testing.T) {
	e := newEnv(t, Timings{})
	raw := e.must(http.StatusCreated, "POST", vpcsPath, map[string]any{"name": "net", "cidr": "10.1.0.0/16", "region_code": "eu-west-1"})
	v := decode[apiclient.VPC](t, raw)
	if v.ID == "" || v.Name != "net" || v.CIDR != "10.1.0.0/16" || v.RegionCode != "eu-west-1" {
		t.Fatalf("create response: %s", raw)
	}
	one := vpcsPath + "/" + v.ID
	if got := decode[apiclient.VPC](t, e.must(http.StatusOK, "GET", one, nil)); got != v {
		t.Errorf("get: %+v, want %+v", got, v)
	}
	if list := decode[[]apiclient.VPC](t, e.must(http.StatusOK, "GET", vpcsPath, nil)); len(list) != 1 || list[0] != v {
		t.Errorf("list: %+v", list)
	}
	renamed := decode[apiclient.VPC](t, e.must(http.StatusOK, "POST", one+"/rename", map[string]any{"name": "renamed"}))
	if renamed.Name != "renamed" || renamed.ID != v.ID {
		t.Errorf("rename response: %+v", renamed)
	}
	if raw := e.must(http.StatusNoContent, "DELETE", one, nil); len(raw) != 0 {
		t.Errorf("delete body %q", raw)
	}
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"GET", one, nil}, {"DELETE", one, nil}, {"POST", one + "/rename", map[string]any{"name": "x"}},
		{"GET", one + "/peerings", nil},
	} {
		e.mustError(http.StatusNotFound, "NOT_FOUND", tc.method, tc.path, tc.body)
	}
	if list := e.must(http.StatusOK, "GET", vpcsPath, nil); string(list) != "[]" {
		t.Errorf("empty list is %s, want []", list)
	}
}

func TestVPCValidation(t *testing.T) {
	e := newEnv(t, Timings{})
	id := e.createVPC("v")
	tests := []struct {
		name, path string
		body       any
		field      string
	}{
		{"missing cidr", vpcsPath, map[string]any{"name": "n", "region_code": "r"}, "cidr"},
		{"bad cidr", vpcsPath, map[string]any{"name": "n", "cidr": "10.0.0.0", "region_code": "r"}, "cidr"},
		{"IPv6 cidr", vpcsPath, map[string]any{"name": "n", "cidr": "fd00::/8", "region_code": "r"}, "cidr"},
		{"prefix too long", vpcsPath, map[string]any{"name": "n", "cidr": "10.0.0.0/33", "region_code": "r"}, "cidr"},
		{"blank name", vpcsPath, map[string]any{"name": "", "cidr": "10.0.0.0/8", "region_code": "r"}, "name"},
		{"missing region", vpcsPath, map[string]any{"name": "n", "cidr": "10.0.0.0/8"}, "region_code"},
		{"rename blank", vpcsPath + "/" + id + "/rename", map[string]any{"name": " "}, "name"},
		{"rename wrong type", vpcsPath + "/" + id + "/rename", map[string]any{"name": []string{"a"}}, "name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			if eb := e.mustError(http.StatusBadRequest, "INVALID_REQUEST", "POST", tt.path, tt.body); !strings.Contains(eb.Message, tt.field) {
				t.Errorf("message %q does not name %q", eb.Message, tt.field)
			}
		})
	}
}

func TestVPCDeleteConflicts(t *testing.T) {
	e := newEnv(t, Timings{})
	id := e.createVPC("v")
	one := vpcsPath + "/" + id
	pr := e.createPeering(id)
	e.mustError(http.StatusConflict, "CONFLICT", "DELETE", one, nil)
	e.must(http.StatusNoContent, "DELETE", one+"/peerings/"+pr, nil)
	e.must(http.StatusNoContent, "DELETE", one, nil)
}
