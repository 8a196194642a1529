package e2e

import (
	"net"
	"strings"
	"testing"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestTakenPortNamesItsFlag: a port already in use stops the exporter
// before anything starts (simulator, pollers), with one ERROR line naming
// the flag and its variable, and exit code 2 as any configuration error.
func TestTakenPortNamesItsFlag(t *testing.T) {
	t.Parallel()
	bin := testbin.Build(t, ".")
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = taken.Close() })
	addr := taken.Addr().String()
	project := []string{"CLOUDDB_API_URL=http://127.0.0.1:1/v1", "CLOUDDB_API_PROJECT_ID=p", "CLOUDDB_ACCESS_KEY=ak", "CLOUDDB_SECRET_KEY=topsecret-sk"}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"main listener, project", project, []string{"--web.listen-address=" + addr}, "--web.listen-address (CLOUDDB_WEB_LISTEN_ADDRESS): listen tcp " + addr},
		{"main listener, simulator", nil, []string{"--simulate", "--web.listen-address=" + addr}, "--web.listen-address (CLOUDDB_WEB_LISTEN_ADDRESS)"},
		{"admin listener", nil, []string{"--simulate", "--web.listen-address=127.0.0.1:0", "--admin.listen-address=" + addr}, "--admin.listen-address (CLOUDDB_ADMIN_LISTEN_ADDRESS): listen tcp " + addr},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out := testbin.Run(t, bin, tc.env, append([]string{"--log.format=logfmt"}, tc.args...)...)
			var errors []string
			for _, line := range strings.Split(out, "\n") {
				if strings.Contains(line, "level=ERROR") {
					errors = append(errors, line)
				}
			}
			if code != 2 || len(errors) != 1 || !strings.Contains(errors[0], tc.want) {
				t.Errorf("exit code %d and %d ERROR lines; want 2 and one naming %q:\n%s", code, len(errors), tc.want, out)
			}
			for _, started := range []string{"Collector failed", "Polling project", "Simulator started"} {
				if strings.Contains(out, started) {
					t.Errorf("%q logged: something started before the listeners were bound:\n%s", started, out)
				}
			}
		})
	}
}
