package poller

import (
	"regexp"

	"github.com/clouddb/clouddb_exporter/fleet"
)

var versionSegment = regexp.MustCompile(`/v[0-9]+/?$`)

// Access returns what the last services list said of access to the project.
func (p *Poller) Access() fleet.Access {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st.access
}

// noteAccess logs a change of cause once, as one ERROR naming the fix; the
// other parts' failures of the same cause are not logged. p.mu must be held.
func (p *Poller) noteAccess(err error) {
	a := fleet.AccessOf(err)
	prev := p.st.access
	p.st.access = a
	switch {
	case a.Up && prev.Known && !prev.Up && prev.Cause != fleet.CauseError:
		p.logger.Info("The API answers the project's requests again")
	case a.Up || a.Cause == prev.Cause || a.Cause == fleet.CauseError:
	default:
		p.logger.Error("The API refuses the project or cannot be reached: nothing can be read",
			"cause", a.Cause, "err", err, "fix", p.accessFix(a.Cause))
	}
}

// sameRootCause: see noteAccess. p.mu must be held.
func (p *Poller) sameRootCause(err error) bool {
	a := p.st.access
	return err != nil && !a.Up && a.Cause != fleet.CauseError && fleet.AccessOf(err).Cause == a.Cause
}

func (p *Poller) accessFix(cause string) string {
	switch cause {
	case fleet.CauseCredentials:
		return "check the key pair in " + p.opts.CredentialsSource + ": both keys of one pair, not revoked"
	case fleet.CausePermission:
		return "give the key pair of " + p.opts.CredentialsSource + " read access to project " + p.client.ProjectID()
	case fleet.CauseNotFound:
		if !versionSegment.MatchString(p.opts.APIURL) {
			return "--api.url (" + p.opts.APIURL + ") must end in the API's version segment, for example …/v1"
		}
		return "check the project id " + p.client.ProjectID() + " (--api.project-id or the project's id in --config.file) and --api.url (" + p.opts.APIURL + ")"
	case fleet.CauseTimeout:
		return "the API at --api.url (" + p.opts.APIURL + ") did not answer whole within --api.timeout: check its health and the network path to it, or raise --api.timeout"
	case fleet.CauseTruncated:
		return "the API's answers at --api.url (" + p.opts.APIURL + ") break off before their end: check the network path and any proxy (--api.proxy-url) between the exporter and the API"
	}
	return "check --api.url (" + p.opts.APIURL + "), the network path to it and --api.proxy-url"
}
