package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/config"
)

// flagsDoc holds the flags table, one row per flag (or per pair of flags
// that go together): | Flag | Environment | Default | Meaning |.
const flagsDoc = "docs/configuration.md"

// TestFlagsDoc keeps docs/configuration.md's flags table true to the
// command line: every flag is listed, with its environment variable and
// default, and every flag listed exists.
func TestFlagsDoc(t *testing.T) {
	app, _ := newApp()
	doc, err := os.ReadFile(flagsDoc)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{} // flag name -> its row's cells
	flagName := regexp.MustCompile("`--([a-z0-9.-]+)`")
	for _, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(line, "| `--") {
			continue
		}
		cells := tableCells(line)
		if len(cells) != 4 {
			t.Errorf("%s: flags table row with %d cells, want 4: %s", flagsDoc, len(cells), line)
			continue
		}
		for _, m := range flagName.FindAllStringSubmatch(cells[0], -1) {
			rows[m[1]] = cells
		}
	}
	declared := map[string]bool{}
	for _, fl := range app.Model().Flags {
		if fl.Hidden || fl.Name == "help" || fl.Name == "version" {
			continue
		}
		declared[fl.Name] = true
		cells, ok := rows[fl.Name]
		if !ok {
			t.Errorf("%s lists no --%s", flagsDoc, fl.Name)
			continue
		}
		if fl.Envar != "" && !strings.Contains(cells[1], fl.Envar) && !strings.Contains(cells[1], envarTail(fl.Envar)) {
			t.Errorf("%s: --%s's environment variable is %s, the table says %q", flagsDoc, fl.Name, fl.Envar, cells[1])
		}
		if fl.Envar == "" && strings.Contains(cells[1], "CLOUDDB_") && len(flagName.FindAllString(cells[0], -1)) == 1 {
			t.Errorf("%s: --%s has no environment variable, the table says %q", flagsDoc, fl.Name, cells[1])
		}
		for _, d := range fl.Default {
			if d != "" && !sameDefault(d, cells[2]) {
				t.Errorf("%s: --%s's default is %q, the table says %q", flagsDoc, fl.Name, d, cells[2])
			}
		}
	}
	for name := range rows {
		if !declared[name] {
			t.Errorf("%s lists --%s, which the exporter does not have", flagsDoc, name)
		}
	}
	if len(declared) < 20 {
		t.Fatalf("found %d flags: the command line was not read", len(declared))
	}
}

// TestFileKeysDoc keeps docs/configuration.md's table of a project's keys
// true to the configuration file: every key is listed with the flag it
// overrides, and every key listed exists.
func TestFileKeysDoc(t *testing.T) {
	doc, err := os.ReadFile(flagsDoc)
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "\n| Key | Flag | Notes |\n")
	if !ok {
		t.Fatalf("%s has no | Key | Flag | Notes | table", flagsDoc)
	}
	table, _, _ = strings.Cut(table, "\n\n")
	rows := map[string]string{} // key -> its row's flag cell
	key := regexp.MustCompile("`([a-z_.]+)`")
	for _, line := range strings.Split(table, "\n")[1:] {
		cells := tableCells(line)
		for _, m := range key.FindAllStringSubmatch(cells[0], -1) {
			rows[m[1]] = cells[1]
		}
	}
	keys := config.FileKeys()
	known := map[string]bool{}
	for _, k := range keys {
		known[k.Key] = true
		cell, ok := rows[k.Key]
		switch {
		case !ok:
			t.Errorf("%s lists no project key %s", flagsDoc, k.Key)
		case k.Flag != "" && cell != "`--"+k.Flag+"`":
			t.Errorf("%s: %s overrides --%s, the table says %q", flagsDoc, k.Key, k.Flag, cell)
		}
	}
	for k := range rows {
		if !known[k] {
			t.Errorf("%s lists the project key %s, which the file does not take", flagsDoc, k)
		}
	}
	if len(keys) < 20 {
		t.Fatalf("found %d keys: the settings were not read", len(keys))
	}
}

// envarTail is what a row naming two variables writes for the second one:
// `…_KEY_FILE` after `CLOUDDB_API_TLS_CERT_FILE`.
func envarTail(envar string) string {
	parts := strings.Split(envar, "_")
	return "…_" + strings.Join(parts[max(0, len(parts)-2):], "_")
}

// tableCells splits a table row at its unescaped pipes.
func tableCells(line string) []string {
	line = strings.ReplaceAll(strings.Trim(strings.TrimSpace(line), "|"), `\|`, "\x00")
	cells := strings.Split(line, "|")
	for i, c := range cells {
		cells[i] = strings.ReplaceAll(strings.TrimSpace(c), "\x00", `\|`)
	}
	return cells
}

// sameDefault reports whether a table's default cell shows the flag's
// default: verbatim in backticks, "off" for false, or the same duration
// however it is written (`1m` for 1m0s).
func sameDefault(d, cell string) bool {
	cell = strings.TrimSpace(cell)
	if strings.Contains(cell, "`"+d+"`") || d == "false" && cell == "off" {
		return true
	}
	want, err1 := time.ParseDuration(d)
	got, err2 := time.ParseDuration(strings.Trim(cell, "`"))
	if cell == "`0`" {
		got, err2 = 0, nil
	}
	return err1 == nil && err2 == nil && want == got
}
