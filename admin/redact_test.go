package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// idlePoller refreshes nothing: the echoing upstream below serves writes
// only.
type idlePoller struct{}

func (idlePoller) RefreshService(context.Context, string) error         { return nil }
func (idlePoller) RefreshReplicaSets(context.Context, string) error     { return nil }
func (idlePoller) RefreshVPC(context.Context, string) error             { return nil }
func (idlePoller) RefreshPeering(context.Context, string, string) error { return nil }
func (idlePoller) Snapshot() *fleet.Snapshot                            { return nil }

// TestSuccessAnswersRedacted: an upstream (or a debugging proxy) that
// echoes the request's Authorization header and the keys in a success
// answer hands them to no admin caller, neither in the answer nor in its
// replay for the same Idempotency-Key.
func TestSuccessAnswersRedacted(t *testing.T) {
	const access, secret = "AKechoedaccesskey", "SKechoedsecretkey/+0123"
	// \u escapes hide the secret from a plain text search of the raw JSON.
	escaped := strings.ReplaceAll(secret, "S", `\u0053`)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth, _ := json.Marshal(r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		_, _ = fmt.Fprintf(w, `{"service_id":"svc-echo","project_id":%q,"name":"echo","status":"QUEUED","initial_password":"pw-0123456789",`+
			`"debug":{"authorization":%s,"access_key":%q,"secret_key":%q,"escaped":"%s","pair":%q}}`,
			testProject, auth, access, secret, escaped, access+":"+secret)
	}))
	t.Cleanup(upstream.Close)
	client, err := apiclient.New(apiclient.Config{
		BaseURL: upstream.URL + "/v1", ProjectID: testProject, AccessKey: access, SecretKey: secret,
		RateLimit: float64(rate.Inf), MaxRetries: -1, Timeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv, err := New(ctx, Options{
		Token: testToken, Allow: WriteOperations(),
		Projects: func(id string) (Project, bool) {
			return Project{Client: client, Poller: idlePoller{}}, id == testProject
		},
		OperationTimeout: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(srv)
	t.Cleanup(front.Close)
	e := &env{t: t, srv: srv, url: front.URL}
	p := "/api/v1/projects/" + testProject
	create := `{"name":"echo","addons":[],"region_code":"r","cpu_millis":1000,"memory_gbs":4}`
	first := e.do("POST", p+"/services", create, idempotencyHeader, "echo-key")
	replay := e.do("POST", p+"/services", create, idempotencyHeader, "echo-key")
	resize := e.do("POST", p+"/services/svc-echo/resize", `{"cpu_millis":1000,"memory_gbs":4}`)
	basic := strings.TrimPrefix(basicAuth(access, secret), "Basic ")
	for name, a := range map[string]answer{"create": first, "replay": replay, "resize": resize} {
		if a.status != http.StatusAccepted {
			t.Errorf("%s: %d %s", name, a.status, a.body)
			continue
		}
		if name == "replay" && a.header.Get(replayedHeader) != "true" {
			t.Errorf("replay not replayed: %v", a.header)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(a.body), &m); err != nil {
			t.Errorf("%s: not JSON after redaction: %v: %s", name, err, a.body)
			continue
		}
		decoded, _ := json.Marshal(m) // the \u escapes undone
		for _, leak := range []string{access, secret, basic, basic[:12]} {
			if strings.Contains(a.body, leak) || strings.Contains(string(decoded), leak) {
				t.Errorf("%s: answer holds %q: %s", name, leak, a.body)
			}
		}
		if m["service_id"] != "svc-echo" || (name != "resize" && m["initial_password"] != "pw-0123456789") {
			t.Errorf("%s: redaction changed more than the keys: %s", name, a.body)
		}
	}
}

func basicAuth(user, password string) string {
	r, _ := http.NewRequest(http.MethodGet, "/", nil)
	r.SetBasicAuth(user, password)
	return r.Header.Get("Authorization")
}
