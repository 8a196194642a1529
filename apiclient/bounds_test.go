package apiclient

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"
)

// TestAnswersAreSanitized: every text of every decoded answer is redacted
// and bounded before a caller sees it, whatever the field; a Secret (an
// initial password) is not touched.
func TestAnswersAreSanitized(t *testing.T) {
	long := strings.Repeat("é", MaxTextBytes) // 2 bytes a rune: a cut inside one must not split it
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/auth/info"):
			writeJSON(w, 200, `{"api_key":{"name":"k `+testSecretKey+`","public_key":"`+testAccessKey+`","project":{"id":"p","name":"`+long+`"}}}`)
		case strings.HasSuffix(r.URL.Path, "/vpcs"):
			writeJSON(w, 200, `[{"id":"v1","name":"`+testAPIKey+`"}]`)
		case strings.HasSuffix(r.URL.Path, "/series"):
			writeJSON(w, 200, `[{"labels":{"k":"`+testSecretKey+`"},"values":[]}]`)
		default:
			writeJSON(w, 200, `[{"service_id":"s1","name":"`+testSecretKey+`","created":"2024-01-01T00:00:00Z","initial_password":"pw-`+testSecretKey+`",`+
				`"resources":[{"id":"r `+testAccessKey+`"}],"read_replica_sets":[{"id":"rs1","name":"`+long+`"}]}]`)
		}
	})
	c, _, obs := newTestClient(t, srv, nil)
	info, err := c.GetAuthInfo(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	services, err := c.ListServices(t.Context())
	if err != nil || len(services) != 1 {
		t.Fatal(services, err)
	}
	vpcs, err := c.ListVPCs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	series, err := c.GetServiceMetricsSeries(t.Context(), "s1", SeriesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%+v %+v %+v %+v", *info.Key(), services[0], vpcs, series)
	for _, key := range []string{testAccessKey, testSecretKey, testAPIKey} {
		if strings.Contains(got, key) {
			t.Errorf("decoded answers reveal %q: %s", key, got)
		}
	}
	if info.Key().PublicKey != redacted || services[0].Name != redacted {
		t.Errorf("public_key %q, name %q: want %s", info.Key().PublicKey, services[0].Name, redacted)
	}
	if services[0].InitialPassword.Reveal() != "pw-"+testSecretKey {
		t.Errorf("initial password changed: a Secret goes back as it came")
	}
	for _, s := range []string{info.Key().Project.Name, services[0].ReadReplicaSets[0].Name} {
		if len(s) > MaxTextBytes || !strings.HasSuffix(s, TruncatedMark) || !utf8.ValidString(s) {
			t.Errorf("long text: %d bytes, ends %q, want at most %d ending in the mark", len(s), s[max(0, len(s)-20):], MaxTextBytes)
		}
	}
	if want := []string{OpGetAuthInfo, OpListServices}; fmt.Sprint(obs.truncated) != fmt.Sprint(want) {
		t.Errorf("truncations observed %v, want %v", obs.truncated, want)
	}
}

// TestListLengthBound: a list longer than MaxListLength fails once that
// many resources were read, without reading the rest, and is observed.
func TestListLengthBound(t *testing.T) {
	srv := newTestServer(t, streamServices(1000, 0))
	c, _, obs := newTestClient(t, srv, func(cfg *Config) { cfg.MaxListLength = 10 })
	var handed int
	err := c.StreamServices(t.Context(), func() {}, func(*Service) { handed++ })
	if !errors.Is(err, ErrTooManyResources) || !strings.Contains(err.Error(), "--collect.max-resources-per-list") {
		t.Fatalf("err = %v, want ErrTooManyResources naming the flag", err)
	}
	if handed != 10 || len(obs.tooLong) != 1 || len(srv.requests()) != 1 {
		t.Errorf("handed %d services, observed %v, %d requests: want 10, one, one (not retried)", handed, obs.tooLong, len(srv.requests()))
	}
	if _, err := c.ListVPCs(t.Context()); err != nil { // the same answer: 1000 VPCs
		if !errors.Is(err, ErrTooManyResources) {
			t.Errorf("ListVPCs: %v", err)
		}
	}
	c, _, _ = newTestClient(t, srv, func(cfg *Config) { cfg.MaxListLength = 1000 })
	if list, err := c.ListServices(t.Context()); err != nil || len(list) != 1000 {
		t.Errorf("a list of exactly the bound: %d, %v", len(list), err)
	}
}

// TestMostlyInvalidListFails: a long stream of tiny elements that do not
// decode fails the call early instead of keeping the lenient decoder busy.
func TestMostlyInvalidListFails(t *testing.T) {
	const n = 200_000
	var written atomic.Int64
	srv := newTestServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `[{"service_id":"ok","status":"READY"}`)
		for range n {
			k, err := io.WriteString(w, `,{"service_id":1}`)
			written.Add(int64(k))
			if err != nil {
				return
			}
		}
		_, _ = io.WriteString(w, "]")
	})
	c, _, obs := newTestClient(t, srv, func(cfg *Config) { cfg.MaxRetries = -1 })
	_, err := c.ListServices(t.Context())
	var de *DecodeError
	if !errors.As(err, &de) || !errors.Is(err, ErrMostlyInvalid) {
		t.Fatalf("err = %v, want a DecodeError wrapping ErrMostlyInvalid", err)
	}
	if d := len(obs.decodeErrors); d > minInvalidShare+1 {
		t.Errorf("%d elements decoded leniently before failing, want the call failed at %d", d, minInvalidShare)
	}
	if got := fmt.Sprint(obs.requests); got != "[listServices decode_error]" {
		t.Errorf("requests %s", got)
	}

	// Broken elements amid valid ones below that share are only dropped.
	srv = newTestServer(t, func(w http.ResponseWriter, _ *http.Request) {
		parts := make([]string, 0, 400)
		for i := range 400 {
			if i%3 == 0 {
				parts = append(parts, `{"service_id":1}`)
			} else {
				parts = append(parts, fmt.Sprintf(`{"service_id":"s%d"}`, i))
			}
		}
		writeJSON(w, 200, "["+strings.Join(parts, ",")+"]")
	})
	c, _, _ = newTestClient(t, srv, nil)
	if list, err := c.ListServices(t.Context()); err != nil || len(list) != 266 {
		t.Errorf("a third broken: kept %d, %v; want 266 and no error", len(list), err)
	}
}
