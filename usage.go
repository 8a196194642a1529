package main

import (
	"strings"

	"github.com/alecthomas/kingpin/v2"
)

// usageTemplate is kingpin's default for an application without commands,
// with the flags in groups and without their environment variables, which
// one line says how to derive: as node_exporter's, --help is a line or two
// a flag, and docs/configuration.md holds the details.
const usageTemplate = `usage: {{.App.Name}} [<flags>]

{{.App.Help|Wrap 0}}
Every flag can be set by an environment variable instead: CLOUDDB_ and the
flag's name upper-cased, dots and dashes as underscores (--api.url:
CLOUDDB_API_URL). The flags and the configuration file are described in
docs/configuration.md.
{{range FlagGroups .Context.Flags}}
{{.Title}}:
{{.Text}}{{end}}`

// helpIndent indents a flag's help under the flag; helpWidth is what fits
// in 80 columns after it, the most a help says (a test checks).
const (
	helpIndent = "        "
	helpWidth  = 80 - len(helpIndent)
)

// flagGroup is a heading of --help and its flags, each on a line with
// its help on the next.
type flagGroup struct {
	Title string
	Text  string
}

// flagGroupTitles are the groups in order, by the first part of the flags'
// names (the whole name of a flag in no group of its own: --shard).
var flagGroupTitles = []struct{ prefix, title string }{
	{"", "General"},
	{"web", "Web server"},
	{"log", "Logging"},
	{"api", "Cloud API"},
	{"collect", "Polling"},
	{"collect.usage", "Usage series (opt-in)"},
	{"collect.logs", "Log severities (opt-in)"},
	{"changes", "Change timeline"},
	{"pricing", "Cost and rightsizing"},
	{"state", "State file"},
	{"admin", "Admin surface (write operations)"},
	{"shard", "Sharding"},
	{"runtime", "Go runtime"},
}

// flagGroupOf is the prefix of flagGroupTitles a flag belongs to.
func flagGroupOf(name string) string {
	for _, reader := range []string{"collect.usage", "collect.logs"} {
		if name == reader || strings.HasPrefix(name, reader+".") {
			return reader
		}
	}
	prefix, _, _ := strings.Cut(name, ".")
	switch prefix {
	case "total-shards":
		return "shard"
	case "rightsizing":
		return "pricing"
	}
	for _, g := range flagGroupTitles {
		if g.prefix == prefix {
			return prefix
		}
	}
	return ""
}

// flagGroups sorts the visible flags into flagGroupTitles' groups, keeping
// their order inside a group.
func flagGroups(flags []*kingpin.FlagModel) []flagGroup {
	text := map[string]*strings.Builder{}
	for _, fl := range flags {
		if fl.Hidden {
			continue
		}
		g := flagGroupOf(fl.Name)
		if text[g] == nil {
			text[g] = &strings.Builder{}
		}
		text[g].WriteString("  " + formatFlag(fl) + "\n")
		for _, line := range wrap(fl.Help, helpWidth) {
			text[g].WriteString(helpIndent + line + "\n")
		}
	}
	var out []flagGroup
	for _, g := range flagGroupTitles {
		if b := text[g.prefix]; b != nil {
			out = append(out, flagGroup{g.title, b.String()})
		}
	}
	return out
}

// wrap breaks s into lines of at most width characters at spaces.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return append(lines, line)
}

// formatFlag is how kingpin's usage shows a flag: -h, --[no-]bool,
// --name=DEFAULT, "..." after a repeatable one.
func formatFlag(fl *kingpin.FlagModel) string {
	name := fl.Name
	if fl.IsBoolFlag() {
		name = "[no-]" + name
	}
	s := "--" + name
	if fl.Short != 0 {
		s = "-" + string(fl.Short) + ", --" + name
	}
	if !fl.IsBoolFlag() {
		s += "=" + fl.FormatPlaceHolder()
	}
	if r, ok := fl.Value.(interface{ IsCumulative() bool }); ok && r.IsCumulative() {
		s += " ..."
	}
	return s
}

func setUsage(app *kingpin.Application) {
	app.UsageTemplate(usageTemplate)
	app.UsageFuncs(map[string]any{"FlagGroups": flagGroups})
	app.HelpFlag.Help("Show this help.")
	app.VersionFlag.Help("Show the version.")
	// A value's placeholder is the last word of the flag's name (FILE, URL,
	// REGEX), not kingpin's whole name upper-cased (API.TLS.CA-FILE).
	for _, fl := range app.Model().Flags {
		if fl.PlaceHolder == "" && len(fl.Default) == 0 && !fl.IsBoolFlag() {
			words := strings.FieldsFunc(fl.Name, func(r rune) bool { return r == '.' || r == '-' })
			placeholder := map[string]string{"log": "FILE", "allow": "OPERATION", "environment": "ENV"}[words[len(words)-1]]
			if placeholder == "" {
				placeholder = strings.ToUpper(words[len(words)-1])
			}
			app.GetFlag(fl.Name).PlaceHolder(placeholder)
		}
	}
	// exporter-toolkit's help texts, cut as ours are.
	for name, help := range map[string]string{
		"web.listen-address": "Address to listen on for metrics and the web interface (repeatable).",
		"web.config.file":    "TLS and basic-auth configuration file (exporter-toolkit format).",
		"web.systemd-socket": "Listen on the sockets systemd passes instead (Linux only).",
	} {
		if fl := app.GetFlag(name); fl != nil {
			fl.Help(help)
		}
	}
}
