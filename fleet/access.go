package fleet

import (
	"errors"
	"net/http"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// Access is what the project's last services list said of the exporter's
// access to it: the one call every cycle makes, so the best witness of
// wrong credentials, a wrong URL or an unreachable API.
type Access struct {
	// Known is false before the first list's answer.
	Known bool
	// Up is whether that list was answered with success.
	Up bool
	// Cause names why not, one of the Cause constants; "" when Up.
	Cause string
}

// The causes of Access, each with its own fix.
const (
	CauseCredentials = "credentials" // 401: the key pair is refused
	CausePermission  = "permission"  // 403: the keys cannot read the project
	CauseNotFound    = "not_found"   // 404: a wrong URL or project id
	CauseUnreachable = "unreachable" // no HTTP answer at all
	CauseError       = "error"       // anything else: the API's own trouble
)

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
	case errors.As(err, &transport):
		return Access{Known: true, Cause: CauseUnreachable}
	}
	return Access{Known: true, Cause: CauseError}
}

// Denied reports whether the API refuses the project to the exporter as
// configured (keys, permissions, URL or project id): a mistake to fix, which
// makes the exporter not ready, unlike an outage, which retrying outlasts.
func (a Access) Denied() bool {
	switch a.Cause {
	case CauseCredentials, CausePermission, CauseNotFound:
		return true
	}
	return false
}
