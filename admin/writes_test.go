package admin

import (
	"cmp"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// These tests take every write operation from the catalog and its
// endpoint's example and run it on a fresh demo fleet of the simulator,
// whose own route table and validation are the oracle: a new write needs
// no case here.

// boundEndpoints returns the endpoints as the server routes them.
func boundEndpoints(t *testing.T) []*endpoint {
	t.Helper()
	eps, err := bind(apiclient.Catalog(), endpoints())
	if err != nil {
		t.Fatal(err)
	}
	return eps
}

// exampleRequest is an endpoint's example resolved on a demo fleet.
type exampleRequest struct {
	method, path, body string
	ids                ids
}

func resolveExample(t *testing.T, d demoIDs, ep *endpoint) exampleRequest {
	t.Helper()
	demo := Demo{Services: d.service, ReplicaSets: d.rs, VPCs: d.vpc, Peerings: d.peerings}
	path, body, err := Examples()[ep.op].Request(ep.api, testProject, demo) // as the contract test reads them
	if err != nil {
		t.Fatal(err)
	}
	// The path values, for the guard's resource.
	v := ids{}
	parts, tmpl := strings.Split(path, "/"), strings.Split(ep.api.Path, "/")
	for i, p := range tmpl {
		if strings.HasPrefix(p, "{") {
			v[strings.Trim(p, "{}")] = parts[i]
		}
	}
	return exampleRequest{method: ep.api.Method, path: apiPrefix + path, body: body, ids: v}
}

// isProd reads the environment of the resource an endpoint's guard reads.
// makeProd sets the environment of the resource a guarded write affects to PROD, through
// the API, so that the write needs its confirmation whatever the demo fleet holds.
func makeProd(t *testing.T, e *env, ep *endpoint, v ids) {
	t.Helper()
	prod := apiclient.SetEnvironmentRequest{Environment: apiclient.EnvironmentProd}
	var err error
	if what, id := ep.guardedResource(v); what == "replica set" {
		_, err = e.client.SetReplicaSetEnvironment(t.Context(), v[idService], id, prod)
	} else {
		_, err = e.client.SetServiceEnvironment(t.Context(), id, prod)
	}
	if err != nil {
		t.Fatal(err)
	}
	e.sent() // not the write's
}

func TestEveryWriteOperation(t *testing.T) {
	for _, ep := range boundEndpoints(t) {
		t.Run(ep.op, func(t *testing.T) {
			e := newEnv(t)
			x := resolveExample(t, e.demo(), ep)
			want := cmp.Or(ep.example.Status, ep.api.Success)
			refused := 0
			expectRefused := func(path, body, field string) {
				t.Helper()
				refused++
				a := e.do(x.method, path, body)
				if a.status != http.StatusBadRequest || a.json(t)["code"] != codeInvalidRequest || !strings.Contains(a.json(t)["message"].(string), field) {
					t.Errorf("%s %s %s: %d %s, want 400 naming %s", x.method, path, body, a.status, a.body, field)
				}
				if sent := e.sent(); len(sent) != 0 {
					t.Errorf("an invalid request reached the API: %v", sent)
				}
			}
			if ep.guard != nil {
				makeProd(t, e, ep, x.ids)
			}
			expectRefused(x.path, ep.example.Bad, ep.example.BadField)
			path := x.path
			decoded, err := ep.decode([]byte(x.body))
			if err != nil {
				t.Fatalf("the example body %s is refused: %v", x.body, err)
			}
			switch {
			case ep.guard != nil && !ep.guards(decoded):
				t.Fatalf("the example %s is one the PROD guard does not apply to: give a guarded write an example it guards", x.body)
			case !ep.guards(decoded):
				expectRefused(x.path+"?confirm=x", x.body, "confirm")
			default:
				a := e.do(x.method, path, x.body)
				if a.status != http.StatusPreconditionRequired || a.json(t)["code"] != codeConfirmationRequired {
					t.Errorf("a PROD resource without ?confirm=: %d %s, want 428", a.status, a.body)
				}
				if n := e.sent()[ep.op]; n != 0 {
					t.Errorf("an unconfirmed request reached the API %d times", n)
				}
				_, id := ep.guardedResource(x.ids)
				path += "?confirm=" + id
			}
			good := e.do(x.method, path, x.body)
			if good.status != want {
				t.Fatalf("%s %s: %d %s, want %d", x.method, path, good.status, good.body, want)
			}
			e.srv.background.Wait()
			if n := e.sent()[ep.op]; n != 1 {
				t.Errorf("%s sent %d times upstream, want 1", ep.op, n)
			}
			if good.header.Get("X-Request-Id") == "" {
				t.Error("no X-Request-Id")
			}
			for code, n := range map[int]int{want: 1, http.StatusBadRequest: refused} {
				if v := testutil.ToFloat64(e.srv.metrics.requests.WithLabelValues(ep.op, strconv.Itoa(code))); v != float64(n) {
					t.Errorf("admin_requests_total{%s,%d} = %v, want %d", ep.op, code, v, n)
				}
			}
			if problems, err := testutil.GatherAndLint(e.reg); err != nil || len(problems) > 0 {
				t.Errorf("metrics lint: %v %v", err, problems)
			}
		})
	}
}

// TestEveryWriteRefusesWhatTheAPIRefuses sends variants of each example's
// body (a field left out, null, empty, of another type, an unknown field;
// not a format, which may depend on the API's revision): the
// surface either refuses one itself, sending nothing, or the API takes it.
// A body the API answers 400 is validation missing from the endpoint.
func TestEveryWriteRefusesWhatTheAPIRefuses(t *testing.T) {
	for _, ep := range boundEndpoints(t) {
		t.Run(ep.op, func(t *testing.T) {
			e := newEnv(t)
			x := resolveExample(t, e.demo(), ep)
			path := x.path
			if ep.guard != nil {
				_, id := ep.guardedResource(x.ids)
				path += "?confirm=" + id
			}
			for _, body := range bodyVariants(t, x.body) {
				a := e.do(x.method, path, body)
				e.srv.background.Wait()
				sent := e.sent()[ep.op]
				switch {
				case a.status == http.StatusBadRequest && sent > 0:
					t.Errorf("%s: the API refused %s, which the surface let through: %s", ep.op, body, a.body)
				case a.status == http.StatusBadRequest:
				case sent == 0 || a.status >= 500:
					t.Errorf("%s %s: %d %s, want a 400 or the API's answer", ep.op, body, a.status, a.body)
				case x.body == "" || strings.Contains(body, "zz_unknown"):
					t.Errorf("%s took %s: %d %s, want a 400", ep.op, body, a.status, a.body)
				}
			}
		})
	}
}

// bodyVariants returns bodies derived from a valid one: for an operation
// that takes none, JSON that is not an empty object.
func bodyVariants(t *testing.T, body string) []string {
	t.Helper()
	if body == "" {
		return []string{`{"x":1}`, `[]`, `null`, `1`, `"x"`, `{"zz_unknown":1}`}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &fields); err != nil {
		t.Fatalf("example body %s: %v", body, err)
	}
	encode := func(m map[string]json.RawMessage) string {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	with := func(name string, v json.RawMessage) string {
		m := make(map[string]json.RawMessage, len(fields)+1)
		for k, f := range fields {
			m[k] = f
		}
		if v == nil {
			delete(m, name)
		} else {
			m[name] = v
		}
		return encode(m)
	}
	out := []string{with("zz_unknown", json.RawMessage(`1`))}
	for name := range fields {
		out = append(out, with(name, nil))
		for _, v := range []string{`null`, `""`, `-1`, `0`, `1.5`, `true`, `[]`, `{}`} {
			out = append(out, with(name, json.RawMessage(v)))
		}
	}
	slices.Sort(out)
	return out
}

// docRules are the "Admin surface" cells of docs/api.md's operation
// tables, by operation.
func docRules(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string]string{}
	var admin int // the column, in the current table; 0 for none
	for _, line := range strings.Split(string(raw), "\n") {
		cells := strings.Split(strings.Trim(line, "| "), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case !strings.HasPrefix(line, "|"):
			admin = 0
		case cells[0] == "Operation":
			admin = slices.Index(cells, "Admin surface")
		case admin > 0 && len(cells) > admin:
			for _, m := range regexp.MustCompile("`(\\w+)`").FindAllStringSubmatch(cells[0], -1) {
				rules[m[1]] = cells[admin]
			}
		}
	}
	return rules
}

// docOptIn are the operations docs/api.md marks opt-in.
func docOptIn(t *testing.T) []string {
	var out []string
	for op, rule := range docRules(t) {
		if strings.Contains(rule, "opt-in") {
			out = append(out, op)
		}
	}
	slices.Sort(out)
	return out
}

// TestWriteRulesAreDocumented holds each endpoint's PROD guard,
// Idempotency-Key and opt-in to the "Admin surface" column of docs/api.md,
// so that a rule left out of an entry (or the docs) fails.
func TestWriteRulesAreDocumented(t *testing.T) {
	rules := docRules(t)
	for _, o := range apiclient.Catalog() {
		if rule, ok := rules[o.Name]; !o.Write && ok && rule != "—" {
			t.Errorf("read %s: docs/api.md says %q on the admin surface, want —", o.Name, rule)
		}
	}
	for _, ep := range boundEndpoints(t) {
		rule := rules[ep.op]
		if !strings.HasPrefix(rule, "served") {
			t.Errorf("%s: docs/api.md's Admin surface column says %q, want served", ep.op, rule)
			continue
		}
		for what, got := range map[string]bool{"PROD: `?confirm=`": ep.guard != nil, "Idempotency-Key": ep.idempotent, "opt-in": ep.optIn} {
			if documented := strings.Contains(rule, what); documented != got {
				t.Errorf("%s: %s is %v, docs/api.md says %q", ep.op, what, got, rule)
			}
		}
	}
}

// TestGuardedWritesAreDocumented: docs/admin.md's PROD confirmation lists
// exactly the endpoints with a guard, by operation name.
func TestGuardedWritesAreDocumented(t *testing.T) {
	raw, err := os.ReadFile("../docs/admin.md")
	if err != nil {
		t.Fatal(err)
	}
	_, bullet, ok := strings.Cut(string(raw), "- **PROD confirmation.**")
	bullet, _, _ = strings.Cut(bullet, "\n- ")
	if !ok {
		t.Fatal("docs/admin.md has no PROD confirmation bullet")
	}
	var documented, guarded []string
	for _, m := range regexp.MustCompile("`(\\w+)`").FindAllStringSubmatch(bullet, -1) {
		if slices.ContainsFunc(apiclient.Catalog(), func(o apiclient.Operation) bool { return o.Name == m[1] }) {
			documented = append(documented, m[1])
		}
	}
	for _, ep := range boundEndpoints(t) {
		if ep.guard != nil {
			guarded = append(guarded, ep.op)
		}
	}
	slices.Sort(documented)
	slices.Sort(guarded)
	if !slices.Equal(documented, guarded) {
		t.Errorf("docs/admin.md's PROD confirmation names %v, the guarded endpoints are %v", documented, guarded)
	}
}
