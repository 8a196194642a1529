package main

import (
	"slices"
	"strings"
	"testing"
)

// TestFlagHelpFitsOneLine: as node_exporter's, each flag's help in --help
// is one line saying what it sets; the details, defaults' reasons and
// cautions are in docs/configuration.md (TestFlagsDoc keeps a row for
// every flag there).
func TestFlagHelpFitsOneLine(t *testing.T) {
	app, _ := newApp()
	total, n := 0, 0
	for _, fl := range app.Model().Flags {
		if fl.Hidden {
			continue
		}
		n++
		total += len(fl.Help)
		if len(fl.Help) > helpWidth || !strings.HasSuffix(fl.Help, ".") {
			t.Errorf("--%s: help of %d characters, want one sentence of at most %d (move the details to %s): %q", fl.Name, len(fl.Help), helpWidth, flagsDoc, fl.Help)
		}
	}
	t.Logf("%d flags, help %d characters on average", n, total/n)
}

// TestFlagGroups: every flag is in the group of its name's first part; a
// flag of a new prefix must get a group rather than land in General.
func TestFlagGroups(t *testing.T) {
	app, _ := newApp()
	general := []string{"help", "version", "config.file", "config.check", "simulate", "simulate.listen-address"}
	grouped := map[string]string{}
	for _, g := range flagGroups(app.Model().Flags) {
		for _, line := range strings.Split(g.Text, "\n") {
			if flag, ok := strings.CutPrefix(strings.TrimSpace(line), "--"); ok || strings.HasPrefix(strings.TrimSpace(line), "-h, --") {
				if !ok {
					flag = strings.TrimPrefix(strings.TrimSpace(line), "-h, --")
				}
				flag = strings.TrimPrefix(flag, "[no-]")
				flag, _, _ = strings.Cut(flag, "=")
				grouped[flag] = g.Title
			}
		}
	}
	for _, fl := range app.Model().Flags {
		title, ok := grouped[fl.Name]
		switch {
		case fl.Hidden && ok:
			t.Errorf("hidden --%s is listed in %s", fl.Name, title)
		case fl.Hidden:
		case !ok:
			t.Errorf("--%s is in no group", fl.Name)
		case title == "General" && !slices.Contains(general, fl.Name):
			t.Errorf("--%s is in General: give its prefix a group in flagGroupTitles", fl.Name)
		}
	}
	for flag, want := range map[string]string{
		"web.listen-address": "Web server", "api.tls.ca-file": "Cloud API", "collect.interval": "Polling",
		"collect.usage": "Usage series (opt-in)", "collect.logs.state-file": "Log severities (opt-in)",
		"total-shards": "Sharding", "shard": "Sharding", "admin.allow": "Admin surface (write operations)",
	} {
		if grouped[flag] != want {
			t.Errorf("--%s is in %q, want %q", flag, grouped[flag], want)
		}
	}
}
