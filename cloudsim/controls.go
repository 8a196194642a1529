package cloudsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// ErrNotFound is returned by the controls for a resource that does not exist.
var ErrNotFound = errors.New("cloudsim: not found")

// maxForcedStatus: any string is allowed, so clients meet statuses the spec does not list.
const maxForcedStatus = 64

// SetServiceStatus forces a service's status until its next write or
// another control; "" removes the override.
func (s *Sim) SetServiceStatus(projectID, serviceID, status string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	svc, err := s.controlService(projectID, serviceID)
	if err != nil {
		return err
	}
	svc.life.force(status)
	return nil
}

// ReplaceNode replaces a service's primary node, as the provider does after
// a host failure: its first HA replica (if any) becomes the primary, a new
// resource with a new id joins last, and the usage series number the nodes
// on from the departed one's ordinal + 1 (ordinals 0, 1, 2 become 1, 2, 3:
// ordinal 0 is gone, ordinal 3 is new). The number of nodes is unchanged.
func (s *Sim) ReplaceNode(projectID, serviceID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	svc, err := s.controlService(projectID, serviceID)
	if err != nil {
		return err
	}
	svc.resourceIDs = append(svc.resourceIDs[1:len(svc.resourceIDs):len(svc.resourceIDs)], s.newID(s.rng))
	svc.firstOrdinal++
	return nil
}

// SetReplicaSetStatus forces a replica set's status as SetServiceStatus does.
func (s *Sim) SetReplicaSetStatus(projectID, serviceID, replicaSetID, status string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	svc, err := s.controlService(projectID, serviceID)
	if err != nil {
		return err
	}
	rs := svc.replicaSets[replicaSetID]
	if rs == nil || rs.life.gone(s.clock()) {
		return fmt.Errorf("%w: replica set %s", ErrNotFound, replicaSetID)
	}
	rs.life.force(status)
	return nil
}

// SetPeeringStatus forces a peering's status until another control; "" removes it.
func (s *Sim) SetPeeringStatus(projectID, vpcID, peeringID, status string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr, err := s.controlPeering(projectID, vpcID, peeringID)
	if err != nil {
		return err
	}
	pr.life.force(status)
	return nil
}

// SetPeeringError sets the error_message of a peering; nil clears it.
func (s *Sim) SetPeeringError(projectID, vpcID, peeringID string, message *string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr, err := s.controlPeering(projectID, vpcID, peeringID)
	if err != nil {
		return err
	}
	if message != nil {
		msg := *message
		message = &msg
	}
	pr.errorMessage = message
	return nil
}

// RotateCredential gives accessKey's credential next's keys and refuses the old ones.
func (s *Sim) RotateCredential(accessKey string, next Credential) error {
	if next.AccessKey == "" || next.SecretKey == "" {
		return invalidf("the new access key and secret key must not be empty")
	}
	return s.changeCredential(accessKey, func(creds []Credential, i int) []Credential {
		creds[i].AccessKey, creds[i].SecretKey, creds[i].APIKey = next.AccessKey, next.SecretKey, next.APIKey
		return creds
	})
}

// IssueCredential adds next's keys to accessKey's credential until RevokeCredential.
func (s *Sim) IssueCredential(accessKey string, next Credential) error {
	if next.AccessKey == "" || next.SecretKey == "" {
		return invalidf("the new access key and secret key must not be empty")
	}
	return s.changeCredential(accessKey, func(creds []Credential, i int) []Credential {
		issued := creds[i]
		issued.AccessKey, issued.SecretKey, issued.APIKey = next.AccessKey, next.SecretKey, next.APIKey
		return append(creds, issued)
	})
}

// RevokeCredential refuses (401) the keys of accessKey from then on.
func (s *Sim) RevokeCredential(accessKey string) error {
	return s.changeCredential(accessKey, func(creds []Credential, i int) []Credential {
		return slices.Delete(creds, i, i+1)
	})
}

// changeCredential stores a changed copy: requests read credentials without the lock.
func (s *Sim) changeCredential(accessKey string, change func(creds []Credential, i int) []Credential) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	creds := slices.Clone(*s.creds.Load())
	i := slices.IndexFunc(creds, func(c Credential) bool { return c.AccessKey != "" && equal(c.AccessKey, accessKey) })
	if i < 0 {
		return fmt.Errorf("%w: no credential has this access key", ErrNotFound)
	}
	creds = change(creds, i)
	s.creds.Store(&creds)
	return nil
}

// AddProject creates an empty project that every user credential can access.
func (s *Sim) AddProject(projectID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.project(projectID)
	creds := slices.Clone(*s.creds.Load())
	for i := range creds {
		if len(creds[i].Projects) > 0 && !slices.Contains(creds[i].Projects, projectID) {
			creds[i].Projects = append(slices.Clip(creds[i].Projects), projectID)
		}
	}
	s.creds.Store(&creds)
}

// The caller holds s.mu.
func (s *Sim) controlService(projectID, serviceID string) (*service, error) {
	p := s.projects[projectID]
	if p == nil {
		return nil, fmt.Errorf("%w: project %s", ErrNotFound, projectID)
	}
	svc, err := p.lookupService(serviceID, s.clock())
	if err != nil {
		return nil, fmt.Errorf("%w: service %s", ErrNotFound, serviceID)
	}
	return svc, nil
}

// The caller holds s.mu.
func (s *Sim) controlPeering(projectID, vpcID, peeringID string) (*peering, error) {
	p := s.projects[projectID]
	if p == nil {
		return nil, fmt.Errorf("%w: project %s", ErrNotFound, projectID)
	}
	v := p.vpcs[vpcID]
	if v == nil {
		return nil, fmt.Errorf("%w: VPC %s", ErrNotFound, vpcID)
	}
	pr := v.peerings[peeringID]
	if pr == nil {
		return nil, fmt.Errorf("%w: peering %s", ErrNotFound, peeringID)
	}
	return pr, nil
}

// registerControls: the controls take no authentication, hence loopback only.
func (s *Sim) registerControls() {
	const (
		svc = "/_sim/projects/{project_id}/services/{service_id}"
		pr  = "/_sim/projects/{project_id}/vpcs/{vpc_id}/peerings/{peering_id}"
	)
	s.control("GET /_sim/healthz", func(*http.Request) (int, any, error) {
		return http.StatusOK, map[string]string{"status": "ok"}, nil
	})
	s.control("GET /_sim/requests", func(*http.Request) (int, any, error) {
		return http.StatusOK, s.RequestCounts(), nil
	})
	s.control("DELETE /_sim/requests", func(*http.Request) (int, any, error) {
		s.ResetRequestCounts()
		return http.StatusNoContent, nil, nil
	})
	s.control("POST /_sim/faults", s.postFault)
	s.control("DELETE /_sim/faults", func(*http.Request) (int, any, error) {
		s.ClearFaults()
		return http.StatusNoContent, nil, nil
	})
	s.control("POST /_sim/credentials/rotate", func(r *http.Request) (int, any, error) {
		old, next, err := readCredentialChange(r)
		if err != nil {
			return 0, nil, err
		}
		return controlResult(s.RotateCredential(old, next))
	})
	s.control("POST /_sim/credentials/issue", func(r *http.Request) (int, any, error) {
		old, next, err := readCredentialChange(r)
		if err != nil {
			return 0, nil, err
		}
		return controlResult(s.IssueCredential(old, next))
	})
	s.control("POST /_sim/credentials/revoke", func(r *http.Request) (int, any, error) {
		b, err := readControlBody(r)
		if err != nil {
			return 0, nil, err
		}
		old := b.string("access_key")
		if err := b.err(); err != nil {
			return 0, nil, err
		}
		return controlResult(s.RevokeCredential(old))
	})
	s.control("POST /_sim/projects", func(r *http.Request) (int, any, error) {
		b, err := readControlBody(r)
		if err != nil {
			return 0, nil, err
		}
		id := b.text("project_id")
		if err := b.err(); err != nil {
			return 0, nil, err
		}
		s.AddProject(id)
		return http.StatusNoContent, nil, nil
	})
	s.control("POST "+svc+"/status", func(r *http.Request) (int, any, error) {
		return forcedStatus(r, func(status string) error {
			return s.SetServiceStatus(r.PathValue("project_id"), r.PathValue("service_id"), status)
		})
	})
	s.control("POST "+svc+"/logs", s.postLogs)
	s.control("POST "+svc+"/replaceNode", func(r *http.Request) (int, any, error) {
		return controlResult(s.ReplaceNode(r.PathValue("project_id"), r.PathValue("service_id")))
	})
	s.control("POST "+svc+"/replicaSets/{replica_set_id}/status", func(r *http.Request) (int, any, error) {
		return forcedStatus(r, func(status string) error {
			return s.SetReplicaSetStatus(r.PathValue("project_id"), r.PathValue("service_id"),
				r.PathValue("replica_set_id"), status)
		})
	})
	s.control("POST "+pr+"/status", func(r *http.Request) (int, any, error) {
		return forcedStatus(r, func(status string) error {
			return s.SetPeeringStatus(r.PathValue("project_id"), r.PathValue("vpc_id"), r.PathValue("peering_id"), status)
		})
	})
	s.control("POST "+pr+"/error", func(r *http.Request) (int, any, error) {
		b, err := readControlBody(r)
		if err != nil {
			return 0, nil, err
		}
		msg := b.nullableString("error_message")
		if err := b.err(); err != nil {
			return 0, nil, err
		}
		return controlResult(s.SetPeeringError(r.PathValue("project_id"), r.PathValue("vpc_id"),
			r.PathValue("peering_id"), msg))
	})
}

func (s *Sim) control(pattern string, h func(r *http.Request) (int, any, error)) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		status, out, err := h(r)
		if err != nil {
			writeResponse(w, errorResponse(err))
			return
		}
		writeResponse(w, jsonResponse(status, out))
	})
}

// {access_key, new_access_key, new_secret_key, new_api_key}.
func readCredentialChange(r *http.Request) (old string, next Credential, err error) {
	b, err := readControlBody(r)
	if err != nil {
		return "", Credential{}, err
	}
	old = b.string("access_key")
	next = Credential{AccessKey: b.string("new_access_key"), SecretKey: b.string("new_secret_key"), APIKey: b.string("new_api_key")}
	return old, next, b.err()
}

func readControlBody(r *http.Request) (*body, error) {
	raw, err := readBody(r)
	if err != nil {
		return nil, err
	}
	return parseBody(raw)
}

func forcedStatus(r *http.Request, set func(status string) error) (int, any, error) {
	b, err := readControlBody(r)
	if err != nil {
		return 0, nil, err
	}
	status := b.string("status")
	if err := b.err(); err != nil {
		return 0, nil, err
	}
	if len(status) > maxForcedStatus {
		return 0, nil, invalidf("status must be at most %d bytes", maxForcedStatus)
	}
	return controlResult(set(status))
}

func controlResult(err error) (int, any, error) {
	if errors.Is(err, ErrNotFound) {
		return 0, nil, notFoundf("%s", err.Error())
	}
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// faultRequest refuses unknown fields: a misspelt fault that never fires
// passes a test for the wrong reason.
type faultRequest struct {
	Fault
	Latency string `json:"latency"`
}

// Keeps a control from parking handlers for ever.
const maxFaultLatency = 10 * time.Minute

const maxOversize = 4 << 30

func (s *Sim) postFault(r *http.Request) (int, any, error) {
	raw, err := readBody(r)
	if err != nil {
		return 0, nil, err
	}
	var fr faultRequest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&fr); err != nil {
		return 0, nil, invalidf("fault must be a JSON object with known fields: %v", err)
	}
	f := fr.Fault
	if fr.Latency != "" {
		d, err := time.ParseDuration(fr.Latency)
		if err != nil || d < 0 || d > maxFaultLatency {
			return 0, nil, invalidf("latency must be a Go duration between 0 and %s, got %q", maxFaultLatency, fr.Latency)
		}
		f.Latency = d
	}
	switch {
	case f.Operation != "" && !slices.Contains(apiclient.Operations, f.Operation):
		return 0, nil, invalidf("operation %q is not an operation name", f.Operation)
	case f.Status != 0 && (f.Status < 400 || f.Status > 599):
		return 0, nil, invalidf("status must be 0 or 400..599, got %d", f.Status)
	case f.Rate < 0 || f.Rate > 1:
		return 0, nil, invalidf("rate must be in 0..1, got %v", f.Rate)
	case f.Count < 0:
		return 0, nil, invalidf("count must be >= 0, got %d", f.Count)
	case f.Edit != nil && (f.Edit.Field == "" || !json.Valid(f.Edit.Value) || f.Edit.Index < 0):
		return 0, nil, invalidf("edit needs a field, a JSON value and an index >= 0")
	case f.Oversize != "" && !slices.Contains([]string{OversizeBlank, OversizeEndless, OversizePadded}, f.Oversize):
		return 0, nil, invalidf("oversize must be %s, %s or %s, got %q", OversizeBlank, OversizeEndless, OversizePadded, f.Oversize)
	case f.Size < 0 || f.Size > maxOversize:
		return 0, nil, invalidf("size must be in 0..%d, got %d", int64(maxOversize), f.Size)
	}
	s.AddFault(f)
	return http.StatusCreated, fr, nil
}
