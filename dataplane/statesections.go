package dataplane

import (
	"bufio"
	"encoding/base64"
	"maps"
	"slices"
)

// The state file's sections: other parts' state (rightsizing's windows),
// opaque bytes by name, read with the file at start and written with it.

// Section returns the bytes saved under name when the file was read, nil
// for none. Nil does nothing.
func (p *LogPositions) Section(name string) []byte {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sections[name]
}

// SaveSection keeps b under name for the next write; b must not change.
func (p *LogPositions) SaveSection(name string, b []byte) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.sections[name] = b
	p.dirty = true
}

// appendSections writes ,"sections":{...} as json.Marshal writes a
// map[string][]byte (keys sorted, base64), flushing each to bw; nothing
// without sections.
func appendSections(b []byte, bw *bufio.Writer, sections map[string][]byte) []byte {
	if len(sections) == 0 {
		return b
	}
	b = append(b, `,"sections":{`...)
	for i, name := range slices.Sorted(maps.Keys(sections)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, name)
		b = append(b, ':', '"')
		b = base64.StdEncoding.AppendEncode(b, sections[name])
		b = append(b, '"')
		_, _ = bw.Write(b)
		b = b[:0]
	}
	return append(b, '}')
}
