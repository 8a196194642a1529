package admin

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// TestProdToDevGuard: switching a PROD service or replica set to DEV
// needs the confirmation a delete needs, or the delete's guard is
// bypassed by switching first. Switching to PROD, or a DEV resource,
// needs none.
func TestProdToDevGuard(t *testing.T) {
	e := newEnv(t)
	d := e.demo()
	p := "/api/v1/projects/" + testProject
	orders := d.service["orders-db"]
	rs := d.rs["metrics-read"]
	for _, c := range []struct{ op, path, id string }{
		{apiclient.OpSetServiceEnvironment, p + "/services/" + orders + "/setEnvironment", orders},
		{apiclient.OpSetReplicaSetEnvironment, p + "/services/" + rs[0] + "/replicaSets/" + rs[1] + "/setEnvironment", rs[1]},
	} {
		a := e.do("POST", c.path, `{"environment":"DEV"}`)
		if a.status != http.StatusPreconditionRequired || a.json(t)["code"] != codeConfirmationRequired ||
			!strings.Contains(a.body, "to switch it to DEV") || !strings.Contains(a.body, "?confirm="+c.id) {
			t.Errorf("%s PROD -> DEV without confirm: %d %s", c.op, a.status, a.body)
		}
		if sent := e.sent(); sent[c.op] != 0 {
			t.Errorf("unconfirmed %s sent %v", c.op, sent)
		}
		if a := e.do("POST", c.path+"?dry_run=true", `{"environment":"DEV"}`); !strings.Contains(a.body, "checked at execution time") {
			t.Errorf("%s dry run does not mention the confirmation: %s", c.op, a.body)
		}
		if a := e.do("POST", c.path+"?confirm=wrong", `{"environment":"DEV"}`); a.status != http.StatusBadRequest {
			t.Errorf("%s with a wrong confirm: %d %s", c.op, a.status, a.body)
		}
		// PROD -> PROD changes nothing to guard: no read, no confirmation.
		if a := e.do("POST", c.path, `{"environment":"PROD"}`); a.status != http.StatusOK {
			t.Errorf("%s to PROD: %d %s", c.op, a.status, a.body)
		}
		e.srv.background.Wait()
		if sent := e.sent(); sent[c.op] != 1 {
			t.Errorf("%s to PROD sent %v", c.op, sent)
		}
		if a := e.do("POST", c.path+"?confirm="+c.id, `{"environment":"DEV"}`); a.status != http.StatusOK {
			t.Errorf("confirmed %s: %d %s", c.op, a.status, a.body)
		}
		e.srv.background.Wait()
		if sent := e.sent(); sent[c.op] != 1 {
			t.Errorf("confirmed %s sent %v", c.op, sent)
		}
		// Now DEV: DEV -> DEV needs no confirmation.
		if a := e.do("POST", c.path, `{"environment":"DEV"}`); a.status != http.StatusOK {
			t.Errorf("%s DEV -> DEV: %d %s", c.op, a.status, a.body)
		}
		e.srv.background.Wait()
	}
}

// TestForkNotAllowedByDefault: a fork's answer carries the copy's password,
// so forkService must be allowed by name, as the deletes are.
func TestForkNotAllowedByDefault(t *testing.T) {
	if slices.Contains(DefaultAllow(), apiclient.OpForkService) {
		t.Errorf("forkService is in the default allow list %v", DefaultAllow())
	}
	e := newEnv(t, withOptions(func(o *Options) { o.Allow = nil }))
	d := e.demo()
	a := e.do("POST", "/api/v1/projects/"+testProject+"/services/"+d.service["search-ai"]+"/forkService", `{"fork_strategy":"NOW","name":"f"}`)
	if a.status != http.StatusForbidden || a.json(t)["code"] != codeOperationNotAllowed {
		t.Errorf("fork with the default allow list: %d %s", a.status, a.body)
	}
	if sent := e.sent(); len(sent) != 0 {
		t.Errorf("sent upstream: %v", sent)
	}
}
