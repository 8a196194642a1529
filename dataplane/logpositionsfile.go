package dataplane

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The state file's JSON: parsed by encoding/json into these shapes, and
// written by writePositions to the same bytes json.Marshal made of them.
type positionsFile struct {
	Format   string                 `json:"format"`
	Version  int                    `json:"version"`
	Projects map[string]fileProject `json:"projects"`
	// Sections are other parts' state, base64 in the JSON (statesections.go).
	Sections map[string][]byte `json:"sections,omitempty"`
}

type fileProject struct {
	APIURL   string                `json:"api_url"`
	Services map[string]fileCursor `json:"services"`
}

type fileCursor struct {
	Boundary   time.Time          `json:"boundary"`
	AtBoundary map[string]int     `json:"at_boundary"`
	Counts     map[string]float64 `json:"counts"`
	ReadUntil  time.Time          `json:"read_until"`
}

// maxBoundaryEntries bounds the entries a file's counts at the boundaries
// make at resume (12 bytes each): one count can ask for billions.
const maxBoundaryEntries = 1 << 22

// check takes the entries at the boundary from left.
func (fc fileCursor) check(left *int) error {
	if fc.Boundary.IsZero() || fc.ReadUntil.IsZero() {
		return errors.New("no boundary or read time")
	}
	for k, n := range fc.AtBoundary {
		if _, err := strconv.ParseUint(k, 16, 64); err != nil || n < 1 {
			return fmt.Errorf("entry %q counted %d times at the boundary", k, n)
		}
		if *left -= n; *left < 0 {
			return fmt.Errorf("more than %d entries at the boundaries", maxBoundaryEntries)
		}
	}
	for sev, n := range fc.Counts {
		if severityOf(sev) != sev || n < 0 || math.IsNaN(n) || math.IsInf(n, 0) {
			return fmt.Errorf("count %v of severity %q", n, sev)
		}
	}
	return nil
}

// saved folds the 64-bit keys of files written before the keys were 32
// bits; fc is checked.
func (fc fileCursor) saved(id string) savedCursor {
	sc := savedCursor{boundary: clampedUnixNano(fc.Boundary), readUntil: clampedUnixNano(fc.ReadUntil), counts: NewServiceLogs(&id)}
	for sev, n := range fc.Counts {
		sc.counts.Set(severityIndex(sev), n)
	}
	for k, n := range fc.AtBoundary {
		key, _ := strconv.ParseUint(k, 16, 64)
		for range n {
			sc.atBoundary = append(sc.atBoundary, foldKey(key))
		}
	}
	slices.Sort(sc.atBoundary)
	return sc
}

// clampedUnixNano: a time Unix ns cannot hold resumes as it did as a
// time.Time, as it is beyond the resume bound either way.
func clampedUnixNano(t time.Time) int64 {
	switch {
	case t.Before(time.Unix(0, math.MinInt64)):
		return math.MinInt64
	case t.After(time.Unix(0, math.MaxInt64)):
		return math.MaxInt64
	}
	return t.UnixNano()
}

func compareSaved(a, b savedCursor) int {
	return strings.Compare(a.counts.ServiceID(), b.counts.ServiceID())
}

// writePositions streams the file service by service: marshalled whole, it
// took a buffer grown to several times its size (14 MB at 10,000 services).
func writePositions(w io.Writer, projects map[string]savedProject, sections map[string][]byte) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	e := positionsEncoder{b: make([]byte, 0, 1024)}
	e.b = append(e.b, `{"format":`...)
	e.b = appendJSONString(e.b, positionsFormat)
	e.b = append(e.b, `,"version":`...)
	e.b = strconv.AppendInt(e.b, positionsVersion, 10)
	e.b = append(e.b, `,"projects":{`...)
	for i, id := range slices.Sorted(maps.Keys(projects)) {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = appendJSONString(e.b, id)
		e.b = append(e.b, `:{"api_url":`...)
		e.b = appendJSONString(e.b, projects[id].apiURL)
		e.b = append(e.b, `,"services":{`...)
		for j := range projects[id].services {
			if j > 0 {
				e.b = append(e.b, ',')
			}
			e.cursor(&projects[id].services[j])
			_, _ = bw.Write(e.b) // bufio keeps the first error for Flush
			e.b = e.b[:0]
		}
		e.b = append(e.b, "}}"...)
	}
	e.b = append(e.b, '}')
	e.b = appendSections(e.b, bw, sections)
	e.b = append(e.b, '}')
	_, _ = bw.Write(e.b)
	return bw.Flush()
}

type positionsEncoder struct {
	b    []byte
	keys []hexKey
}

// hexKey is a key as json.Marshal orders a map's: by its hex string.
type hexKey struct {
	hex [8]byte
	len uint8
	n   int
}

func (e *positionsEncoder) cursor(sc *savedCursor) {
	e.b = appendJSONString(e.b, sc.counts.ServiceID())
	e.b = append(e.b, `:{"boundary":`...)
	e.b = appendJSONTime(e.b, sc.boundary)
	e.b = append(e.b, `,"at_boundary":{`...)
	e.keys = e.keys[:0]
	for i, k := range sc.atBoundary {
		if i > 0 && k == sc.atBoundary[i-1] {
			e.keys[len(e.keys)-1].n++
			continue
		}
		hk := hexKey{n: 1}
		hk.len = uint8(len(strconv.AppendUint(hk.hex[:0], uint64(k), 16)))
		e.keys = append(e.keys, hk)
	}
	slices.SortFunc(e.keys, func(a, b hexKey) int { return bytes.Compare(a.hex[:a.len], b.hex[:b.len]) })
	for i := range e.keys {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = append(append(append(e.b, '"'), e.keys[i].hex[:e.keys[i].len]...), `":`...)
		e.b = strconv.AppendInt(e.b, int64(e.keys[i].n), 10)
	}
	e.b = append(e.b, `},"counts":{`...)
	first := true
	for i, sev := range LogSeverities { // sorted by name, as json.Marshal's keys
		if n, ok := sc.counts.Count(i); ok {
			if !first {
				e.b = append(e.b, ',')
			}
			first = false
			e.b = append(append(append(e.b, '"'), sev...), `":`...)
			e.b = appendJSONFloat(e.b, n)
		}
	}
	e.b = append(e.b, `},"read_until":`...)
	e.b = appendJSONTime(e.b, sc.readUntil)
	e.b = append(e.b, '}')
}

// appendJSONString leaves json.Marshal the strings it escapes or mends.
func appendJSONString(b []byte, s string) []byte {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

func appendJSONTime(b []byte, ns int64) []byte {
	return append(unixTime(ns).AppendFormat(append(b, '"'), time.RFC3339Nano), '"')
}

// appendJSONFloat formats as encoding/json does: counts are finite.
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b
}
