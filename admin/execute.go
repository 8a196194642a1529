package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// execution is what the steps of one validated write share.
type execution struct {
	s     *Server
	w     http.ResponseWriter
	r     *http.Request
	req   *request
	rec   *auditRecord
	key   idemKey
	keyed bool // the request carries an Idempotency-Key
	op    *Operation
}

func (s *Server) execute(ctx context.Context, w http.ResponseWriter, r *http.Request, req *request) {
	x := &execution{s: s, w: w, r: r, req: req, rec: recordOf(r.Context())}
	if x.replay() || !x.audit() {
		return
	}
	result, answer, err := x.call(ctx)
	now := time.Now()
	if err != nil {
		x.failed(err, now)
		return
	}
	t := x.accepted(result, now)
	x.relay(result, answer)
	x.follow(t, now)
}

// replay answers a request whose key the store knows; otherwise the key is
// now in progress.
func (x *execution) replay() (answered bool) {
	if x.req.key == "" {
		return false
	}
	x.key = idemKey{caller: x.rec.Caller, project: x.req.ids[idProject], op: x.req.ep.op, key: x.req.key}
	x.keyed = true
	switch outcome, answer := x.s.idem.begin(x.key, fingerprint(x.req)); outcome {
	case idemReplay:
		x.rec.Replayed = true
		for k, v := range answer.header {
			x.w.Header()[k] = v
		}
		x.w.Header().Set(replayedHeader, "true")
		x.w.WriteHeader(answer.status)
		_, _ = x.w.Write(answer.body)
		return true
	case idemReused:
		x.s.writeError(x.w, x.r, &apiError{status: http.StatusConflict, code: codeIdempotencyKeyReused,
			message: "this Idempotency-Key was used with a different request in the last 24h"})
		return true
	case idemInProgress:
		x.s.writeError(x.w, x.r, &apiError{status: http.StatusConflict, code: codeIdempotencyInProgress,
			message: "a request with this Idempotency-Key is still in progress; retry later"})
		return true
	}
	return false
}

// audit records the write as accepted before it is sent: a write that
// cannot be audited is not sent, unless --admin.audit-fail-open.
func (x *execution) audit() (ok bool) {
	x.op = &Operation{
		ID: x.rec.RequestID, Operation: x.req.ep.op, ProjectID: x.req.ids[idProject],
		ServiceID: x.req.ids[idService], ReplicaSetID: x.req.ids[idReplicaSet], VPCID: x.req.ids[idVPC], PeeringID: x.req.ids[idPeering],
		State: statePending, RequestedAt: x.rec.Time,
	}
	if x.req.ep.api.Async {
		rec := *x.rec
		x.op.audit = &rec
	}
	if err := x.s.audit.write(eventAccepted, x.rec); err != nil && !x.s.opts.AuditFailOpen {
		if x.keyed {
			x.s.idem.abort(x.key)
		}
		x.s.writeError(x.w, x.r, &apiError{status: http.StatusServiceUnavailable, code: codeAuditUnavailable,
			message: "the audit log cannot be written, so the write was not sent (see --admin.audit-fail-open)"})
		return false
	}
	return true
}

func (x *execution) call(ctx context.Context) (result any, answer []byte, err error) {
	result, err = x.req.ep.call(apiclient.WithAnswer(ctx, &answer), x.req.project.Client, x.req.ids, x.req.body)
	return result, answer, err
}

func (x *execution) failed(err error, now time.Time) {
	e := upstreamError(err, x.req.ep.secretOf(x.req.body))
	x.op.State, x.op.HTTPStatus, x.op.ErrorCode, x.op.SettledAt = stateFailed, e.status, e.code, &now
	x.s.recent.add(x.op)
	if x.keyed {
		if e.status >= http.StatusInternalServerError {
			// The create may have happened: a retry with the same key gets
			// this answer, which says to check first, instead of a twin.
			body, _ := marshal(apiclient.ErrorBody{Code: e.code, Message: e.message})
			header := http.Header{"Content-Type": {"application/json"}}
			x.s.idem.complete(x.key, storedAnswer{status: e.status, header: header, body: body})
		} else {
			x.s.idem.abort(x.key) // nothing happened: free for a corrected retry
		}
	}
	x.s.writeError(x.w, x.r, e)
}

func (x *execution) accepted(result any, now time.Time) target {
	t := x.req.ep.target(x.req.ids, result)
	x.op.ServiceID, x.op.ReplicaSetID, x.op.VPCID, x.op.PeeringID = t.serviceID, t.replicaSetID, t.vpcID, t.peeringID
	x.op.HTTPStatus, x.op.AcceptedAt = x.req.ep.api.Success, &now
	x.s.recent.add(x.op)
	if w := x.s.opts.Writes; w != nil {
		w.ObserveWrite(x.op.ProjectID, []string{t.serviceID, t.replicaSetID, t.vpcID, t.peeringID}, x.rec.Caller)
	}
	return t
}

func (x *execution) relay(result any, answer []byte) {
	status := x.req.ep.api.Success
	body, header := relayBody(result, answer, x.req.ep.answersSecret)
	body = redactAnswer(x.req.project.Client.Redactor(), body)
	if x.req.ep.api.Async {
		header.Set("Location", apiPrefix+"/operations/"+x.op.ID)
	}
	if x.keyed {
		x.s.idem.complete(x.key, storedAnswer{status: status, header: header.Clone(), body: body})
	}
	for k, v := range header {
		x.w.Header()[k] = v
	}
	x.w.WriteHeader(status)
	_, _ = x.w.Write(body)
}

// relayBody relays the answer as received, so that nothing is dropped or
// added even where the client reads no body; result only without one.
func relayBody(result any, answer []byte, secret bool) ([]byte, http.Header) {
	header := http.Header{}
	var body []byte
	switch {
	case len(answer) > 0 && json.Valid(answer):
		body = answer
		header.Set("Content-Type", "application/json")
	case result != nil:
		if b, err := marshal(result); err == nil {
			body = b
			header.Set("Content-Type", "application/json")
		}
	}
	if secret {
		header.Set("Cache-Control", "no-store")
	}
	return body, header
}

func (x *execution) follow(t target, now time.Time) {
	s, op, p := x.s, x.op, x.req.project
	if x.req.ep.api.Async {
		s.background.Go(func() { s.track(op, p, t) })
		return
	}
	s.settle(op, stateSucceeded, now)
	s.background.Go(func() { s.refreshOnce(op, p, t) })
}

// redactAnswer removes the project's credentials from an answer, which a
// proxy that echoes the request may hold. JSON can hide one behind \u
// escapes that a text search misses: then, or if the text replacement
// broke the JSON, the answer is re-encoded with every string redacted.
func redactAnswer(red *apiclient.Redactor, body []byte) []byte {
	if len(body) == 0 {
		return body
	}
	out := []byte(red.Redact(string(body)))
	if v, ok := decodeAnswer(out); ok {
		if _, changed := redactStrings(red, v); !changed {
			return out
		}
	}
	v, ok := decodeAnswer(body)
	if !ok {
		return nil
	}
	v, _ = redactStrings(red, v)
	b, err := marshal(v)
	if err != nil {
		return nil
	}
	return b
}

func decodeAnswer(b []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	return v, true
}

// redactStrings redacts object keys too.
func redactStrings(red *apiclient.Redactor, v any) (any, bool) {
	switch v := v.(type) {
	case string:
		r := red.Redact(v)
		return r, r != v
	case []any:
		changed := false
		for i, e := range v {
			var c bool
			v[i], c = redactStrings(red, e)
			changed = changed || c
		}
		return v, changed
	case map[string]any:
		out := make(map[string]any, len(v))
		changed := false
		for k, e := range v {
			rk := red.Redact(k)
			re, c := redactStrings(red, e)
			out[rk] = re
			changed = changed || c || rk != k
		}
		return out, changed
	}
	return v, false
}
