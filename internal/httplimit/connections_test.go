package httplimit

import (
	"strings"
	"testing"
)

func TestMaxConnections(t *testing.T) {
	auto, err := MaxConnections("--web.max-connections", "auto", MainConnectionsShare, MainConnectionsCap)
	if err != nil || auto < 1 || auto > MainConnectionsCap || auto > max(1, openFilesLimit()/MainConnectionsShare) {
		t.Errorf("auto: %d, %v; want between 1 and min(%d, half of %d)", auto, err, MainConnectionsCap, openFilesLimit())
	}
	for value, want := range map[string]int{"0": 0, "12": 12} {
		if n, err := MaxConnections("--web.max-connections", value, 2, 100); n != want || err != nil {
			t.Errorf("%q: %d, %v; want %d", value, n, err, want)
		}
	}
	if n, _ := MaxConnections("--admin.max-connections", "auto", 1<<40, 10); n != 1 {
		t.Errorf("a share beyond the limit: %d, want at least 1", n)
	}
	for _, value := range []string{"-1", "many", ""} {
		if _, err := MaxConnections("--admin.max-connections", value, 2, 100); err == nil || !strings.Contains(err.Error(), "--admin.max-connections") {
			t.Errorf("%q: %v, want an error naming the flag", value, err)
		}
	}
}
