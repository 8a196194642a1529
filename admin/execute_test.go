package admin

import (
	"strings"
	"testing"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// relayBody relays the upstream answer as received, re-encodes the result
// only when there is no answer, and keeps the answer of an operation that
// may answer a password out of caches.
func TestRelayBody(t *testing.T) {
	svc := &apiclient.Service{ServiceID: "s1", Name: "orders"}
	secret := &apiclient.Service{ServiceID: "s2", InitialPassword: "hunter2"}
	for _, tc := range []struct {
		name        string
		result      any
		answer      string
		body        string
		contentType string
		cache       string
		secret      bool
	}{
		{name: "answer relayed as received", result: svc, answer: `{"service_id":"s1", "extra":true}`,
			body: `{"service_id":"s1", "extra":true}`, contentType: "application/json"},
		{name: "answer without a result", answer: `{"message":"attached"}`,
			body: `{"message":"attached"}`, contentType: "application/json"},
		{name: "no answer: the result re-encoded", result: &apiclient.VPC{ID: "v1"},
			body: `{"id":"v1"`, contentType: "application/json"},
		{name: "an answer that is not JSON is not relayed", answer: "<html>",
			body: "", contentType: ""},
		{name: "nothing to relay"},
		{name: "a password is not cached", result: secret, answer: `{"service_id":"s2","initial_password":"hunter2"}`,
			body: `{"service_id":"s2","initial_password":"hunter2"}`, contentType: "application/json", cache: "no-store", secret: true},
		{name: "an operation that may answer a password", result: svc, secret: true,
			body: `{"service_id":"s1"`, contentType: "application/json", cache: "no-store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, header := relayBody(tc.result, []byte(tc.answer), tc.secret)
			// A re-encoded result is checked by its start: its other
			// fields are the encoder's business.
			if got := string(body); got != tc.body && (tc.result == nil || tc.answer != "" || !strings.HasPrefix(got, tc.body)) {
				t.Errorf("body %q, want %q", got, tc.body)
			}
			if got := header.Get("Content-Type"); got != tc.contentType {
				t.Errorf("Content-Type %q, want %q", got, tc.contentType)
			}
			if got := header.Get("Cache-Control"); got != tc.cache {
				t.Errorf("Cache-Control %q, want %q", got, tc.cache)
			}
			if header == nil {
				t.Error("nil header: relay sets Location on it")
			}
		})
	}
}
