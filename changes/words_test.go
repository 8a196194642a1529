package changes

import (
	"encoding/json"
	"testing"
	"time"
)

func TestDescribeInPlainWords(t *testing.T) {
	start := time.Date(2026, 3, 1, 3, 4, 0, 0, time.UTC)
	e := Event{ObjectType: TypeService, ObjectID: "s1", ObjectName: "orders-db", Kind: KindResized, Time: start.Add(time.Hour),
		WindowStart: &start, Before: Fields{"cpu_millis": int64(2000), "memory_gbs": int64(8)}, After: Fields{"cpu_millis": int64(1000), "memory_gbs": int64(4)}, Actor: "alice"}
	want := "service orders-db resized 2 CPU / 8 GB -> 1 CPU / 4 GB, between 03:04 and 04:04 UTC, by alice"
	if got := e.Describe(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// The same, read back from the file: numbers are float64.
	b, _ := json.Marshal(e)
	var back Event
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.Describe(); got != want {
		t.Errorf("read back: %q", got)
	}
	ha := Event{ObjectType: TypeService, ObjectName: "db", Kind: KindHAChanged, Time: start, Before: Fields{"replica_count": int64(2), "sync_replica_count": int64(1)},
		After: Fields{"replica_count": int64(0), "sync_replica_count": int64(0)}}
	if got := ha.Describe(); got != "service db HA 2 replicas (1 sync) -> 0 replicas, seen at 2026-03-01 03:04 UTC" {
		t.Errorf("got %q", got)
	}
}

// A peering whose status stays while its error comes or goes says so,
// rather than "status active -> active".
func TestPeeringErrorInPlainWords(t *testing.T) {
	at := time.Date(2026, 3, 1, 3, 4, 0, 0, time.UTC)
	for _, c := range []struct {
		before, after Fields
		want          string
	}{
		{Fields{"status": "active", "error_message": ""}, Fields{"status": "active", "error_message": "route table conflict"},
			"peering vpc-2 error: route table conflict (status active), seen at 2026-03-01 03:04 UTC"},
		{Fields{"status": "active", "error_message": "route table conflict"}, Fields{"status": "active", "error_message": ""},
			"peering vpc-2 error cleared: route table conflict (status active), seen at 2026-03-01 03:04 UTC"},
		{Fields{"status": "pending", "error_message": ""}, Fields{"status": "failed", "error_message": "quota"},
			"peering vpc-2 status pending -> failed (quota), seen at 2026-03-01 03:04 UTC"},
	} {
		e := Event{ObjectType: TypePeering, ObjectName: "vpc-2", Kind: KindStatusChanged, Time: at, Before: c.before, After: c.after}
		if got := e.Describe(); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}
