package apiclient

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// TestClockSkewFromDate: the API's clock, as its answers' Date header
// gives it, against the exporter's; unknown before any answer, none
// within the header's one-second precision.
func TestClockSkewFromDate(t *testing.T) {
	var date string
	srv := newTestServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header()["Date"] = []string{date}
		writeJSON(w, http.StatusOK, `[]`)
	})
	c, _, _ := newTestClient(t, srv, nil)
	if _, known := c.ClockSkew(); known {
		t.Fatal("a skew known before any answer")
	}
	for _, tc := range []struct {
		name string
		date time.Time
		want time.Duration
	}{
		{"ten minutes behind", time.Now().Add(-10 * time.Minute), -10 * time.Minute},
		{"an hour ahead", time.Now().Add(time.Hour), time.Hour},
		{"in step", time.Now(), 0},
	} {
		date = tc.date.UTC().Format(http.TimeFormat)
		if _, err := c.ListVPCs(context.Background()); err != nil {
			t.Fatal(err)
		}
		got, known := c.ClockSkew()
		if d := got - tc.want; !known || d < -2*time.Second || d > 2*time.Second {
			t.Errorf("%s: skew %v (known %v), want %v", tc.name, got, known, tc.want)
		}
	}
}

// TestClockSkewSameDate: answers carrying the same Date text (many a second)
// are measured each against its own request's time.
func TestClockSkewSameDate(t *testing.T) {
	c, err := New(Config{BaseURL: "http://127.0.0.1:1/v1", AccessKey: testAccessKey, SecretKey: testSecretKey})
	if err != nil {
		t.Fatal(err)
	}
	date := time.Date(2026, 11, 24, 1, 31, 5, 0, time.UTC)
	h := http.Header{"Date": []string{date.Format(http.TimeFormat)}}
	for _, sent := range []time.Time{date.Add(-time.Hour), date.Add(10 * time.Minute), date, date.Add(-time.Hour)} {
		c.noteDate(h, sent, sent)
		if got, _ := c.ClockSkew(); got != date.Sub(sent) {
			t.Errorf("sent at %v: skew %v, want %v", sent, got, date.Sub(sent))
		}
	}
	h.Set("Date", "not a date")
	c.noteDate(h, date, date)
	if got, _ := c.ClockSkew(); got != time.Hour {
		t.Errorf("after an unreadable Date: skew %v, want the last one's (1h)", got)
	}
}
