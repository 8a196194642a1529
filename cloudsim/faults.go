package cloudsim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Fault is an injected failure, applied before authentication: the latency,
// then a terminal answer or the Edits.
type Fault struct {
	// Operation is an apiclient.Op* name; "" means every operation.
	Operation string `json:"operation"`
	Status    int    `json:"status"`
	// Code defaults from the status.
	Code       string `json:"code"`
	Message    string `json:"message"`
	RetryAfter string `json:"retry_after"`
	// Latency is in real time, not the simulated clock.
	Latency        time.Duration `json:"-"`
	Malformed      bool          `json:"malformed"`
	Truncated      bool          `json:"truncated"`
	DropConnection bool          `json:"drop_connection"`
	// DropAfterHeaders sends the real status and headers, then no body.
	DropAfterHeaders bool `json:"drop_after_headers"`
	DropMidBody      bool `json:"drop_mid_body"`
	// OnReuse fires only on a kept-alive connection's request, where a
	// client may silently resend a read.
	OnReuse bool `json:"on_reuse"`
	// Oversize is an answer no API should send, to measure its cost.
	Oversize string `json:"oversize,omitempty"`
	Size     int64  `json:"size,omitempty"`
	Edit     *Edit  `json:"edit,omitempty"`
	// Rate in (0, 1]; 0 means always.
	Rate float64 `json:"rate"`
	// Count of applications before it is spent; 0: no limit.
	Count int `json:"count"`
}

func (f Fault) terminal() bool {
	return f.Status != 0 || f.Malformed || f.Truncated || f.DropConnection || f.DropAfterHeaders || f.DropMidBody || f.Oversize != "" || f.Edit != nil
}

// The kinds of Fault.Oversize.
const (
	OversizeBlank   = "blank"
	OversizeEndless = "endless"
	OversizePadded  = "padded"
)

func writeOversize(w http.ResponseWriter, r *http.Request, f Fault, serve func() response) {
	w.Header().Set("Content-Type", "application/json")
	const chunk = 64 << 10
	switch f.Oversize {
	case OversizeBlank:
		w.Header().Set("Content-Length", strconv.FormatInt(f.Size, 10))
		w.WriteHeader(http.StatusOK)
		blank := bytes.Repeat([]byte{' '}, chunk)
		for left := f.Size; left > 0; left -= chunk {
			if _, err := w.Write(blank[:min(left, chunk)]); err != nil {
				return
			}
		}
	case OversizeEndless:
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`[{"id":"`))
		fill := bytes.Repeat([]byte{'a'}, chunk)
		for r.Context().Err() == nil {
			if _, err := w.Write(fill); err != nil {
				return
			}
		}
	default: // OversizePadded
		var elems []map[string]any
		_ = json.Unmarshal(serve().body, &elems)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("["))
		pad := strings.Repeat("p", 512<<10)
		for i, written := 0, int64(0); len(elems) > 0 && written < f.Size; i++ {
			e := elems[i%len(elems)]
			e["padding"] = pad
			b, _ := json.Marshal(e)
			if i > 0 {
				_, _ = w.Write([]byte(","))
			}
			if _, err := w.Write(b); err != nil {
				return
			}
			written += int64(len(b)) + 1
		}
		_, _ = w.Write([]byte("]"))
	}
}

// Edit rewrites one element of a list answer, as a drifting API would.
type Edit struct {
	Index int `json:"index"`
	// Field is dot-separated; numbers index arrays.
	Field string          `json:"field"`
	Value json.RawMessage `json:"value"`
	// Append adds the edited copy instead: the id then appears twice.
	Append bool `json:"append"`
}

func (e *Edit) apply(body []byte) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var list []any
	if dec.Decode(&list) != nil || e.Index < 0 || e.Index >= len(list) {
		return body, false
	}
	// A deep copy, so an appended duplicate does not share maps.
	var elem any
	raw, _ := json.Marshal(list[e.Index])
	dec = json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&elem) != nil {
		return body, false
	}
	if !setPath(elem, strings.Split(e.Field, "."), e.Value) {
		return body, false
	}
	if e.Append {
		list = append(list, elem)
	} else {
		list[e.Index] = elem
	}
	out, err := json.Marshal(list)
	if err != nil {
		return body, false
	}
	return out, true
}

func setPath(v any, path []string, value json.RawMessage) bool {
	for i, key := range path {
		last := i == len(path)-1
		switch node := v.(type) {
		case map[string]any:
			if last {
				node[key] = value
				return true
			}
			v = node[key]
		case []any:
			n, err := strconv.Atoi(key)
			if err != nil || n < 0 || n >= len(node) {
				return false
			}
			if last {
				node[n] = value
				return true
			}
			v = node[n]
		default:
			return false
		}
	}
	return false
}

type activeFault struct {
	Fault
	remaining int
}

// AddFault adds a fault after the existing ones.
func (s *Sim) AddFault(f Fault) {
	s.mu.Lock()
	s.faults = append(s.faults, &activeFault{Fault: f, remaining: f.Count})
	s.mu.Unlock()
}

// ClearFaults removes every fault.
func (s *Sim) ClearFaults() {
	s.mu.Lock()
	s.faults = nil
	s.mu.Unlock()
}

// firing spends one application of each fault that applies.
func (s *Sim) firing(op string, reused bool) []Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Fault
	kept := s.faults[:0]
	for _, f := range s.faults {
		fires := (f.Operation == "" || f.Operation == op) && (!f.OnReuse || reused) &&
			(f.Rate <= 0 || f.Rate >= 1 || s.faultRNG.Float64() < f.Rate)
		if fires {
			out = append(out, f.Fault)
			if f.Count > 0 {
				f.remaining--
			}
		}
		if f.Count == 0 || f.remaining > 0 {
			kept = append(kept, f)
		}
	}
	clear(s.faults[len(kept):])
	s.faults = kept
	return out
}

// applyFaults reports whether a fault answered the request; then the caller must not.
func (s *Sim) applyFaults(w http.ResponseWriter, r *http.Request, op string, reused bool, serve func() response) bool {
	var edits []*Edit
	for _, f := range s.firing(op, reused) {
		if f.Latency > 0 {
			t := time.NewTimer(f.Latency)
			select {
			case <-r.Context().Done():
				t.Stop()
				return true
			case <-t.C:
			}
		}
		if !f.terminal() {
			continue
		}
		if f.Edit != nil {
			edits = append(edits, f.Edit)
			continue
		}
		logger := s.logger.With("op", op, "path", r.URL.Path)
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		switch {
		case f.DropConnection:
			logger.Info("Fault injected", "fault", "drop_connection")
			dropConnection(w)
		case f.DropAfterHeaders:
			logger.Info("Fault injected", "fault", "drop_after_headers")
			cutConnection(w, serve(), 0)
		case f.DropMidBody:
			logger.Info("Fault injected", "fault", "drop_mid_body")
			resp := serve()
			cutConnection(w, resp, len(resp.body)/2)
		case f.Status != 0:
			logger.Info("Fault injected", "fault", "status", "status", f.Status)
			writeResponse(w, errorResponse(&apiError{status: f.Status, code: faultCode(f), message: faultMessage(f)}))
		case f.Malformed:
			logger.Info("Fault injected", "fault", "malformed")
			writeResponse(w, response{status: http.StatusOK, body: []byte(`{"service_id": "sim", "status": [tru`),
				header: http.Header{"Content-Type": {"application/json"}}})
		case f.Oversize != "":
			logger.Info("Fault injected", "fault", "oversize", "oversize", f.Oversize, "size", f.Size)
			writeOversize(w, r, f, serve)
		case f.Truncated:
			logger.Info("Fault injected", "fault", "truncated")
			resp := serve()
			resp.body = resp.body[:len(resp.body)/2]
			writeResponse(w, resp)
		}
		return true
	}
	if len(edits) == 0 {
		return false
	}
	resp := serve()
	for _, e := range edits {
		var ok bool
		resp.body, ok = e.apply(resp.body)
		s.logger.Info("Fault injected", "op", op, "path", r.URL.Path, "fault", "edit", "field", e.Field, "applied", ok)
	}
	writeResponse(w, resp)
	return true
}

func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	// Without hijacking (HTTP/2), aborting the handler resets the stream.
	panic(http.ErrAbortHandler)
}

func cutConnection(w http.ResponseWriter, resp response, keep int) {
	for k, v := range resp.header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(resp.body)))
	w.WriteHeader(resp.status)
	_, _ = w.Write(resp.body[:keep])
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	dropConnection(w)
}

func faultCode(f Fault) string {
	if f.Code != "" {
		return f.Code
	}
	switch f.Status {
	case http.StatusTooManyRequests:
		return "RATE_LIMITED"
	case http.StatusInternalServerError:
		return "INTERNAL_ERROR"
	}
	if text := http.StatusText(f.Status); text != "" {
		return strings.ToUpper(strings.ReplaceAll(text, " ", "_"))
	}
	return "ERROR"
}

func faultMessage(f Fault) string {
	if f.Message != "" {
		return f.Message
	}
	return "simulated fault"
}
