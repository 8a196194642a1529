// Package mixin builds the monitoring mixin (jsonnet) into the shipped rules
// and dashboards; its own module keeps the jsonnet evaluator out of the exporter's.
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

// RulesFile holds recording rules and alerts together, so one rule_files
// entry loads everything the dashboards and alerts need.
const RulesFile = "alerts/clouddb.rules.yml"

// DashboardsDir is where the dashboards go, one file per key of grafanaDashboards.
const DashboardsDir = "dashboards"

// ChartFilesDir holds the Helm chart's copies: Helm reads only files inside the chart.
const ChartFilesDir = "deploy/helm/clouddb-exporter/files"

// ChartGrafanaURL stands for the Grafana URL in the chart's copy of the
// rules: the chart replaces it with its grafanaUrl value, or drops the
// dashboard_url annotations when that is empty.
const ChartGrafanaURL = "GRAFANA_URL"

const rulesHeader = `# Generated from mixin/ (jsonnet) with its default _config by
# ` + "`cd mixin && go test ./... -update`" + `. Do not edit: change mixin/ and rebuild.
#
# The recording rules first (used by the dashboards), then the alerts. Every
# alert has a runbook entry in alerts/runbook.md and promtool unit tests in
# alerts/tests/.
`

const chartRulesHeader = `# Generated from mixin/ (jsonnet) by ` + "`cd mixin && go test ./... -update`" + `:
# alerts/clouddb.rules.yml with dashboard_url annotations on ` + ChartGrafanaURL + `, which
# templates/prometheusrule.yaml replaces with the grafanaUrl value (or drops
# the annotations when it is empty). Do not edit: change mixin/ and rebuild.
`

// Dir is the directory of the mixin's sources.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Evaluate returns the JSON of field of mixin.libsonnet with extra appended.
func Evaluate(extra, field string) (string, error) {
	vm := jsonnet.MakeVM()
	vm.Importer(&jsonnet.FileImporter{JPaths: []string{Dir()}})
	snippet := fmt.Sprintf("((import 'mixin.libsonnet') %s).%s", extra, field)
	return vm.EvaluateAnonymousSnippet(filepath.Join(Dir(), "build.jsonnet"), snippet)
}

// Build returns the built files by path relative to the repository root.
func Build(extra string) (map[string][]byte, error) {
	files := map[string][]byte{}
	rules, err := buildRules(extra, rulesHeader)
	if err != nil {
		return nil, err
	}
	files[RulesFile] = rules
	chartRules, err := buildRules(extra+fmt.Sprintf(" + {_config+:: {grafanaURL: '%s'}}", ChartGrafanaURL), chartRulesHeader)
	if err != nil {
		return nil, err
	}
	files[filepath.Join(ChartFilesDir, filepath.Base(RulesFile))] = chartRules

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

// buildRules returns the rules file: the recording rules, then the alerts.
func buildRules(extra, header string) ([]byte, error) {
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
	return rulesYAML(groups, header)
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

// keyOrder is Prometheus's documented order; jsonnet sorts keys alphabetically.
var keyOrder = []string{"name", "interval", "rules", "record", "alert", "expr", "for", "keep_firing_for", "labels", "annotations", "summary", "description", "runbook_url", "dashboard_url"}

func rulesYAML(groups []any, header string) ([]byte, error) {
	node := toNode(map[string]any{"groups": groups})
	var b bytes.Buffer
	b.WriteString(header)
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(node); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

// toNode writes keys in keyOrder first and multi-line strings as literal blocks.
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
