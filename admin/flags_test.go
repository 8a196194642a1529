package admin

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
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

// TestCheckCreatesNoAuditLog: --config.check (Flags.Check) checks the
// audit log without creating it, refuses one that could not be created,
// and leaves an existing one as it was; a start (Listener) creates it.
func TestCheckCreatesNoAuditLog(t *testing.T) {
	dir := t.TempDir()
	parse := func(auditLog string) *Flags {
		t.Helper()
		app := kingpin.New("test", "")
		f := AddFlags(app)
		if _, err := app.Parse([]string{"--admin.listen-address=127.0.0.1:0", "--admin.audit-log=" + auditLog}); err != nil {
			t.Fatal(err)
		}
		return f
	}
	opts := func() Options {
		return Options{Registerer: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler), Projects: func(string) (Project, bool) { return Project{}, false }}
	}
	// The flags give no token: --simulate on loopback generates one.
	const simulate = true

	path := filepath.Join(dir, "audit.log")
	if err := parse(path).Check(context.Background(), opts(), simulate); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Check left %s behind (stat: %v)", path, err)
	}

	for name, bad := range map[string]string{
		"missing directory":  filepath.Join(dir, "nope", "audit.log"),
		"parent is a file":   filepath.Join(path+".file", "audit.log"),
		"log is a directory": dir,
	} {
		if name == "parent is a file" {
			if err := os.WriteFile(path+".file", nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		err := parse(bad).Check(context.Background(), opts(), simulate)
		if err == nil || !strings.Contains(err.Error(), "--admin.audit-log") {
			t.Errorf("%s: Check = %v, want an error naming --admin.audit-log", name, err)
		}
	}

	// A start creates it; a check afterwards leaves it as it is.
	_, cleanup, err := parse(path).Listener(context.Background(), opts(), simulate, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cleanup()
	if err := os.WriteFile(path, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := parse(path).Check(context.Background(), opts(), simulate); err != nil {
		t.Fatalf("Check of an existing log: %v", err)
	}
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("Check changed the existing log: %d bytes at %v, was %d at %v", after.Size(), after.ModTime(), before.Size(), before.ModTime())
	}
}
