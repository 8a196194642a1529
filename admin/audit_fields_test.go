package admin

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestAuditRecordParameters: a record says what was asked, as the
// Kubernetes audit Request level does: the validated body with secrets
// redacted, whether the PROD confirmation was given, the User-Agent (cut
// like every field), and for a tracked operation a "settled" record with
// its final state.
func TestAuditRecordParameters(t *testing.T) {
	e := newEnv(t)
	d := e.demo()
	p := "/api/v1/projects/" + testProject
	emb, orders := d.service["embeddings"], d.service["orders-db"]
	resize := e.do("POST", p+"/services/"+emb+"/resize", `{"cpu_millis":2000,"memory_gbs":"8"}`, "User-Agent", "ops-cli/1.2")
	e.do("POST", p+"/services/"+emb+"/updatePassword", `{"password":"audited-secret-pw"}`, "User-Agent", strings.Repeat("u", 4096))
	e.do("DELETE", p+"/services/"+orders+"?confirm="+orders, "")
	e.do("POST", p+"/services/"+emb+"/setHA?dry_run=true", `{"replica_count":2}`)
	e.srv.background.Wait()
	text := e.audit.String()
	if strings.Contains(text, "audited-secret-pw") || strings.Contains(e.logs.String(), "audited-secret-pw") {
		t.Fatalf("the password reached the audit or the log:\n%s", text)
	}
	byOp := map[string][]map[string]any{}
	for _, rec := range auditLines(t, text) {
		byOp[rec["operation"].(string)+"/"+rec["event"].(string)] = append(byOp[rec["operation"].(string)+"/"+rec["event"].(string)], rec)
	}
	one := func(key string) map[string]any {
		t.Helper()
		if len(byOp[key]) != 1 {
			t.Fatalf("%d %s records in:\n%s", len(byOp[key]), key, text)
		}
		return byOp[key][0]
	}
	for _, event := range []string{eventAccepted, eventOutcome} {
		rec := one(apiclient.OpResizeService + "/" + event)
		params, _ := rec["params"].(map[string]any)
		if params["cpu_millis"] != "2000" || params["memory_gbs"] != "8" || rec["user_agent"] != "ops-cli/1.2" || rec["confirmed"] != nil {
			t.Errorf("resize %s record: %v", event, rec)
		}
	}
	pw := one(apiclient.OpUpdatePassword + "/" + eventOutcome)
	params, _ := pw["params"].(map[string]any)
	ua, _ := pw["user_agent"].(string)
	if params["password"] != redactedValue || ua == "" || len(ua) > maxAuditField {
		t.Errorf("updatePassword record: %v", pw)
	}
	del := one(apiclient.OpDeleteService + "/" + eventAccepted)
	if del["confirmed"] != true || del["params"] != nil {
		t.Errorf("confirmed delete record: %v", del)
	}
	ha := one(apiclient.OpSetHA + "/" + eventOutcome)
	if params, _ := ha["params"].(map[string]any); ha["dry_run"] != true || params["replica_count"] != float64(2) {
		t.Errorf("dry-run setHA record: %v", ha)
	}
	// The resize is tracked until READY, the delete until gone.
	testbin.WaitFor(t, 20*time.Second, "the settled records", func() bool {
		return strings.Count(e.audit.String(), `"event":"settled"`) == 2
	})
	byOp = map[string][]map[string]any{}
	for _, rec := range auditLines(t, e.audit.String()) {
		byOp[rec["operation"].(string)+"/"+rec["event"].(string)] = append(byOp[rec["operation"].(string)+"/"+rec["event"].(string)], rec)
	}
	settled := one(apiclient.OpResizeService + "/" + eventSettled)
	if settled["request_id"] != resize.header.Get("X-Request-Id") || settled["state"] != stateSucceeded ||
		settled["last_status"] != apiclient.ServiceReady || settled["params"] == nil || settled["service_id"] != emb {
		t.Errorf("settled resize record: %v", settled)
	}
	if gone := one(apiclient.OpDeleteService + "/" + eventSettled); gone["state"] != stateSucceeded || gone["last_status"] != lastStatusGone || gone["confirmed"] != true {
		t.Errorf("settled delete record: %v", gone)
	}
	if _, ok := byOp[apiclient.OpUpdatePassword+"/"+eventSettled]; ok {
		t.Error("a synchronous write has a settled record")
	}
	if ha["status"] != float64(http.StatusOK) {
		t.Errorf("dry run status: %v", ha["status"])
	}
}
