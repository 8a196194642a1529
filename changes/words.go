package changes

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Describe says e in plain words for the status page: "service orders-db
// resized 2 CPU / 8 GB -> 1 CPU / 4 GB, between 03:04 and 03:05".
func (e *Event) Describe() string {
	var b strings.Builder
	b.WriteString(strings.ReplaceAll(e.ObjectType, "_", " "))
	name := e.ObjectName
	if name == "" || e.ObjectType == TypeProject {
		name = e.ObjectID
	}
	if e.ObjectType != TypeAPIKey {
		b.WriteString(" " + name)
	}
	b.WriteString(" " + e.what())
	b.WriteString(", " + e.when())
	if e.Actor != "" {
		b.WriteString(", by " + e.Actor)
	}
	return b.String()
}

func (e *Event) what() string {
	before, after := e.Before, e.After
	switch e.Kind {
	case KindCreated:
		if f, ok := after["forked_from"].(map[string]any); ok {
			return fmt.Sprintf("created, forked from %v", f["service_id"])
		}
		if f, ok := after["forked_from"].(Fields); ok {
			return fmt.Sprintf("created, forked from %v", f["service_id"])
		}
		return "created"
	case KindStatusChanged:
		return statusChange(before, after)
	case KindResized:
		return "resized " + size(before) + " -> " + size(after)
	case KindHAChanged:
		return "HA " + replicas(before) + " -> " + replicas(after)
	case KindPoolerEnabled:
		return "connection pooler enabled"
	case KindPoolerDisabled:
		return "connection pooler disabled"
	case KindVPCAttached:
		return fmt.Sprintf("attached to VPC %v", after["vpc_id"])
	case KindVPCDetached:
		return fmt.Sprintf("detached from VPC %v", before["vpc_id"])
	case KindEnvironmentChanged:
		return fmt.Sprintf("environment %v -> %v", before["environment"], after["environment"])
	case KindRenamed:
		return fmt.Sprintf("renamed %v -> %v", before["name"], after["name"])
	case KindRotated:
		return fmt.Sprintf("rotated (%v -> %v)", before["name"], after["name"])
	}
	return strings.ReplaceAll(e.Kind, "_", " ")
}

// statusChange says what changed of a status and, for a peering, of its
// error: a peering can report or clear an error and keep its status.
func statusChange(before, after Fields) string {
	was, msg := before["error_message"], after["error_message"]
	if before["status"] == after["status"] && was != msg {
		if msg != "" && msg != nil {
			return fmt.Sprintf("error: %v (status %v)", msg, after["status"])
		}
		return fmt.Sprintf("error cleared: %v (status %v)", was, after["status"])
	}
	s := fmt.Sprintf("status %v -> %v", before["status"], after["status"])
	if m, _ := msg.(string); m != "" {
		s += " (" + m + ")"
	}
	return s
}

// number reads a field as stored live (int64) or read back from the file (float64).
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case int:
		return float64(n), true
	}
	return 0, false
}

func size(f Fields) string {
	cpu, okC := number(f["cpu_millis"])
	mem, okM := number(f["memory_gbs"])
	s := "shared"
	if okC || okM {
		s = strconv.FormatFloat(cpu/1000, 'f', -1, 64) + " CPU / " + strconv.FormatFloat(mem, 'f', -1, 64) + " GB"
	}
	if nodes, ok := number(f["nodes"]); ok {
		s = strconv.FormatFloat(nodes, 'f', -1, 64) + " × " + s
	}
	return s
}

func replicas(f Fields) string {
	n, ok := number(f["replica_count"])
	if !ok {
		return "none"
	}
	s := strconv.FormatFloat(n, 'f', -1, 64) + " replicas"
	if sync, ok := number(f["sync_replica_count"]); ok && sync > 0 {
		s += " (" + strconv.FormatFloat(sync, 'f', -1, 64) + " sync)"
	}
	return s
}

// when is the window the change happened in, in UTC.
func (e *Event) when() string {
	const clock = "15:04"
	at := e.Time.UTC()
	switch {
	case e.EffectiveTime != nil:
		return "at " + e.EffectiveTime.UTC().Format("2006-01-02 15:04:05") + " UTC"
	case e.WindowStart == nil:
		return "seen at " + at.Format("2006-01-02 "+clock) + " UTC"
	}
	start := e.WindowStart.UTC()
	layout := clock
	if start.YearDay() != at.YearDay() || start.Year() != at.Year() {
		layout = "2006-01-02 " + clock
	}
	if at.Sub(start) < 2*time.Minute {
		layout += ":05"
	}
	return "between " + start.Format(layout) + " and " + at.Format(layout) + " UTC"
}
