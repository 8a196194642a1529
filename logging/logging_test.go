package logging

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/prometheus/common/promslog"
)

func TestNewFormats(t *testing.T) {
	for _, tc := range []struct {
		format   string
		terminal bool
		check    func(t *testing.T, out string)
	}{
		{FormatJSON, false, func(t *testing.T, out string) {
			var m map[string]any
			if err := json.Unmarshal([]byte(out), &m); err != nil {
				t.Fatalf("json output %q: %v", out, err)
			}
			if m["msg"] != "Hello world" || m["key"] != "value" {
				t.Errorf("json output lacks message or attribute: %q", out)
			}
		}},
		{FormatLogfmt, false, func(t *testing.T, out string) {
			if !strings.Contains(out, `msg="Hello world"`) || !strings.Contains(out, "key=value") {
				t.Errorf("logfmt output %q", out)
			}
		}},
		{FormatAuto, false, func(t *testing.T, out string) {
			if !strings.Contains(out, `msg="Hello world"`) {
				t.Errorf("auto off a terminal must be logfmt, got %q", out)
			}
		}},
		{FormatAuto, true, func(t *testing.T, out string) {
			if strings.Contains(out, "msg=") || !strings.Contains(out, "Hello world") {
				t.Errorf("auto on a terminal must be console, got %q", out)
			}
			if !strings.Contains(out, "\x1b[") {
				t.Errorf("console on a terminal must be coloured, got %q", out)
			}
		}},
		{FormatConsole, false, func(t *testing.T, out string) {
			if strings.Contains(out, "\x1b[") || !strings.Contains(out, "key=value") {
				t.Errorf("console off a terminal must not be coloured, got %q", out)
			}
		}},
	} {
		t.Run(tc.format, func(t *testing.T) {
			var buf bytes.Buffer
			logger, err := New(&buf, &Config{Format: tc.format}, tc.terminal)
			if err != nil {
				t.Fatal(err)
			}
			logger.Info("Hello world", "key", "value")
			tc.check(t, buf.String())
		})
	}
}

func TestNewLevel(t *testing.T) {
	level := promslog.NewLevel()
	if err := level.Set("warn"); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	logger, err := New(&buf, &Config{Level: level, Format: FormatLogfmt}, false)
	if err != nil {
		t.Fatal(err)
	}
	logger.Info("Hidden")
	logger.Warn("Shown")
	if strings.Contains(buf.String(), "Hidden") || !strings.Contains(buf.String(), "Shown") {
		t.Errorf("level warn: got %q", buf.String())
	}
}

func TestNewUnknownFormat(t *testing.T) {
	if _, err := New(&bytes.Buffer{}, &Config{Format: "xml"}, false); err == nil || !strings.Contains(err.Error(), "--log.format") {
		t.Errorf("want an error naming --log.format, got %v", err)
	}
}
