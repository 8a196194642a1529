package apiclient

import (
	"errors"
	"testing"
	"unicode/utf8"
)

// FuzzDecode feeds arbitrary bytes to the decoding of every response shape the
// poller depends on and to error-body parsing: none of them may panic, and an
// error body's snippet must stay short, valid text.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`[{"service_id":"s1","created":"2024-05-01T10:00:00.123Z","resources":[{"id":"r","spec":{"cpu_millis":"1000"}}],"endpoint":null}]`,
		`[{"id":"r1","nodes":"2","cpu_millis":null,"metadata":{"environment":"DEV"}}]`,
		`{"id":"p1","status":"pending","error_message":null}`,
		`{"apiKey":{"created":"2024-01-02T03:04:05","issuing_user":{},"project":{"plan_type":"x"}},"type":"apiKey"}`,
		`{"code":"INVALID_REQUEST","message":"service_type is required"}`,
		`[{"labels":{"role":"primary","ordinal":0},"data":[{"time":"2026-01-01T00:00:00Z","value":null},{"time":1,"value":"2"}]}]`,
		`{"entries":[{"timestamp":"2026-01-01T00:00:00Z","message":"m","severity":"SHOUT"}],"last_cursor":"c"}`,
		`{"logs":["2026-01-02 03:04:05 UTC [1] FATAL:  x"],"lastCursor":"c"}`,
		`["a_database_qps",1,null]`,
		`<html>502</html>`,
		`null`,
		`[]`,
		`[{"port":1e400}]`,
		"\xff\xfe",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Reads are decoded leniently: a field that does not decode is
		// recorded on its resource, and must never panic.
		lenient := func(FieldError) {}
		var services []Service
		_ = decodeBody(OpListServices, data, &services, lenient)
		var replicaSets []ReplicaSet
		_ = decodeBody(OpListReplicaSets, data, &replicaSets, lenient)
		var peering Peering
		_ = decodeBody(OpGetPeering, data, &peering, lenient)
		var vpcs []VPC
		_ = decodeBody(OpListVPCs, data, &vpcs, lenient)
		var series []Series
		_ = decodeBody(OpGetServiceMetricsSeries, data, &series, lenient)
		var names []seriesName
		_ = decodeBody(OpGetServiceMetricsAvailableSeries, data, &names, lenient)
		var page LogPage
		if decodeBody(OpGetServiceLogs, data, &page, lenient) == nil {
			page.normalize()
		}
		var info AuthInfo
		_ = decodeBody(OpGetAuthInfo, data, &info, nil)
		var created Service
		if err := decodeBody(OpCreateService, data, &created, nil); err != nil {
			var d *DecodeError
			if errors.As(err, &d) && len(data) > 0 && d.Snippet != "<omitted: response carries a secret>" {
				t.Fatalf("createService decode error quotes the body: %q", d.Snippet)
			}
		}

		e := errorFromBody(newRedactor("access", "secret-key", "api-key"), data)
		for _, s := range []string{e.Body, e.Code, e.Message} {
			if len(s) > maxErrorSnippet || !utf8.ValidString(s) {
				t.Fatalf("error text %q is too long or not UTF-8", s)
			}
		}
		_ = e.Error()
	})
}
