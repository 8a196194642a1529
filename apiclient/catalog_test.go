package apiclient

import (
	"net/http"
	"slices"
	"testing"
)

func TestCatalog(t *testing.T) {
	seen := map[string]bool{}
	routes := map[string]string{}
	for _, o := range Catalog() {
		if seen[o.Name] {
			t.Errorf("%s listed twice", o.Name)
		}
		seen[o.Name] = true
		if prev, dup := routes[o.Method+" "+o.Path]; dup {
			t.Errorf("%s and %s share the route %s %s", prev, o.Name, o.Method, o.Path)
		}
		routes[o.Method+" "+o.Path] = o.Name
		if o.Async != (o.Success == http.StatusAccepted) {
			t.Errorf("%s: async %v with success status %d", o.Name, o.Async, o.Success)
		}
		if o.Method == http.MethodGet && o.Write {
			t.Errorf("%s: a GET listed as a write", o.Name)
		}
		if got, ok := byName[o.Name]; !ok || got != o {
			t.Errorf("byName[%s] = %v, %v", o.Name, got, ok)
		}
	}
	if len(Operations) != len(seen) {
		t.Errorf("Operations has %d names, the catalog %d", len(Operations), len(seen))
	}
	if _, ok := byName["noSuchOperation"]; ok {
		t.Error("byName found an unknown name")
	}
	for _, tc := range []struct {
		op   string
		want []string
	}{
		{OpListServices, nil},
		{OpGetAuthInfo, nil},
		{OpResizeService, []string{"service_id"}},
		{OpDeleteReplicaSet, []string{"service_id", "replica_set_id"}},
		{OpDeletePeering, []string{"vpc_id", "peering_id"}},
	} {
		o, _ := byName[tc.op]
		if got := o.IDs(); !slices.Equal(got, tc.want) {
			t.Errorf("%s IDs() = %v, want %v", tc.op, got, tc.want)
		}
	}
}
