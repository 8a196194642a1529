package dataplane

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"testing"
)

// TestStateFileSections: another part's bytes (rightsizing's windows) are
// written beside the log positions, as json.Marshal would write them, and
// read back at the next start; a file without sections still reads.
func TestStateFileSections(t *testing.T) {
	sections := map[string][]byte{"rightsizing": {0, 1, 2, 250, 251, 252}, "b": []byte("x")}
	want, err := json.Marshal(positionsFile{Format: positionsFormat, Version: positionsVersion, Projects: map[string]fileProject{}, Sections: sections})
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := writePositions(&got, nil, sections); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("the file differs from json.Marshal's:\n got %s\nwant %s", got.Bytes(), want)
	}

	path := filepath.Join(t.TempDir(), "state.json")
	logger := slog.New(slog.DiscardHandler)
	p, err := OpenLogPositions(path, logger, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Section("rightsizing") != nil {
		t.Error("a new file has a section")
	}
	p.SaveSection("rightsizing", sections["rightsizing"])
	p.Close()
	p.SaveSection("rightsizing", []byte("after close"))
	again, err := OpenLogPositions(path, logger, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b := again.Section("rightsizing"); !bytes.Equal(b, sections["rightsizing"]) {
		t.Errorf("section read back %v; want %v", b, sections["rightsizing"])
	}
	var none *LogPositions
	none.SaveSection("x", nil)
	if none.Section("x") != nil {
		t.Error("a nil state file has a section")
	}
}
