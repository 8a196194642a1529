package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/projects"
)

// TestCredentialsCheckIntervalFlag: the hidden flag that whole-binary tests
// use to shorten the key-file check; 10 s by default, never 0 (a ticker
// of 0 panics).
func TestCredentialsCheckIntervalFlag(t *testing.T) {
	f, err := parseFlags(nil, os.Getenv)
	if err != nil || f.credentialCheckInterval != projects.DefaultCredentialCheckInterval {
		t.Fatalf("default %v (err %v), want %v", f.credentialCheckInterval, err, projects.DefaultCredentialCheckInterval)
	}
	if f, err = parseFlags([]string{"--api.credentials-check-interval=50ms"}, os.Getenv); err != nil || f.credentialCheckInterval != 50*time.Millisecond {
		t.Errorf("50ms gives %v (err %v)", f.credentialCheckInterval, err)
	}
	for _, bad := range []string{"0s", "-1s", "soon"} {
		if _, err := parseFlags([]string{"--api.credentials-check-interval=" + bad}, os.Getenv); err == nil || !strings.Contains(err.Error(), "credentials-check-interval") {
			t.Errorf("%s: err = %v, want one naming the flag", bad, err)
		}
	}
}
