package cloudsim

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

func peeringBody() map[string]any {
	return map[string]any{"peer_account_id": "123456789012", "peer_region_code": "us-west-2", "peer_vpc_id": "vpc-1"}
}

func (e *env) createPeering(vpcID string) string {
	e.t.Helper()
	return decode[apiclient.Peering](e.t, e.must(http.StatusCreated, "POST", vpcsPath+"/"+vpcID+"/peerings", peeringBody())).ID
}

func TestPeeringOperations(t *testing.T) {
	e := newEnv(t, Timings{Peering: time.Minute})
	v := e.createVPC("v")
	peerings := vpcsPath + "/" + v + "/peerings"

	raw := e.must(http.StatusCreated, "POST", peerings, peeringBody())
	if k := keys(t, raw); k["error_message"] || !k["provisioned_id"] {
		t.Errorf("create response fields: %s", raw)
	}
	pr := decode[apiclient.Peering](t, raw)
	if pr.Status != apiclient.PeeringPending || pr.PeerAccountID != "123456789012" || pr.PeerRegionCode != "us-west-2" ||
		pr.PeerVPCID != "vpc-1" || pr.ID == "" || pr.ProvisionedID == "" {
		t.Fatalf("create response: %s", raw)
	}
	one := peerings + "/" + pr.ID

	raw = e.must(http.StatusOK, "GET", one, nil)
	if !strings.Contains(string(raw), `"error_message":null`) {
		t.Errorf("get shows no null error_message: %s", raw)
	}
	if got := decode[apiclient.Peering](t, raw); got.Status != apiclient.PeeringPending {
		t.Errorf("status before the timing: %s", got.Status)
	}
	e.clock.Advance(time.Minute)
	list := decode[[]apiclient.Peering](t, e.must(http.StatusOK, "GET", peerings, nil))
	if len(list) != 1 || list[0].Status != apiclient.PeeringActive || list[0].ErrorMessage != nil {
		t.Errorf("list after the timing: %+v", list)
	}

	msg := "route table full"
	if err := e.sim.SetPeeringError(testProject, v, pr.ID, &msg); err != nil {
		t.Fatal(err)
	}
	msg = "changed by the caller afterwards"
	if got := decode[apiclient.Peering](t, e.must(http.StatusOK, "GET", one, nil)); got.ErrorMessage == nil || *got.ErrorMessage != "route table full" {
		t.Errorf("error_message after SetPeeringError: %v", got.ErrorMessage)
	}
	if err := e.sim.SetPeeringStatus(testProject, v, pr.ID, "failed"); err != nil {
		t.Fatal(err)
	}
	if got := decode[apiclient.Peering](t, e.must(http.StatusOK, "GET", one, nil)); got.Status != "failed" {
		t.Errorf("forced status: %s", got.Status)
	}

	e.must(http.StatusNoContent, "DELETE", one, nil)
	e.mustError(http.StatusNotFound, "NOT_FOUND", "GET", one, nil)
	e.mustError(http.StatusNotFound, "NOT_FOUND", "DELETE", one, nil)
	e.mustError(http.StatusNotFound, "NOT_FOUND", "POST", vpcsPath+"/nosuchvpc0/peerings", peeringBody())
	if err := e.sim.SetPeeringError(testProject, v, pr.ID, nil); err == nil {
		t.Error("SetPeeringError on a deleted peering: no error")
	}
}

func TestPeeringZeroTiming(t *testing.T) {
	e := newEnv(t, Timings{})
	v := e.createVPC("v")
	// The create response says pending, as the spec shows, even when the
	// peering is active at once.
	id := e.createPeering(v)
	if got := decode[apiclient.Peering](t, e.must(http.StatusOK, "GET", vpcsPath+"/"+v+"/peerings/"+id, nil)); got.Status != apiclient.PeeringActive {
		t.Errorf("status with zero timing: %s", got.Status)
	}
}

func TestPeeringValidation(t *testing.T) {
	e := newEnv(t, Timings{})
	v := e.createVPC("v")
	for _, field := range []string{"peer_account_id", "peer_region_code", "peer_vpc_id"} {
		for _, value := range []any{nil, "", 12} {
			body := peeringBody()
			if value == nil {
				delete(body, field)
			} else {
				body[field] = value
			}
			if eb := e.mustError(http.StatusBadRequest, "INVALID_REQUEST", "POST", vpcsPath+"/"+v+"/peerings", body); !strings.Contains(eb.Message, field) {
				t.Errorf("%s=%v: message %q does not name the field", field, value, eb.Message)
			}
		}
	}
}
