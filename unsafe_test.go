package main

import (
	"slices"
	"testing"
)

// TestUnsafeSettingsOfTheMainListener: one "Unsafe setting" each for
// running as root, and for the lifecycle route or pprof on a listener off
// loopback without a web configuration (no TLS nor basic auth: anyone who
// reaches the port may reload or profile).
func TestUnsafeSettingsOfTheMainListener(t *testing.T) {
	for _, tc := range []struct {
		args []string
		euid int
		want []string
	}{
		{[]string{"--web.listen-address=127.0.0.1:9866", "--web.enable-lifecycle", "--web.enable-pprof"}, 1000, nil},
		{[]string{"--web.listen-address=[::1]:9866", "--web.enable-pprof"}, 1000, nil},
		{[]string{"--web.listen-address=localhost:9866", "--web.enable-lifecycle"}, 1000, nil},
		{[]string{"--web.listen-address=:9866"}, 1000, nil},
		{[]string{"--web.listen-address=:9866", "--web.enable-lifecycle"}, 1000, []string{"--web.enable-lifecycle"}},
		{[]string{"--web.listen-address=0.0.0.0:9866", "--web.enable-pprof"}, 1000, []string{"--web.enable-pprof"}},
		{[]string{"--web.listen-address=127.0.0.1:9866", "--web.listen-address=10.0.0.1:9866", "--web.enable-pprof", "--web.enable-lifecycle"}, 1000, []string{"--web.enable-lifecycle", "--web.enable-pprof"}},
		{[]string{"--web.listen-address=127.0.0.1:9866"}, 0, []string{"user"}},
	} {
		f, err := parseFlags(append(tc.args, "--api.project-id=p"), func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, w := range mainWarnings(f, tc.euid) {
			got = append(got, w.Setting)
			if w.Reason == "" {
				t.Errorf("%v: warning %s without a reason", tc.args, w.Setting)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v as uid %d: warnings %v, want %v", tc.args, tc.euid, got, tc.want)
		}
	}
}
