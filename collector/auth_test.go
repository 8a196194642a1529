package collector

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
)

func TestAuthMetrics(t *testing.T) {
	compareCollectorGolden(t, NewFleetCollectorOf(testSnapshots()...), "auth.prom",
		"clouddb_api_key_info",
		"clouddb_api_key_created_timestamp_seconds",
	)
}

// The issuing user's e-mail and name are personal data: no label, no value.
func TestAuthMetricsCarryNoPersonalData(t *testing.T) {
	out, err := testutil.CollectAndFormat(NewFleetCollectorOf(testSnapshots()...), expfmt.TypeTextPlain,
		"clouddb_api_key_info", "clouddb_api_key_created_timestamp_seconds")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `issuing_user_id="user-7"`) {
		t.Fatalf("no clouddb_api_key_info of user-7 in:\n%s", out)
	}
	for _, personal := range []string{"jane.doe@example.com", "Jane Doe", "email"} {
		if strings.Contains(string(out), personal) {
			t.Errorf("auth metrics contain %q:\n%s", personal, out)
		}
	}
}
