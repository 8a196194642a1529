package collector

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

func TestServiceMetrics(t *testing.T) {
	compareCollectorGolden(t, NewFleetCollectorOf(testSnapshots()...), "services.prom",
		"clouddb_service_info",
		"clouddb_service_status",
		"clouddb_service_paused",
		"clouddb_service_created_timestamp_seconds",
		"clouddb_service_status_changed_timestamp_seconds",
		"clouddb_service_resources",
		"clouddb_service_cpu_cores",
		"clouddb_service_memory_bytes",
		"clouddb_service_volume_info",
		"clouddb_service_connection_pooler_enabled",
	)
}

// TestServiceInfoLabels gives the API field of every label of
// clouddb_service_info, found by its json tags as the HELP names it, a value
// of its own, and checks that each label carries its field's value; and
// that every label is empty when the API sends none. A new row of
// serviceInfoLabels is tested here without a new test.
func TestServiceInfoLabels(t *testing.T) {
	var svc apiclient.Service
	want := map[string]string{"project_id": "proj"}
	empty := maps.Clone(want)
	for i, l := range serviceInfoLabels {
		want[l.name] = setDistinct(t, jsonField(t, reflect.ValueOf(&svc).Elem(), l.field), i)
		empty[l.name] = ""
	}
	checkServiceInfo(t, &svc, want)
	checkServiceInfo(t, &apiclient.Service{}, empty)
}

// jsonField returns the field of the struct v at a dotted path of json
// names, allocating the structs on its way.
func jsonField(t *testing.T, v reflect.Value, path string) reflect.Value {
	t.Helper()
	for name := range strings.SplitSeq(path, ".") {
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			t.Fatalf("field %s: %s is not an object", path, v.Type())
		}
		fields := reflect.VisibleFields(v.Type())
		i := slices.IndexFunc(fields, func(f reflect.StructField) bool {
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			return tag == name
		})
		if i < 0 {
			t.Fatalf("field %s: %s has no field %q", path, v.Type(), name)
		}
		v = v.FieldByIndex(fields[i].Index)
	}
	return v
}

// setDistinct sets f to a value that depends on i and returns it as a
// label value.
func setDistinct(t *testing.T, f reflect.Value, i int) string {
	t.Helper()
	switch f.Kind() {
	case reflect.String:
		s := fmt.Sprintf("value-%d", i)
		f.SetString(s)
		return s
	case reflect.Int64:
		n := int64(1000 + i)
		f.SetInt(n)
		return strconv.FormatInt(n, 10)
	}
	t.Fatalf("a field of kind %s: give setDistinct a value of its own for it", f.Kind())
	return ""
}

func checkServiceInfo(t *testing.T, svc *apiclient.Service, want map[string]string) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewFleetCollectorOf(&fleet.Snapshot{ProjectID: "proj", Services: []fleet.Service{{Service: svc}}}))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "clouddb_service_info" {
			continue
		}
		if len(mf.GetMetric()) != 1 {
			t.Fatalf("%d series, want 1", len(mf.GetMetric()))
		}
		got := map[string]string{}
		for _, l := range mf.GetMetric()[0].GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		if !maps.Equal(got, want) {
			t.Errorf("clouddb_service_info labels\n%v\nwant (each from its field)\n%v", got, want)
		}
		return
	}
	t.Fatal("no clouddb_service_info")
}
