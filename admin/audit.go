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

// Events of audit records: "accepted" comes just before the upstream call,
// so that a crash afterwards still leaves a trace of a write that may have
// happened.
const (
	eventAccepted = "accepted"
	eventOutcome  = "outcome"
	eventSettled  = "settled"
)

// maxAuditField keeps a record one short line whatever a client sends.
const maxAuditField = 128

// auditRecord keeps what Kubernetes' audit Request level keeps: who, from
// where, what and with which parameters; no secret, no header but User-Agent.
type auditRecord struct {
	Time         time.Time      `json:"time"`
	Event        string         `json:"event"`
	RequestID    string         `json:"request_id"`
	Caller       string         `json:"caller"`
	RemoteAddr   string         `json:"remote_addr"`
	UserAgent    string         `json:"user_agent,omitempty"`
	Method       string         `json:"method"`
	Operation    string         `json:"operation"`
	ProjectID    string         `json:"project_id,omitempty"`
	ServiceID    string         `json:"service_id,omitempty"`
	ReplicaSetID string         `json:"replica_set_id,omitempty"`
	VPCID        string         `json:"vpc_id,omitempty"`
	PeeringID    string         `json:"peering_id,omitempty"`
	Params       map[string]any `json:"params,omitempty"` // secrets redacted
	DryRun       bool           `json:"dry_run"`
	Confirmed    bool           `json:"confirmed,omitempty"`
	Replayed     bool           `json:"idempotent_replayed,omitempty"`
	Status       int            `json:"status,omitempty"`
	Duration     float64        `json:"duration_seconds"`
	ErrorCode    string         `json:"error_code,omitempty"`
	State        string         `json:"state,omitempty"`
	LastStatus   string         `json:"last_status,omitempty"`
}

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

func recordOf(ctx context.Context) *auditRecord {
	if rec, ok := ctx.Value(recordKey{}).(*auditRecord); ok {
		return rec
	}
	return &auditRecord{}
}

type auditor struct {
	logger *slog.Logger
	mu     sync.Mutex
	w      io.Writer
}

var errAuditLog = errors.New("cannot write to the audit log")

// write leaves no partial line in the file: one write call, and a short
// write cut off again where the file can be truncated.
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

func (a *auditor) append(line []byte, attrs ...any) error {
	if a.w == nil {
		return nil
	}
	if f, ok := a.w.(*auditFile); ok {
		// It cuts a short write off itself, and opens with no lock held.
		if _, err := f.Write(append(line, '\n')); err != nil {
			a.logger.Error("Cannot write to the audit log", append(attrs, "err", err)...)
			return errAuditLog
		}
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
