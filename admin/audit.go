package admin

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Events of audit records. A write that reaches the API has two records:
// "accepted" just before the upstream call (so that a crash, a kill or a
// full disk afterwards still leaves a trace of a write that may have
// happened) and "outcome" once it is answered; every other request has
// its "outcome" only. A tracked asynchronous operation has a third,
// "settled", with its final state.
const (
	eventAccepted = "accepted"
	eventOutcome  = "outcome"
	eventSettled  = "settled"
)

// maxAuditField caps every text field of an audit record, in bytes: they
// come from the request (method, path ids, user name), and a record must
// stay one short line whatever a client sends.
const maxAuditField = 128

// auditRecord is what the audit log keeps of one request, whatever its
// outcome, as the Kubernetes API server's audit Request level does: who,
// from where, what and with which parameters. It never holds a password or
// any other secret (params are the validated body with secrets redacted),
// nor a header other than the User-Agent.
type auditRecord struct {
	Time         time.Time `json:"time"`
	Event        string    `json:"event"`
	RequestID    string    `json:"request_id"`
	Caller       string    `json:"caller"`
	RemoteAddr   string    `json:"remote_addr"`
	UserAgent    string    `json:"user_agent,omitempty"`
	Method       string    `json:"method"`
	Operation    string    `json:"operation"`
	ProjectID    string    `json:"project_id,omitempty"`
	ServiceID    string    `json:"service_id,omitempty"`
	ReplicaSetID string    `json:"replica_set_id,omitempty"`
	VPCID        string    `json:"vpc_id,omitempty"`
	PeeringID    string    `json:"peering_id,omitempty"`
	// Params is the request's validated body, secrets redacted.
	Params map[string]any `json:"params,omitempty"`
	DryRun bool           `json:"dry_run"`
	// Confirmed is set when the request gave ?confirm=<id>.
	Confirmed bool    `json:"confirmed,omitempty"`
	Replayed  bool    `json:"idempotent_replayed,omitempty"`
	Status    int     `json:"status,omitempty"`
	Duration  float64 `json:"duration_seconds"`
	ErrorCode string  `json:"error_code,omitempty"`
	// State and LastStatus are a settled operation's final state and the
	// resource's status when last observed.
	State      string `json:"state,omitempty"`
	LastStatus string `json:"last_status,omitempty"`
}

// capped returns a copy of the record with every text field cut to
// maxAuditField bytes (at a character boundary, marked with "...").
func (a auditRecord) capped() auditRecord {
	for _, f := range []*string{&a.Caller, &a.RemoteAddr, &a.UserAgent, &a.Method, &a.Operation, &a.ProjectID, &a.ServiceID,
		&a.ReplicaSetID, &a.VPCID, &a.PeeringID, &a.ErrorCode, &a.State, &a.LastStatus} {
		*f = capField(*f)
	}
	if a.Params != nil {
		a.Params = capValue(a.Params).(map[string]any)
	}
	return a
}

// capValue returns a copy of a decoded JSON value with every string cut
// as capField cuts a field.
func capValue(v any) any {
	switch v := v.(type) {
	case string:
		return capField(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = capValue(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[capField(k)] = capValue(e)
		}
		return out
	}
	return v
}

func capField(s string) string {
	if len(s) <= maxAuditField {
		return s
	}
	n := maxAuditField - 3
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.ToValidUTF8(s[:n], "\uFFFD") + "..."
}

// setID records a path id under its field.
func (a *auditRecord) setID(name, v string) {
	switch name {
	case idProject:
		a.ProjectID = v
	case idService:
		a.ServiceID = v
	case idReplicaSet:
		a.ReplicaSetID = v
	case idVPC:
		a.VPCID = v
	case idPeering:
		a.PeeringID = v
	}
}

type recordKey struct{}

func withRecord(ctx context.Context, rec *auditRecord) context.Context {
	return context.WithValue(ctx, recordKey{}, rec)
}

// recordOf returns the request's audit record; handlers fill it in.
func recordOf(ctx context.Context) *auditRecord {
	if rec, ok := ctx.Value(recordKey{}).(*auditRecord); ok {
		return rec
	}
	return &auditRecord{}
}

// auditor writes audit records to the logger and, when set, as JSON lines
// to a file.
type auditor struct {
	logger *slog.Logger
	mu     sync.Mutex
	w      io.Writer
}

// errAuditLog is returned when a record could not be written to the file.
var errAuditLog = errors.New("cannot write to the audit log")

// write logs the record (its fields capped) under event and appends it to
// the file. It reports a failure to write the file, after which the file
// holds no partial line: the line is written with one call, and a short
// write is cut off again when the file can be truncated.
func (a *auditor) write(event string, rec *auditRecord) error {
	r := rec.capped()
	r.Event = event
	a.logger.Info("Admin request", "event", r.Event,
		"request_id", r.RequestID, "caller", r.Caller, "remote_addr", r.RemoteAddr,
		"method", r.Method, "operation", r.Operation, "project_id", r.ProjectID,
		"service_id", r.ServiceID, "replica_set_id", r.ReplicaSetID, "vpc_id", r.VPCID,
		"peering_id", r.PeeringID, "dry_run", r.DryRun, "idempotent_replayed", r.Replayed,
		"status", r.Status, "duration_seconds", r.Duration, "error_code", r.ErrorCode,
		"user_agent", r.UserAgent, "params", r.Params, "confirmed", r.Confirmed,
		"state", r.State, "last_status", r.LastStatus)
	if a.w == nil {
		return nil
	}
	line, err := json.Marshal(r)
	if err != nil {
		a.logger.Error("Cannot encode an audit record", "request_id", r.RequestID, "err", err)
		return errAuditLog
	}
	return a.append(line, "request_id", r.RequestID, "event", event)
}

// append writes line to the file; failures are logged with attrs.
func (a *auditor) append(line []byte, attrs ...any) error {
	if a.w == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	type truncater interface {
		io.Seeker
		Truncate(size int64) error
	}
	size := int64(-1)
	if f, ok := a.w.(truncater); ok {
		if end, err := f.Seek(0, io.SeekEnd); err == nil {
			size = end
		}
	}
	n, err := a.w.Write(append(line, '\n'))
	if err == nil {
		return nil
	}
	a.logger.Error("Cannot write to the audit log", append(attrs, "err", err)...)
	if f, ok := a.w.(truncater); ok && n > 0 && size >= 0 {
		if terr := f.Truncate(size); terr != nil {
			a.logger.Error("Cannot remove a partial audit record", append(attrs, "err", terr)...)
		}
	}
	return errAuditLog
}
