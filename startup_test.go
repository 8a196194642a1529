package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clouddb/clouddb_exporter/apimetrics"
)

// TestStartReadsTheConfigFileOnce: a start runs what it checked. The file
// read by the check is the one whose projects the first load starts (it is
// not read again between them); a reload reads it again.
func TestStartReadsTheConfigFileOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "projects.yaml")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("projects:\n  - {id: checked, access_key_env: K, secret_key_env: K}\n")
	getenv := func(k string) string { return map[string]string{"K": "k"}[k] }
	f, err := parseFlags([]string{"--api.url=https://api.example.net/v1", "--config.file=" + path}, getenv)
	if err != nil {
		t.Fatal(err)
	}
	c, err := checkConfig(f, getenv)
	if err != nil {
		t.Fatal(err)
	}
	write("not: [a configuration")
	load, err := projectSource(context.Background(), slog.New(slog.DiscardHandler), f, getenv, c.projects, apimetrics.New(nil), prometheus.NewRegistry())
	if err != nil {
		t.Fatalf("the file was read again after the check: %v", err)
	}
	ps, err := load()
	if err != nil || len(ps) != 1 || ps[0].ID != "checked" {
		t.Fatalf("first load = %v, %v; want the checked project", ps, err)
	}
	if _, err := load(); err == nil {
		t.Error("a reload did not read the file again")
	}
}
