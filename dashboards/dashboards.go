// Package dashboards embeds the Grafana dashboards shipped with the exporter
// and reads them for the tests.
package dashboards

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
)

//go:embed *.json
var files embed.FS

// Dashboard is the part of a Grafana dashboard the tests look at.
type Dashboard struct {
	File       string   `json:"-"`
	UID        string   `json:"uid"`
	Title      string   `json:"title"`
	Tags       []string `json:"tags"`
	Editable   *bool    `json:"editable"`
	Panels     []Panel  `json:"panels"`
	Templating struct {
		List []Variable `json:"list"`
	} `json:"templating"`
}

// Panel is a Grafana panel; rows hold their collapsed panels in Panels.
type Panel struct {
	ID          int      `json:"id"`
	Type        string   `json:"type"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Datasource  *Ref     `json:"datasource"`
	Targets     []Target `json:"targets"`
	Panels      []Panel  `json:"panels"`
	// Repeat names the variable a row is repeated over.
	Repeat      string `json:"repeat"`
	FieldConfig struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
}

// Target is one query of a panel.
type Target struct {
	RefID      string `json:"refId"`
	Expr       string `json:"expr"`
	Datasource *Ref   `json:"datasource"`
}

// Ref is a data source reference.
type Ref struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// Variable is a templating variable; Query's shape depends on Grafana's version.
type Variable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	RawQuery   json.RawMessage `json:"query"`
	Datasource *Ref            `json:"datasource"`
	Multi      bool            `json:"multi"`
	IncludeAll bool            `json:"includeAll"`
	Regex      string          `json:"regex"`
	// Hide is 0 (shown), 1 (label hidden) or 2 (variable hidden).
	Hide int `json:"hide"`
}

// Expr is the variable's query text, whatever Query's shape.
func (v Variable) Expr() string {
	var s string
	if json.Unmarshal(v.RawQuery, &s) == nil {
		return s
	}
	var o struct {
		Query string `json:"query"`
	}
	_ = json.Unmarshal(v.RawQuery, &o)
	return o.Query
}

// Files returns the names of the dashboard files, sorted.
func Files() []string {
	names, _ := fs.Glob(files, "*.json")
	slices.Sort(names)
	return names
}

// Raw returns the bytes of one dashboard file.
func Raw(name string) ([]byte, error) { return files.ReadFile(name) }

// Load parses every dashboard.
func Load() ([]Dashboard, error) {
	var out []Dashboard
	for _, name := range Files() {
		b, err := files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var d Dashboard
		if err := json.Unmarshal(b, &d); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		d.File = name
		out = append(out, d)
	}
	return out, nil
}

// AllPanels returns the panels, those inside rows included, rows excluded.
func (d Dashboard) AllPanels() []Panel {
	var out []Panel
	var walk func([]Panel)
	walk = func(ps []Panel) {
		for _, p := range ps {
			if p.Type != "row" {
				out = append(out, p)
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

// RowOf returns the row above the panel, or the collapsed row holding it.
func (d Dashboard) RowOf(id int) (Panel, bool) {
	var row *Panel
	for i, p := range d.Panels {
		if p.Type == "row" {
			row = &d.Panels[i]
			for _, c := range p.Panels {
				if c.ID == id {
					return p, true
				}
			}
			continue
		}
		if p.ID == id && row != nil {
			return *row, true
		}
	}
	return Panel{}, false
}

// Variable returns the variable named name.
func (d Dashboard) Variable(name string) (Variable, bool) {
	for _, v := range d.Templating.List {
		if v.Name == name {
			return v, true
		}
	}
	return Variable{}, false
}

var queryResult = regexp.MustCompile(`^\s*query_result\(\s*(.*?)\s*\)\s*$`)

// VariableQuery returns the PromQL of a label_values or query_result query.
func VariableQuery(q string) (expr string, ok bool) {
	if expr, _, ok := LabelValuesQuery(q); ok {
		return expr, true
	}
	if m := queryResult.FindStringSubmatch(q); m != nil {
		return m[1], true
	}
	return "", false
}

var labelValues = regexp.MustCompile(`^\s*label_values\(\s*(.*?)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*$`)

// LabelValuesQuery splits label_values(expr, label).
func LabelValuesQuery(q string) (expr, label string, ok bool) {
	m := labelValues.FindStringSubmatch(q)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

var (
	stringLit   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	braces      = regexp.MustCompile(`\{[^}]*\}`)
	brackets    = regexp.MustCompile(`\[[^\]]*\]`)
	labelLists  = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	identifiers = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	keywords    = []string{"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool", "offset", "inf", "nan", "atan2"}
)

// MetricNames returns the metric names a PromQL expression selects.
func MetricNames(expr string) []string {
	s := stringLit.ReplaceAllString(expr, `""`)
	s = braces.ReplaceAllString(s, "{}")
	s = brackets.ReplaceAllString(s, "[]")
	s = labelLists.ReplaceAllString(s, " ")
	var out []string
	for _, loc := range identifiers.FindAllStringIndex(s, -1) {
		name := s[loc[0]:loc[1]]
		// Part of a number (1e3), a variable ($job) or a longer token.
		if loc[0] > 0 && strings.ContainsRune("0123456789.$", rune(s[loc[0]-1])) {
			continue
		}
		call := strings.HasPrefix(strings.TrimLeft(s[loc[1]:], " \t\n"), "(")
		if call || slices.Contains(keywords, strings.ToLower(name)) || slices.Contains(out, name) {
			continue
		}
		out = append(out, name)
	}
	return out
}

var (
	rateCalls  = regexp.MustCompile(`\b(?:rate|irate|increase)\s*\(`)
	rangeExprs = regexp.MustCompile(`\[([^\]]*)\]`)
)

// RateIntervalProblems reports ranges other than [$__rate_interval] in rate,
// irate and increase, and any hard-coded range.
func RateIntervalProblems(expr string) []string {
	var problems []string
	ranges := rangeExprs.FindAllStringSubmatch(expr, -1)
	for _, r := range ranges {
		if r[1] != "$__rate_interval" {
			problems = append(problems, fmt.Sprintf("range [%s] instead of [$__rate_interval]", r[1]))
		}
	}
	if calls := len(rateCalls.FindAllString(expr, -1)); calls > len(ranges) {
		problems = append(problems, fmt.Sprintf("%d rate/irate/increase calls but %d ranges", calls, len(ranges)))
	}
	return problems
}
