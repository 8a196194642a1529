package admin

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"time"
)

// auditRecord is what the audit log keeps of one request, whatever its
// outcome. It never holds a body, a header or a password: only ids.
type auditRecord struct {
	Time         time.Time `json:"time"`
	RequestID    string    `json:"request_id"`
	Caller       string    `json:"caller"`
	RemoteAddr   string    `json:"remote_addr"`
	Method       string    `json:"method"`
	Operation    string    `json:"operation"`
	ProjectID    string    `json:"project_id,omitempty"`
	ServiceID    string    `json:"service_id,omitempty"`
	ReplicaSetID string    `json:"replica_set_id,omitempty"`
	VPCID        string    `json:"vpc_id,omitempty"`
	PeeringID    string    `json:"peering_id,omitempty"`
	DryRun       bool      `json:"dry_run"`
	Replayed     bool      `json:"idempotent_replayed,omitempty"`
	Status       int       `json:"status"`
	Duration     float64   `json:"duration_seconds"`
	ErrorCode    string    `json:"error_code,omitempty"`
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

func (a *auditor) write(rec *auditRecord) {
	a.logger.Info("Admin request",
		"request_id", rec.RequestID, "caller", rec.Caller, "remote_addr", rec.RemoteAddr,
		"method", rec.Method, "operation", rec.Operation, "project_id", rec.ProjectID,
		"service_id", rec.ServiceID, "replica_set_id", rec.ReplicaSetID, "vpc_id", rec.VPCID,
		"peering_id", rec.PeeringID, "dry_run", rec.DryRun, "idempotent_replayed", rec.Replayed,
		"status", rec.Status, "duration_seconds", rec.Duration, "error_code", rec.ErrorCode)
	if a.w == nil {
		return
	}
	line, err := json.Marshal(rec)
	if err != nil {
		a.logger.Error("Cannot encode an audit record", "request_id", rec.RequestID, "err", err)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, err := a.w.Write(append(line, '\n')); err != nil {
		a.logger.Error("Cannot write to the audit log", "request_id", rec.RequestID, "err", err)
	}
}
