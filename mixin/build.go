// Package mixin builds the clouddb_exporter monitoring mixin (jsonnet, in
// this directory) into the files the repository ships: the Prometheus
// rules in alerts/ and the Grafana dashboards in dashboards/. It is a module
// of its own so that the exporter's go.mod does not carry the jsonnet
// evaluator.
package mixin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/google/go-jsonnet"
	"go.yaml.in/yaml/v3"
)

// RulesFile is where the rules go, relative to the repository root: the
// recording rules and the alerts in one file, so that one rule_files
// entry (or one PrometheusRule) loads everything the dashboards and alerts
// need.
const RulesFile = "alerts/clouddb.rules.yml"

// DashboardsDir is where the dashboards go, one file per key of
// grafanaDashboards.
const DashboardsDir = "dashboards"

// ChartFilesDir is where the Helm chart keeps its copies of the rules and
// dashboards (Helm reads only files inside the chart).
const ChartFilesDir = "deploy/helm/clouddb-exporter/files"

const rulesHeader = `# Generated from mixin/ (jsonnet) with its default _config by
# ` + "`cd mixin && go test ./... -update`" + `. Do not edit: change mixin/ and rebuild.
#
# The recording rules first (used by the dashboards), then the alerts. Every
# alert has a runbook entry in alerts/runbook.md and promtool unit tests in
# alerts/tests/.
`

// Dir is the directory of the mixin's sources.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Evaluate evaluates mixin.libsonnet with extra jsonnet appended to it (for
// example `+ { _config+:: { grafanaURL: "" } }`) and returns the JSON of the
// field named.
func Evaluate(extra, field string) (string, error) {
	vm := jsonnet.MakeVM()
	vm.Importer(&jsonnet.FileImporter{JPaths: []string{Dir()}})
	snippet := fmt.Sprintf("((import 'mixin.libsonnet') %s).%s", extra, field)
	return vm.EvaluateAnonymousSnippet(filepath.Join(Dir(), "build.jsonnet"), snippet)
}

// Build returns the files the mixin builds with extra jsonnet appended
// (see Evaluate), by path relative to the repository root.
func Build(extra string) (map[string][]byte, error) {
	files := map[string][]byte{}
	var groups []any
	for _, field := range []string{"prometheusRules", "prometheusAlerts"} {
		out, err := Evaluate(extra, field)
		if err != nil {
			return nil, err
		}
		var rf struct {
			Groups []any `json:"groups"`
		}
		if err := json.Unmarshal([]byte(out), &rf); err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		groups = append(groups, rf.Groups...)
	}
	rules, err := rulesYAML(groups)
	if err != nil {
		return nil, err
	}
	files[RulesFile] = rules
	files[filepath.Join(ChartFilesDir, filepath.Base(RulesFile))] = rules

	out, err := Evaluate(extra, "grafanaDashboards")
	if err != nil {
		return nil, err
	}
	var dashboards map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &dashboards); err != nil {
		return nil, err
	}
	for name, raw := range dashboards {
		var b bytes.Buffer
		if err := json.Indent(&b, raw, "", "  "); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		b.WriteByte('\n')
		files[filepath.Join(DashboardsDir, name)] = b.Bytes()
		files[filepath.Join(ChartFilesDir, DashboardsDir, name)] = b.Bytes()
	}
	return files, nil
}

// Write writes the built files under root.
func Write(root string, files map[string][]byte) error {
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(root, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// The order of a rule's keys in the YAML, as Prometheus documents them;
// jsonnet sorts keys alphabetically, which reads badly.
var keyOrder = []string{"name", "interval", "rules", "record", "alert", "expr", "for", "keep_firing_for", "labels", "annotations", "summary", "description", "runbook_url", "dashboard_url"}

func rulesYAML(groups []any) ([]byte, error) {
	node := toNode(map[string]any{"groups": groups})
	var b bytes.Buffer
	b.WriteString(rulesHeader)
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(node); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

// toNode converts decoded JSON to a YAML node: keys in keyOrder first,
// multi-line strings as literal blocks.
func toNode(v any) *yaml.Node {
	switch v := v.(type) {
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b string) int {
			ia, ib := slices.Index(keyOrder, a), slices.Index(keyOrder, b)
			switch {
			case ia >= 0 && ib >= 0:
				return ia - ib
			case ia >= 0:
				return -1
			case ib >= 0:
				return 1
			}
			return strings.Compare(a, b)
		})
		for _, k := range keys {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, toNode(v[k]))
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		for _, e := range v {
			n.Content = append(n.Content, toNode(e))
		}
		return n
	case string:
		n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
		if strings.Contains(v, "\n") {
			n.Style = yaml.LiteralStyle
		}
		return n
	default:
		var n yaml.Node
		if err := n.Encode(v); err != nil {
			panic(err) // JSON values always encode
		}
		return &n
	}
}
