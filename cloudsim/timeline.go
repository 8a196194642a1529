package cloudsim

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// TimelineStep is one write of the demo's change timeline, at its offset
// from the start of a round.
type TimelineStep struct {
	At   time.Duration
	Name string
	do   func(t *timelineRun) error
}

// DemoTimelineSteps make the --simulate demo's change feed live within its
// first minute, then every DemoTimelineRound: a resize, an HA change, a
// peering that fails and a service created before the demo's first poll
// after the start (it polls every 10 s), the peering's recovery and the
// service's deletion after that poll (a change undone between two polls is
// not seen; a deletion is confirmed by the next complete read).
func DemoTimelineSteps() []TimelineStep {
	return []TimelineStep{
		{At: 5 * time.Second, Name: "resize", do: (*timelineRun).resize},
		{At: 6 * time.Second, Name: "ha", do: (*timelineRun).setHA},
		{At: 7 * time.Second, Name: "peering fails", do: func(t *timelineRun) error { return t.peeringError("route table conflict (demo)") }},
		{At: 8 * time.Second, Name: "create", do: (*timelineRun).create},
		{At: 16 * time.Second, Name: "peering recovers", do: func(t *timelineRun) error { return t.peeringError("") }},
		{At: 17 * time.Second, Name: "delete", do: (*timelineRun).remove},
	}
}

// DemoTimelineRound is how often the demo's timeline steps run again.
const DemoTimelineRound = 5 * time.Minute

// RunTimeline makes steps through the simulator's own API and controls (as a
// client with cred would) every round until ctx ends; a step the fleet's
// state refuses (a conflict) is skipped.
func (s *Sim) RunTimeline(ctx context.Context, cred Credential, steps []TimelineStep, round time.Duration) {
	run := &timelineRun{sim: s, cred: cred}
	for {
		start := time.Now()
		for _, st := range steps {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(start.Add(st.At))):
			}
			if err := st.do(run); err != nil {
				s.logger.Debug("Demo timeline step skipped", "step", st.Name, "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(start.Add(round))):
		}
	}
}

type timelineRun struct {
	sim     *Sim
	cred    Credential
	created string
	peering [2]string
}

type stepError struct{ status int }

func (e stepError) Error() string { return "status " + http.StatusText(e.status) }

func (t *timelineRun) call(method, path, body string, out any) error {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if strings.HasPrefix(path, "/v1/") {
		req.SetBasicAuth(t.cred.AccessKey, t.cred.SecretKey)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	t.sim.ServeHTTP(rec, req)
	if rec.Code >= 300 {
		return stepError{rec.Code}
	}
	if out != nil {
		b, _ := io.ReadAll(rec.Body)
		return json.Unmarshal(b, out)
	}
	return nil
}

func (t *timelineRun) project() string { return "/v1/projects/" + t.cred.ProjectID }

// readyService picks the first READY service that no step made.
func (t *timelineRun) readyService(skip int) (id string, cpu int64, err error) {
	var list []apiclient.Service
	if err := t.call(http.MethodGet, t.project()+"/services", "", &list); err != nil {
		return "", 0, err
	}
	for _, svc := range list {
		if svc.Status != apiclient.ServiceReady || svc.ServiceID == t.created || len(svc.Resources) == 0 || svc.Resources[0].Spec == nil || svc.Resources[0].Spec.CPUMillis == nil {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		return svc.ServiceID, int64(*svc.Resources[0].Spec.CPUMillis), nil
	}
	return "", 0, stepError{http.StatusConflict}
}

func (t *timelineRun) resize() error {
	id, cpu, err := t.readyService(0)
	if err != nil {
		return err
	}
	// A rung of the ladder the example price file prices: up, or down
	// from 4000/16 on, so that the demo's cost estimate leaves nothing out.
	step := 1
	if cpu >= 4000 {
		step = -1
	}
	next, mem := ladderStep(cpu, step)
	body, _ := json.Marshal(map[string]any{"cpu_millis": next, "memory_gbs": mem})
	return t.call(http.MethodPost, t.project()+"/services/"+id+"/resize", string(body), nil)
}

func (t *timelineRun) setHA() error {
	id, _, err := t.readyService(1)
	if err != nil {
		return err
	}
	var svc apiclient.Service
	if err := t.call(http.MethodGet, t.project()+"/services/"+id, "", &svc); err != nil {
		return err
	}
	n := 1
	if svc.HAReplicas != nil && svc.HAReplicas.ReplicaCount != nil && *svc.HAReplicas.ReplicaCount > 0 {
		n = 0
	}
	body, _ := json.Marshal(map[string]any{"replica_count": n})
	return t.call(http.MethodPost, t.project()+"/services/"+id+"/setHA", string(body), nil)
}

func (t *timelineRun) peeringError(message string) error {
	if t.peering[0] == "" {
		var vpcs []apiclient.VPC
		if err := t.call(http.MethodGet, t.project()+"/vpcs", "", &vpcs); err != nil {
			return err
		}
		for _, v := range vpcs {
			var ps []apiclient.Peering
			if t.call(http.MethodGet, t.project()+"/vpcs/"+v.ID+"/peerings", "", &ps) == nil && len(ps) > 0 {
				t.peering = [2]string{v.ID, ps[0].ID}
				break
			}
		}
		if t.peering[0] == "" {
			return stepError{http.StatusNotFound}
		}
	}
	body, _ := json.Marshal(map[string]string{"error_message": message})
	return t.call(http.MethodPost, "/_sim/projects/"+t.cred.ProjectID+"/vpcs/"+t.peering[0]+"/peerings/"+t.peering[1]+"/error", string(body), nil)
}

func (t *timelineRun) create() error {
	var svc apiclient.Service
	err := t.call(http.MethodPost, t.project()+"/services",
		`{"name":"timeline-demo","addons":["time-series"],"region_code":"us-east-1","cpu_millis":1000,"memory_gbs":4}`, &svc)
	t.created = svc.ServiceID
	return err
}

func (t *timelineRun) remove() error {
	if t.created == "" {
		return stepError{http.StatusNotFound}
	}
	id := t.created
	t.created = ""
	return t.call(http.MethodDelete, t.project()+"/services/"+id, "", nil)
}
