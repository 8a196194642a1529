package apiclient

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// streamServices answers a list of n services, each padded with an unknown
// field of pad bytes, written piece by piece.
func streamServices(n, pad int) http.HandlerFunc {
	padding := strings.Repeat("p", pad)
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("["))
		for i := range n {
			if i > 0 {
				_, _ = w.Write([]byte(","))
			}
			fmt.Fprintf(w, `{"service_id":"s%d","status":"READY","unknown_padding":"%s"}`, i, padding)
		}
		_, _ = w.Write([]byte("]"))
	}
}

func TestListDecodedAsStream(t *testing.T) {
	srv := newTestServer(t, streamServices(200, 64<<10)) // about 13 MB
	t.Run("within the limit", func(t *testing.T) {
		c, _, _ := newTestClient(t, srv, func(cfg *Config) { cfg.MaxBodyBytes = 16 << 20 })
		got, err := c.ListServices(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 200 || got[199].ServiceID != "s199" || got[0].Status != ServiceReady {
			t.Fatalf("got %d services, last %+v", len(got), got[len(got)-1].ServiceID)
		}
	})
	t.Run("over the limit", func(t *testing.T) {
		c, _, _ := newTestClient(t, srv, func(cfg *Config) { cfg.MaxBodyBytes = 1 << 20; cfg.MaxRetries = -1 })
		_, err := c.ListServices(t.Context())
		if !errors.Is(err, ErrBodyTooLarge) || !strings.Contains(err.Error(), "--api.max-response-size") {
			t.Fatalf("err = %v, want ErrBodyTooLarge naming the flag", err)
		}
	})
}

func TestStreamDecodingKeepsStrictAndLenientSemantics(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		lenient    bool
		want       int // services kept; -1 for an error
	}{
		{"null", `null`, true, 0},
		{"empty", ` [ ] `, true, 0},
		{"not an array", `{"service_id":"s"}`, true, -1},
		{"trailing data", `[{"service_id":"s"}] x`, true, -1},
		{"cut short", `[{"service_id":"s"},`, true, -1},
		{"bad element dropped", `[{"service_id":"s"},7,{"service_id":"t","paused":"no"}]`, true, 2},
		{"bad element strict", `[{"service_id":"s"},{"service_id":"t","paused":"no"}]`, false, -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var drop func(FieldError)
			if tt.lenient {
				drop = func(FieldError) {}
			}
			var got []Service
			err := decodeBody(OpListServices, []byte(tt.body), &got, drop)
			switch {
			case tt.want < 0 && err == nil:
				t.Fatalf("decoded %v, want an error", got)
			case tt.want >= 0 && (err != nil || len(got) != tt.want || got == nil):
				t.Fatalf("got %v (%v), want %d services", got, err, tt.want)
			}
		})
	}
}

// TestDecodeErrorSnippetRedacted: the snippet of an answer that does not
// decode must not show the bearer key: it is logged and returned.
func TestDecodeErrorSnippetRedacted(t *testing.T) {
	basic := base64.StdEncoding.EncodeToString([]byte(testAccessKey + ":" + testSecretKey))
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, "token Bearer "+testAPIKey+" / Basic "+basic[:20])
	})
	c, _, _ := newTestClient(t, srv, nil)
	_, err := c.GetAuthInfo(t.Context())
	var d *DecodeError
	if !errors.As(err, &d) || !strings.Contains(d.Snippet, redacted) {
		t.Fatalf("err = %v, want a DecodeError with a redacted snippet", err)
	}
	assertNoSecrets(t, err)
	if revealed(err.Error(), testAccessKey) {
		t.Errorf("error %q reveals the access key", err)
	}
}

// TestBodylessAnswerIgnoresItsBody: a write answered with its documented
// status is a success whatever body comes with it, even one over the
// limit: reporting it as too large would make an accepted write look
// failed.
func TestBodylessAnswerIgnoresItsBody(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusAccepted, `{"message":"`+strings.Repeat("x", 2<<20)+`"}`)
	})
	c, _, _ := newTestClient(t, srv, func(cfg *Config) { cfg.MaxBodyBytes = 1 << 20 })
	if err := c.DeleteService(t.Context(), "s1"); err != nil {
		t.Fatalf("DeleteService answered 202 with a large body: %v", err)
	}
}
