package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
)

// checkNode reports every unknown key (with the nearest valid one) and mistyped value
// by path: yaml's own errors name Go types, which mean nothing to the file's editor.
func checkNode(n *yaml.Node, t reflect.Type, path string) []error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case n.Kind == yaml.DocumentNode:
		var errs []error
		for _, c := range n.Content {
			errs = append(errs, checkNode(c, t, path)...)
		}
		return errs
	case n.Kind == yaml.AliasNode:
		return checkNode(n.Alias, t, path)
	case n.Tag == "!!null":
		return nil
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		return checkMapping(n, t, path)
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode && t.Elem().Kind() == reflect.Struct:
		var errs []error
		for i, c := range n.Content {
			errs = append(errs, checkNode(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i))...)
		}
		return errs
	}
	if err := n.Decode(reflect.New(t).Interface()); err != nil {
		return []error{fmt.Errorf("%s: %s is not %s", path, Shown(n), kindOf(t))}
	}
	return nil
}

func checkMapping(n *yaml.Node, t reflect.Type, path string) []error {
	fields := yamlFields(t)
	var errs []error
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, value := n.Content[i].Value, n.Content[i+1]
		where := key
		if path != "" {
			where = path + "." + key
		}
		ft, ok := fields[key]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s: unknown key%s", where, suggestion(key, keysOf(fields))))
		case ft == reflect.TypeFor[yaml.Node]():
			errs = append(errs, checkTree(value, fileSettings()[key].(keyTree), where)...)
		default:
			errs = append(errs, checkNode(value, ft, where)...)
		}
	}
	return errs
}

// keyTree nests the table's file keys; a leaf is its setting's reflect.Type.
type keyTree map[string]any

// settingTree is built on first use, once every package's init has added its settings.
var (
	settingTree  keyTree
	settingsRead sync.Once
)

func fileSettings() keyTree {
	settingsRead.Do(func() { settingTree = buildSettingTree() })
	return settingTree
}

func buildSettingTree() keyTree {
	root := keyTree{}
	for _, s := range settings {
		if s.key == "" {
			continue
		}
		parts := strings.Split(s.key, ".")
		tree := root
		for _, p := range parts[:len(parts)-1] {
			if _, ok := tree[p]; !ok {
				tree[p] = keyTree{}
			}
			tree = tree[p].(keyTree)
		}
		tree[parts[len(parts)-1]] = reflect.TypeOf(s.field(&API{}, &Collect{})).Elem()
	}
	return root
}

var fileProjectType = reflect.TypeFor[FileProject]()

// checkTree checks a mapping against a keyTree. Its keys are decoded one by one
// (mergeSettings), so it refuses a key given twice, as the decoder would.
func checkTree(n *yaml.Node, tree keyTree, path string) []error {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	switch {
	case n.Tag == "!!null":
		return nil
	case n.Kind != yaml.MappingNode:
		return []error{fmt.Errorf("%s: %s is not a mapping of keys", path, Shown(n))}
	}
	var errs []error
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, value := n.Content[i].Value, n.Content[i+1]
		where := path + "." + key
		if seen[key] {
			errs = append(errs, fmt.Errorf("%s: the key is given twice", where))
			continue
		}
		seen[key] = true
		switch sub := tree[key].(type) {
		case keyTree:
			errs = append(errs, checkTree(value, sub, where)...)
		case reflect.Type:
			errs = append(errs, checkNode(value, sub, where)...)
		default:
			errs = append(errs, fmt.Errorf("%s: unknown key%s", where, suggestion(key, slices.Collect(maps.Keys(tree)))))
		}
	}
	return errs
}

func keysOf(fields map[string]reflect.Type) []string {
	return slices.Collect(maps.Keys(fields))
}

func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case name == "-" || !f.IsExported():
		case strings.Contains(opts, "inline"):
			for k, v := range yamlFields(f.Type) {
				out[k] = v
			}
		case name == "":
			out[strings.ToLower(f.Name)] = f.Type
		default:
			out[name] = f.Type
		}
	}
	return out
}

func suggestion(key string, valid []string) string {
	slices.Sort(valid)
	best, bestDist := "", len(key)/3+2
	for _, k := range valid {
		if d := EditDistance(strings.ToLower(key), k); d < bestDist {
			best, bestDist = k, d
		}
	}
	if best != "" {
		return " (did you mean " + best + "?)"
	}
	return "; valid keys: " + strings.Join(valid, ", ")
}

// EditDistance is the Levenshtein distance between a and b: how the
// nearest name is found for a mistyped key or variable.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Shown names a YAML value in an error: its kind for a mapping or a list,
// else its text, quoted and cut at 40 bytes.
func Shown(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	v := n.Value
	if len(v) > 40 {
		v = v[:40] + "..."
	}
	return fmt.Sprintf("%q", v)
}

func kindOf(t reflect.Type) string {
	if t == reflect.TypeFor[time.Duration]() {
		return "a duration (write it like 2m, 90s or 1h)"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint, reflect.Uint64, reflect.Uint32:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		switch t.Elem().Kind() {
		case reflect.Struct, reflect.Map:
			return "a list of mappings"
		case reflect.String:
			return "a list of strings"
		}
		return "a list"
	case reflect.Struct, reflect.Map:
		return "a mapping of keys"
	}
	return "valid here"
}

// Suggestion names the valid key nearest to key, or lists them all: for the
// other files the exporter reads (--pricing.file), worded as this one's errors.
func Suggestion(key string, valid []string) string {
	return suggestion(key, slices.Clone(valid))
}
