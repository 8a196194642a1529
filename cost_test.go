package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/pricing"
)

type discardPublisher struct{}

func (discardPublisher) SetSnapshot(*fleet.Snapshot) {}
func (discardPublisher) RemoveProject(string)        {}

// TestPricedLoad: a reload re-reads the price file; a bad one fails the
// reload and the prices in use stay.
func TestPricedLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prices.yml")
	write := func(content string) {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	reg := prometheus.NewPedanticRegistry()
	est := pricing.NewEstimator(discardPublisher{}, reg, nil)
	projectsLoaded := 0
	load := pricedLoad(func() ([]config.Project, error) { projectsLoaded++; return nil, nil }, &flags{pricingFile: path}, est)
	info := func() string {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			for _, l := range mf.GetMetric()[0].GetLabel() {
				if l.GetName() == "currency" {
					return l.GetValue()
				}
			}
		}
		return ""
	}

	write("currency: USD\neffective_date: 2026-11-01\nstorage_gb_month: {us-east-1: 0.15}\n")
	if _, err := load(); err != nil || info() != "USD" {
		t.Fatalf("first load: %v, currency %q", err, info())
	}
	write("currency: EUR\neffective_date: 2026-11-01\nstorage_gb_month: {us-east-1: -1}\n")
	if _, err := load(); err == nil || !strings.Contains(err.Error(), "storage_gb_month.us-east-1") {
		t.Errorf("bad file: %v; want an error naming storage_gb_month.us-east-1", err)
	}
	if info() != "USD" || projectsLoaded != 1 {
		t.Errorf("after a failed reload: currency %q, projects loaded %d times; want USD, once", info(), projectsLoaded)
	}
	write("currency: EUR\neffective_date: 2026-12-01\nstorage_gb_month: {us-east-1: 0.15}\n")
	if _, err := load(); err != nil || info() != "EUR" {
		t.Errorf("good reload: %v, currency %q; want EUR", err, info())
	}
	if n := testutil.CollectAndCount(reg, "clouddb_pricing_info"); n != 1 {
		t.Errorf("%d clouddb_pricing_info series; want 1", n)
	}
}

// TestStateFileFlags: --state.file, or its deprecated name; both naming
// different files is refused, naming both flags.
func TestStateFileFlags(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	for _, c := range []struct {
		args       []string
		path, err  string
		deprecated bool
	}{
		{args: []string{"--state.file=" + a}, path: a},
		{args: []string{"--collect.logs.state-file=" + a}, path: a, deprecated: true},
		{args: []string{"--state.file=" + a, "--collect.logs.state-file=" + a}, path: a},
		{args: []string{"--state.file=" + a, "--collect.logs.state-file=" + b}, err: "keep --state.file only"},
		{args: nil},
	} {
		f, err := parseFlags(c.args, func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		path, deprecated, err := stateFilePath(f)
		if path != c.path || deprecated != c.deprecated || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%v: %q, deprecated %v, %v; want %q, %v, %q", c.args, path, deprecated, err, c.path, c.deprecated, c.err)
		}
	}
}

// TestRightsizingReadLag: the coverage waits for the buckets of the next
// usage read: the demo's or the flags' interval and the API's lag, the
// longest of a file's projects.
func TestRightsizingReadLag(t *testing.T) {
	none := func(string) string { return "" }
	parse := func(args ...string) *flags {
		t.Helper()
		f, err := parseFlags(args, none)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	project := func(interval string) config.Project {
		_, c := parse("--collect.usage.interval=" + interval).config.Defaults()
		return config.Project{Collect: c}
	}
	for _, c := range []struct {
		args     []string
		projects []config.Project
		want     time.Duration
	}{
		{args: []string{"--simulate"}, want: 7 * time.Minute},
		{args: []string{"--collect.usage.interval=10m"}, want: 12 * time.Minute},
		{projects: []config.Project{project("1m"), project("20m")}, want: 22 * time.Minute},
	} {
		if got := rightsizingReadLag(parse(c.args...), c.projects, none); got != c.want {
			t.Errorf("%v, %d projects: %s; want %s", c.args, len(c.projects), got, c.want)
		}
	}
}
