package helm

import (
	"slices"
	"strings"
	"testing"
)

// TestChangesFile: changesFile puts --changes.file on a writable volume: an
// emptyDir, or the claim named; off, neither; a claim shared by several pods
// is refused, as is the flag in extraArgs.
func TestChangesFile(t *testing.T) {
	const flag = "--changes.file=/var/lib/clouddb/changes/changes.ndjson"
	objs := mustRender(t, minimalValues)
	c := container(t, objs)
	if v, m := volumeOf(objs, c, "changes-file"); v != nil || m != nil || count(args(c), "--changes.file") != 0 {
		t.Errorf("off by default, yet: volume %v, mount %v, args %v", v, m, args(c))
	}
	for values, want := range map[string]string{
		"changesFile: {enabled: true}":                         "emptyDir",
		"changesFile: {enabled: true, existingClaim: changes}": "persistentVolumeClaim",
	} {
		objs := mustRender(t, minimalValues+values)
		c := container(t, objs)
		v, m := volumeOf(objs, c, "changes-file")
		if v == nil || v[want] == nil || m == nil || m["mountPath"] != "/var/lib/clouddb/changes" || m["readOnly"] == true {
			t.Errorf("%s: volume %v, mount %v; want a writable %s at /var/lib/clouddb/changes", values, v, m, want)
		}
		if !slices.Contains(args(c), flag) {
			t.Errorf("%s: args %v lack %s", values, args(c), flag)
		}
	}
	for values, want := range map[string]string{
		"changesFile: {enabled: true, existingClaim: c}\nreplicaCount: 2": "changesFile.existingClaim keeps one pod's changes file",
		"changesFile: {enabled: true}\nextraArgs: [--changes.file=/x]":    "use changesFile",
		"changesFile: {enabled: yes-please}":                              "at '/changesFile/enabled'",
	} {
		if _, err := render(t, minimalValues+values); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", values, err, want)
		}
	}
}
