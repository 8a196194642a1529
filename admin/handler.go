package admin

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

const (
	queryDryRun  = "dry_run"
	queryConfirm = "confirm"
)

const redactedValue = "<redacted>"

type request struct {
	ep      *endpoint
	project Project
	ids     ids
	body    any
	dryRun  bool
	confirm string
	key     string
}

func (s *Server) write(ep *endpoint) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rec := recordOf(r.Context())
		v := ids{idProject: r.PathValue(idProject)}
		for _, name := range ep.ids {
			v[name] = r.PathValue(name)
		}
		for name, value := range v {
			rec.setID(name, value)
		}
		if err := checkInput(r); err != nil {
			s.writeError(w, r, err)
			return
		}
		if !s.allow[ep.op] {
			s.writeError(w, r, &apiError{status: http.StatusForbidden, code: codeOperationNotAllowed,
				message: ep.op + " is not in --admin.allow; allowed: " + strings.Join(s.allowedOps(), ", ")})
			return
		}
		p, ok := s.opts.Projects(v[idProject])
		if !ok {
			s.writeError(w, r, &apiError{status: http.StatusForbidden, code: codeProjectNotConfigured,
				message: "the project is not configured in this exporter"})
			return
		}
		req, err := s.validate(r, ep, v)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		req.project = p
		rec.DryRun = req.dryRun
		rec.Params = redactBody(req.body)
		if req.dryRun {
			s.dryRun(w, req)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.opts.RequestTimeout)
		defer cancel()
		if req.confirm == "" && ep.guards(req.body) {
			if err := s.guard(ctx, req); err != nil {
				s.fail(w, r, err)
				return
			}
		}
		s.execute(ctx, w, r, req)
	}
}

func (s *Server) validate(r *http.Request, ep *endpoint, v ids) (*request, error) {
	for _, name := range append([]string{idProject}, ep.ids...) {
		if err := checkPathID(name, v[name]); err != nil {
			return nil, err
		}
	}
	req := &request{ep: ep, ids: v}
	known := []string{queryDryRun}
	if ep.guard != nil {
		known = append(known, queryConfirm)
	}
	query, err := parseQuery(r.URL.RawQuery, known...)
	if err != nil {
		return nil, err
	}
	if value, ok := query[queryDryRun]; ok {
		switch value {
		case "true", "1":
			req.dryRun = true
			recordOf(r.Context()).DryRun = true
		case "false", "0":
		default:
			return nil, invalidf("dry_run: must be true, 1, false or 0")
		}
	}
	if value, ok := query[queryConfirm]; ok {
		what, id := ep.guardedResource(v)
		if value != id {
			return nil, invalidf("confirm: must be the id of the %s in the path", what)
		}
		req.confirm = value
		recordOf(r.Context()).Confirmed = true
	}
	keys := r.Header.Values(idempotencyHeader)
	switch {
	case len(keys) > 1:
		return nil, invalidf("%s: given more than once", idempotencyHeader)
	case len(keys) == 1 && !ep.idempotent:
		return nil, invalidf("%s: only the create operations (%s) take one", idempotencyHeader, strings.Join(s.idempotentOps, ", "))
	case len(keys) == 1 && (keys[0] == "" || len(keys[0]) > maxKeyLen || strings.ContainsFunc(keys[0], func(c rune) bool { return c < 0x21 || c > 0x7e })):
		return nil, invalidf("%s: must be 1 to %d printable ASCII characters", idempotencyHeader, maxKeyLen)
	case len(keys) == 1:
		req.key = keys[0]
	}
	raw, err := readBody(r)
	if err != nil {
		return nil, err
	}
	if req.body, err = ep.decode(raw); err != nil {
		return nil, err
	}
	return req, nil
}

func truncateForMessage(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

func (s *Server) dryRun(w http.ResponseWriter, req *request) {
	out := map[string]any{
		"dry_run":   true,
		"operation": req.ep.op,
		"method":    req.ep.api.Method,
		"path":      req.ep.upstreamPath(req.ids),
		"body":      redactBody(req.body),
	}
	if req.ep.guards(req.body) {
		what, _ := req.ep.guardedResource(req.ids)
		if req.confirm != "" {
			out["confirmation"] = "given: the request would run whatever the " + what + "'s environment"
		} else {
			out["confirmation"] = "checked at execution time: if the " + what + "'s environment is not DEV, to " + req.ep.guard.verb + " the request needs ?confirm=<its id>"
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func redactBody(body any) map[string]any {
	if body == nil {
		return nil
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil
	}
	// Numbers stay as written: a float64 would round a large count.
	v, _ := decodeAnswer(raw)
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	for k := range m {
		if name := strings.ToLower(k); strings.Contains(name, "password") || strings.Contains(name, "secret") || strings.Contains(name, "token") {
			m[k] = redactedValue
		}
	}
	return m
}

// guard reads the environment fresh, not from a snapshot: the API has no
// delete protection for PROD.
func (s *Server) guard(ctx context.Context, req *request) error {
	what, id := req.ep.guardedResource(req.ids)
	env, err := environmentOf(ctx, req.project.Client, req.ids[idService], what, id)
	if err != nil {
		return err
	}
	if env == apiclient.EnvironmentDev {
		return nil
	}
	shown := env
	if shown == "" {
		shown = "unknown"
	}
	return &apiError{status: http.StatusPreconditionRequired, code: codeConfirmationRequired,
		message: "the " + what + "'s environment is " + shown + ": to " + req.ep.guard.verb + ", repeat the request with ?confirm=" + id}
}

func environmentOf(ctx context.Context, c *apiclient.Client, serviceID, what, id string) (string, error) {
	if what == "service" {
		svc, err := c.GetService(ctx, serviceID)
		if err != nil {
			return "", readError(err)
		}
		return svc.Environment(), nil
	}
	list, err := c.ListReplicaSets(ctx, serviceID)
	if err != nil {
		return "", readError(err)
	}
	for _, rs := range list {
		if rs.ID == id {
			return rs.Environment(), nil
		}
	}
	return "", &apiError{status: http.StatusNotFound, code: codeNotFound, message: "the replica set does not exist"}
}

// fingerprint re-encodes the typed body, so that key order and spacing do
// not matter.
func fingerprint(req *request) [sha256.Size]byte {
	body, _ := json.Marshal(req.body)
	h := sha256.New()
	for _, name := range append([]string{idProject}, req.ep.ids...) {
		h.Write([]byte(name + "=" + req.ids[name] + "\x00"))
	}
	h.Write(body)
	var sum [sha256.Size]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

// relayDetails relays details that are not whole JSON (cut by the client)
// as a JSON string.
func relayDetails(d string) json.RawMessage {
	switch {
	case d == "":
		return nil
	case json.Valid([]byte(d)):
		return json.RawMessage(d)
	}
	b, _ := json.Marshal(d)
	return b
}

func readError(err error) *apiError {
	e := upstreamError(err, "")
	e.message = strings.TrimSuffix(e.message, mayHaveHappened)
	return e
}

const mayHaveHappened = " The write may or may not have been applied: check before retrying."

// upstreamError keeps the request's secret out of the answer, even if the
// API echoed it.
func upstreamError(err error, secret string) *apiError {
	var apiErr *apiclient.APIError
	var transport *apiclient.TransportError
	switch {
	case errors.As(err, &apiErr):
		code, msg, details := apiErr.Code, apiErr.Message, apiErr.Details
		if code == "" {
			code = codeUpstreamError
		}
		if msg == "" {
			msg = "the API answered " + http.StatusText(apiErr.StatusCode)
		}
		if secret != "" {
			msg = strings.ReplaceAll(msg, secret, redactedValue)
			code = strings.ReplaceAll(code, secret, redactedValue)
			details = strings.ReplaceAll(details, secret, redactedValue)
		}
		switch {
		case apiErr.StatusCode == http.StatusUnauthorized:
			return &apiError{status: http.StatusBadGateway, code: codeUpstreamUnauthorized,
				message: "the API refused the exporter's credentials for this project"}
		case apiErr.StatusCode < 400 || apiErr.StatusCode > 599:
			return &apiError{status: http.StatusBadGateway, code: codeUpstreamBadResponse,
				message: "the API answered with the undocumented status " + http.StatusText(apiErr.StatusCode) + "." + mayHaveHappened}
		}
		return &apiError{status: apiErr.StatusCode, code: code, message: msg, details: relayDetails(details)}
	case errors.As(err, &transport) && transport.Timeout(), apiclient.IsTimeout(err):
		return &apiError{status: http.StatusGatewayTimeout, code: codeUpstreamTimeout,
			message: "the API did not answer in time." + mayHaveHappened}
	case errors.As(err, &transport):
		return &apiError{status: http.StatusBadGateway, code: codeUpstreamUnavailable,
			message: "the API could not be reached." + mayHaveHappened}
	default:
		return &apiError{status: http.StatusBadGateway, code: codeUpstreamBadResponse,
			message: "the API's answer could not be read." + mayHaveHappened}
	}
}
