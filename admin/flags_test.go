package admin

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// TestAllowFlag: --admin.allow takes a comma-separated list as well as
// repeated flags, and an unknown name's error names it and says how the
// list is written.
func TestAllowFlag(t *testing.T) {
	// allowed starts a listener with args and returns the operations it
	// exports as allowed.
	listener := func(args ...string) ([]string, error) {
		t.Helper()
		app := kingpin.New("test", "")
		f := AddFlags(app)
		if _, err := app.Parse(append([]string{"--admin.listen-address=127.0.0.1:0"}, args...)); err != nil {
			t.Fatal(err)
		}
		reg := prometheus.NewRegistry()
		opts := Options{Token: "t", Registerer: reg, Logger: slog.New(slog.DiscardHandler), Projects: func(string) (Project, bool) { return Project{}, false }}
		_, cleanup, err := f.Listener(context.Background(), opts, false, nil)
		defer cleanup()
		if err != nil {
			return nil, err
		}
		fams, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var allowed []string
		for _, fam := range fams {
			if fam.GetName() == "clouddb_exporter_admin_allowed_operation_info" {
				for _, m := range fam.GetMetric() {
					allowed = append(allowed, m.GetLabel()[0].GetValue())
				}
			}
		}
		slices.Sort(allowed)
		return allowed, nil
	}
	want := []string{apiclient.OpResizeService, apiclient.OpSetHA, apiclient.OpStartService}
	for _, args := range [][]string{
		{"--admin.allow=resizeService,setHA,startService"},
		{"--admin.allow=resizeService, setHA", "--admin.allow=startService"},
		{"--admin.allow=resizeService", "--admin.allow=setHA", "--admin.allow=startService"},
	} {
		got, err := listener(args...)
		if err != nil {
			t.Errorf("%v: %v", args, err)
			continue
		}
		if !slices.Equal(got, slices.Sorted(slices.Values(want))) {
			t.Errorf("%v: allowed %v, want %v", args, got, want)
		}
	}
	for _, tc := range []struct{ arg, name string }{
		{"--admin.allow=resizeService,resizeServce", `"resizeServce"`},
		{"--admin.allow=resizeService;setHA", `"resizeService;setHA"`},
		{"--admin.allow=resizeService,,setHA", `""`},
	} {
		_, err := listener(tc.arg)
		if err == nil || !strings.Contains(err.Error(), tc.name+" is not an operation name") || !strings.Contains(err.Error(), "comma-separated") {
			t.Errorf("%s: %v, want an error naming %s and saying the list is comma-separated", tc.arg, err, tc.name)
		}
	}
}
