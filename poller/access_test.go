package poller

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// TestAccessRefusedIsOneErrorWithItsFix: refused credentials fail every
// part of every cycle; the log says so once, as an ERROR naming where the
// keys come from, instead of one WARN per part per cycle, and says when
// the API answers again.
func TestAccessRefusedIsOneErrorWithItsFix(t *testing.T) {
	c := newFakeClient()
	fleetOf(c, 3, 1)
	h := newHarness(t, c)
	h.poller.opts.CredentialsSource = "$CLOUDDB_ACCESS_KEY and $CLOUDDB_SECRET_KEY"
	unauthorized := &apiclient.APIError{StatusCode: 401, Code: "UNAUTHORIZED", Message: "invalid credentials"}
	c.set(func(f *fakeClient) {
		for _, op := range []string{apiclient.OpListServices, apiclient.OpListVPCs, apiclient.OpListReplicaSets, apiclient.OpListPeerings} {
			f.fail[op] = unauthorized
		}
	})
	for range 3 {
		snap := h.poller.Poll(context.Background())
		if snap.Access != (fleet.Access{Known: true, Cause: fleet.CauseCredentials}) {
			t.Fatalf("access %+v", snap.Access)
		}
		h.clock.Advance(h.poller.opts.Interval)
	}
	logs := h.logs.String()
	if n := strings.Count(logs, "level=ERROR"); n != 1 || !strings.Contains(logs, "fix=\"check the key pair in $CLOUDDB_ACCESS_KEY and $CLOUDDB_SECRET_KEY") {
		t.Errorf("3 refused cycles: %d ERROR lines, want 1 naming the keys' source:\n%s", n, logs)
	}
	if strings.Contains(logs, "Collector failed") {
		t.Errorf("refused credentials logged per part as well:\n%s", logs)
	}
	if !h.poller.Access().Denied() {
		t.Error("refused credentials are not Denied")
	}

	c.set(func(f *fakeClient) { clear(f.fail) })
	if snap := h.poller.Poll(context.Background()); !snap.Access.Up {
		t.Errorf("access after the fix %+v", snap.Access)
	}
	if !strings.Contains(h.logs.String(), "The API answers the project's requests again") {
		t.Errorf("no line for the recovery:\n%s", h.logs.String())
	}
}

// TestAccessFixes: each cause names its own fix; a 404 on a URL without
// its version segment names --api.url.
func TestAccessFixes(t *testing.T) {
	for _, tc := range []struct {
		err       error
		url, want string
	}{
		{&apiclient.APIError{StatusCode: 404}, "https://api.example.net", "--api.url (https://api.example.net) must end in the API's version segment"},
		{&apiclient.APIError{StatusCode: 404}, "https://api.example.net/v1", "check the project id p"},
		{&apiclient.APIError{StatusCode: 403}, "https://api.example.net/v1", "read access to project p"},
		{&apiclient.TransportError{Err: context.DeadlineExceeded}, "https://api.example.net/v1", "--api.timeout"},
		{&apiclient.TransportError{Err: fmt.Errorf("reading response body: %w", io.ErrUnexpectedEOF)}, "https://api.example.net/v1", "break off"},
		{&apiclient.TransportError{Err: syscall.ECONNREFUSED}, "https://api.example.net/v1", "the network path"},
	} {
		p := New(projectClient{}, Options{APIURL: tc.url, CredentialsSource: "keys", Logger: slog.New(slog.DiscardHandler)})
		a := fleet.AccessOf(tc.err)
		if got := p.accessFix(a.Cause); !strings.Contains(got, tc.want) {
			t.Errorf("%v at %s: fix %q, want %q", tc.err, tc.url, got, tc.want)
		}
	}
	if a := fleet.AccessOf(errBoom); a.Cause != fleet.CauseError || a.Denied() {
		t.Errorf("a 500 is %+v", a)
	}
}

// TestAccessCauses: a slow answer is a timeout and a cut one truncated,
// not "unreachable" (which is for no answer at all: refused, no route, no
// such host), each logged with its own cause and fix.
func TestAccessCauses(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&apiclient.TransportError{Err: syscall.ECONNREFUSED}, fleet.CauseUnreachable},
		{&apiclient.TransportError{Err: &net.DNSError{Err: "no such host", Name: "api.invalid", IsNotFound: true}}, fleet.CauseUnreachable},
		{&apiclient.TransportError{Err: context.DeadlineExceeded}, fleet.CauseTimeout},
		{&apiclient.TransportError{Err: fmt.Errorf("reading response body: %w", context.DeadlineExceeded)}, fleet.CauseTimeout},
		{&apiclient.TransportError{Err: fmt.Errorf("reading response body: %w", io.ErrUnexpectedEOF)}, fleet.CauseTruncated},
		{&apiclient.TransportError{Err: io.EOF}, fleet.CauseTruncated},
		{&apiclient.TransportError{Err: fmt.Errorf("read: %w", syscall.ECONNRESET)}, fleet.CauseTruncated},
		{&apiclient.DecodeError{Err: io.ErrUnexpectedEOF}, fleet.CauseTruncated},
	} {
		if a := fleet.AccessOf(tc.err); a.Cause != tc.want || a.Up || a.Denied() {
			t.Errorf("%v: %+v, want cause %s", tc.err, a, tc.want)
		}
	}
	c := newFakeClient()
	fleetOf(c, 1, 1)
	h := newHarness(t, c)
	c.set(func(f *fakeClient) {
		f.fail[apiclient.OpListServices] = &apiclient.TransportError{Err: context.DeadlineExceeded}
	})
	h.poller.Poll(context.Background())
	if logs := h.logs.String(); !strings.Contains(logs, "cause=timeout") || strings.Contains(logs, "cause=unreachable") {
		t.Errorf("a timed-out services list is not logged as a timeout:\n%s", logs)
	}
}

// projectClient is a Client that only knows its project id.
type projectClient struct{ Client }

func (projectClient) ProjectID() string { return "p" }

// TestAccessOtherCausesStillLogged: a part that fails for another reason
// than the refused access is logged as before.
func TestAccessOtherCausesStillLogged(t *testing.T) {
	c := newFakeClient()
	fleetOf(c, 2, 1)
	h := newHarness(t, c)
	c.set(func(f *fakeClient) {
		f.fail[apiclient.OpListServices] = &apiclient.APIError{StatusCode: 403, Code: "FORBIDDEN"}
		f.fail[apiclient.OpListVPCs] = errBoom
	})
	h.poller.Poll(context.Background())
	logs := h.logs.String()
	if !strings.Contains(logs, "Collector failed") || !strings.Contains(logs, "collector=vpcs") || strings.Contains(logs, "collector=services") {
		t.Errorf("want the VPCs' failure logged and the services' one only as the access ERROR:\n%s", logs)
	}
}
