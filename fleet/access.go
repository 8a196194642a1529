package fleet

import (
	"errors"
	"io"
	"net/http"
	"syscall"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// Access is what the last services list, made every cycle, said of access to the project.
type Access struct {
	Known bool
	Up    bool
	Cause string
}

// The causes of Access, each with its own fix.
const (
	CauseCredentials = "credentials" // 401: the key pair is refused
	CausePermission  = "permission"  // 403: the keys cannot read the project
	CauseNotFound    = "not_found"   // 404: a wrong URL or project id
	CauseUnreachable = "unreachable" // no answer at all: refused, no route, no such host
	CauseTimeout     = "timeout"     // no whole answer within --api.timeout: slow
	CauseTruncated   = "truncated"   // an answer that broke off before its end
	CauseError       = "error"       // anything else: the API's own trouble
)

// AccessCauses are every cause, in the order of the exporter's state set.
var AccessCauses = [...]string{CauseCredentials, CauseError, CauseNotFound, CausePermission, CauseTimeout, CauseTruncated, CauseUnreachable}

// AccessOf classifies the outcome of a services list.
func AccessOf(err error) Access {
	var apiErr *apiclient.APIError
	var transport *apiclient.TransportError
	switch {
	case err == nil:
		return Access{Known: true, Up: true}
	case errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusUnauthorized:
		return Access{Known: true, Cause: CauseCredentials}
	case errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusForbidden:
		return Access{Known: true, Cause: CausePermission}
	case errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusNotFound:
		return Access{Known: true, Cause: CauseNotFound}
	case errors.As(err, &transport) && transport.Timeout():
		return Access{Known: true, Cause: CauseTimeout}
	case cut(err):
		return Access{Known: true, Cause: CauseTruncated}
	case errors.As(err, &transport):
		return Access{Known: true, Cause: CauseUnreachable}
	}
	return Access{Known: true, Cause: CauseError}
}

// cut: the connection closed or was reset once the request was sent, or
// the answer ended before its end.
func cut(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
}

// Denied reports a mistake to fix (not ready), unlike an outage, which retrying outlasts.
func (a Access) Denied() bool {
	switch a.Cause {
	case CauseCredentials, CausePermission, CauseNotFound:
		return true
	}
	return false
}
