package main

import "testing"

// TestReloadSource: --simulate's project never changes, but a --pricing.file
// beside it does: a reload (SIGHUP, POST /-/reload) re-reads it.
func TestReloadSource(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--simulate"}, ""},
		{[]string{"--simulate", "--pricing.file=prices.yml"}, "prices.yml"},
		{[]string{"--config.file=config.yml"}, "config.yml"},
	} {
		f, err := parseFlags(c.args, func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		if got := reloadSource(f); got != c.want {
			t.Errorf("%v: reload source %q; want %q", c.args, got, c.want)
		}
		if nothing := reloadFunc(f, nil) == nil; nothing != (c.want == "") {
			t.Errorf("%v: nothing to reload %v; want %v", c.args, nothing, c.want == "")
		}
	}
}
