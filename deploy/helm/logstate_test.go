package helm

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// volumeOf returns the pod's volume and the container's mount named name.
func volumeOf(objs map[string]object, c map[string]any, name string) (volume, mount map[string]any) {
	for _, o := range objs {
		if o.kind() != "Deployment" && o.kind() != "StatefulSet" {
			continue
		}
		for _, v := range get(o, "spec", "template", "spec", "volumes").([]any) {
			if v.(map[string]any)["name"] == name {
				volume = v.(map[string]any)
			}
		}
	}
	mounts, _ := c["volumeMounts"].([]any)
	for _, m := range mounts {
		if m.(map[string]any)["name"] == name {
			mount = m.(map[string]any)
		}
	}
	return volume, mount
}

// TestLogState: logState puts the log state file on a writable volume the
// flag points into: an emptyDir, or the claim named; off, neither; a claim
// shared by several pods is refused, as is the flag in extraArgs.
func TestLogState(t *testing.T) {
	const flag = "--state.file=/var/lib/clouddb/logs/positions.json"
	objs := mustRender(t, minimalValues)
	c := container(t, objs)
	if v, m := volumeOf(objs, c, "log-state"); v != nil || m != nil || count(args(c), "--state.file") != 0 {
		t.Errorf("off by default, yet: volume %v, mount %v, args %v", v, m, args(c))
	}
	for values, want := range map[string]string{
		"logState: {enabled: true}":                      "emptyDir",
		"logState: {enabled: true, existingClaim: logs}": "persistentVolumeClaim",
	} {
		objs := mustRender(t, minimalValues+values)
		c := container(t, objs)
		v, m := volumeOf(objs, c, "log-state")
		if v == nil || v[want] == nil || m == nil || m["mountPath"] != "/var/lib/clouddb/logs" || m["readOnly"] == true {
			t.Errorf("%s: volume %v, mount %v; want a writable %s at /var/lib/clouddb/logs", values, v, m, want)
		}
		if !slices.Contains(args(c), flag) {
			t.Errorf("%s: args %v lack %s", values, args(c), flag)
		}
	}
	if v, _ := volumeOf(mustRender(t, minimalValues+"logState: {enabled: true, existingClaim: logs}"), c, "log-state"); get(v, "persistentVolumeClaim", "claimName") != "logs" {
		t.Errorf("claim volume %v, want claimName logs", v)
	}
	for values, want := range map[string]string{
		"logState: {enabled: true, existingClaim: logs}\nreplicaCount: 2":           "stateFile.existingClaim keeps one pod's state file",
		"logState: {enabled: true, existingClaim: logs}\nsharding: {enabled: true}": "stateFile.existingClaim keeps one pod's state file",
		"logState: {enabled: true}\nextraArgs: [--collect.logs.state-file=/x]":      "use stateFile",
		"logState: {enabled: true}\nextraArgs: [--state.file=/x]":                   "use stateFile",
		"logState: {enabled: yes-please}":                                           "at '/logState/enabled'",
		"logState: {enabeld: true}":                                                 "logState",
	} {
		if _, err := render(t, minimalValues+values); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", values, err, want)
		}
	}
}

// TestStateFileValue: stateFile is the value named after --state.file;
// logState, its former name, stays as a deprecated alias rendering the
// same manifests (the same volume, mount and file, so that moving from one
// name to the other keeps the file).
func TestStateFileValue(t *testing.T) {
	for _, c := range []struct{ name, alias string }{
		{"stateFile: {enabled: true}", "logState: {enabled: true}"},
		{"stateFile: {enabled: true, existingClaim: state}", "logState: {enabled: true, existingClaim: state}"},
	} {
		got, want := mustRender(t, minimalValues+c.name), mustRender(t, minimalValues+c.alias)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s renders otherwise than %s", c.name, c.alias)
		}
		if !slices.Contains(args(container(t, got)), "--state.file=/var/lib/clouddb/logs/positions.json") {
			t.Errorf("%s: args %v lack --state.file", c.name, args(container(t, got)))
		}
	}
	for values, want := range map[string]string{
		"stateFile: {enabled: true, existingClaim: a}\nlogState: {enabled: true, existingClaim: b}": "stateFile.existingClaim and its deprecated alias logState.existingClaim differ",
		"stateFile: {enabled: true, existingClaim: a}\nreplicaCount: 2":                             "stateFile.existingClaim keeps one pod's state file",
		"stateFile: {enabled: true}\nextraArgs: [--state.file=/x]":                                  "use stateFile",
		"stateFile: {enabeld: true}":                                                                "stateFile",
	} {
		if _, err := render(t, minimalValues+values); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", values, err, want)
		}
	}
}
