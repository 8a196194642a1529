package dataplane

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/clouddb/clouddb_exporter/internal/safefile"
)

// errNotOurs is a file that does not begin as this exporter's state file
// does: another program's, which is never overwritten.
var errNotOurs = errors.New("not a log state file of this exporter")

// readPositions reads the state file through safefile (no symbolic link,
// no FIFO, no device), its size checked against maxPositionsFile before a
// byte is read, and decodes it service by service: what it holds is the
// positions (tens of bytes a service), never the file or a tree of it.
func readPositions(path string) (map[string]savedProject, map[string][]byte, os.FileInfo, error) {
	f, info, err := safefile.Open(path)
	if err != nil {
		return nil, nil, nil, err
	}
	defer func() { _ = f.Close() }()
	if info.Size() > maxPositionsFile {
		return nil, nil, info, fmt.Errorf("%d bytes, larger than the bound of %d MiB", info.Size(), maxPositionsFile>>20)
	}
	if info.Size() == 0 {
		return map[string]savedProject{}, map[string][]byte{}, info, nil
	}
	projects, sections, err := decodePositions(bufio.NewReaderSize(io.LimitReader(f, maxPositionsFile+1), 32<<10))
	return projects, sections, info, err
}

// maxPositionsService bounds one service's value, which the decoder holds
// whole (its entries at the boundary as a map, for a moment): a service
// takes some 200 bytes, and 1 MiB is some 80,000 entries at one boundary.
const maxPositionsService = 1 << 20

var errServiceTooLarge = fmt.Errorf("a service's value larger than %d MiB", maxPositionsService>>20)

// isOurs says whether the file at path begins as a state file of this
// exporter (any version): its first key is "format", with our format.
func isOurs(path string) bool {
	f, _, err := safefile.Open(path)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	return header(json.NewDecoder(io.LimitReader(f, 4096))) == nil
}

func header(dec *json.Decoder) error {
	for _, want := range []any{json.Delim('{'), "format", positionsFormat} {
		if tok, err := dec.Token(); err != nil || tok != want {
			return errNotOurs
		}
	}
	return nil
}

func parsePositions(b []byte) (map[string]savedProject, error) {
	projects, _, err := decodePositions(bytes.NewReader(b))
	return projects, err
}

// decodePositions reads the format first (what tells the exporter's file
// from another's), then the version, the projects and the other parts'
// sections in any order.
func decodePositions(r io.Reader) (map[string]savedProject, map[string][]byte, error) {
	br := safefile.NewValueReader(r, errServiceTooLarge)
	dec := json.NewDecoder(br)
	if err := header(dec); err != nil {
		return nil, nil, err
	}
	var projects map[string]savedProject
	var sections map[string][]byte
	version := -1.0
	for dec.More() {
		k, err := key(dec)
		if err != nil {
			return nil, nil, err
		}
		switch {
		case k == "version" && version < 0:
			if err := dec.Decode(&version); err != nil {
				return nil, nil, malformed(err)
			}
		case k == "projects" && projects == nil:
			if projects, err = decodeProjects(dec, br); err != nil {
				return nil, nil, err
			}
		case k == "sections" && sections == nil:
			if err := dec.Decode(&sections); err != nil {
				return nil, nil, malformed(err)
			}
		default:
			return nil, nil, fmt.Errorf("not a log state file: field %q unknown or repeated", k)
		}
	}
	if version != positionsVersion {
		return nil, nil, fmt.Errorf("format version %v, this exporter reads version %d", version, positionsVersion)
	}
	if err := expect(dec, json.Delim('}')); err != nil {
		return nil, nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, nil, errors.New("not a log state file: data after its end")
	}
	if projects == nil {
		projects = map[string]savedProject{}
	}
	if sections == nil {
		sections = map[string][]byte{}
	}
	return projects, sections, nil
}

func decodeProjects(dec *json.Decoder, br *safefile.ValueReader) (map[string]savedProject, error) {
	if err := expect(dec, json.Delim('{')); err != nil {
		return nil, err
	}
	projects := map[string]savedProject{}
	left := maxBoundaryEntries
	for dec.More() {
		id, err := key(dec)
		if err != nil {
			return nil, err
		}
		if _, dup := projects[id]; dup {
			return nil, fmt.Errorf("project %q twice", id)
		}
		sp, err := decodeProject(dec, br, id, &left)
		if err != nil {
			return nil, err
		}
		projects[id] = sp
	}
	return projects, expect(dec, json.Delim('}'))
}

func decodeProject(dec *json.Decoder, br *safefile.ValueReader, id string, left *int) (savedProject, error) {
	var sp savedProject
	if err := expect(dec, json.Delim('{')); err != nil {
		return sp, err
	}
	for dec.More() {
		k, err := key(dec)
		if err != nil {
			return sp, err
		}
		switch k {
		case "api_url":
			if err := dec.Decode(&sp.apiURL); err != nil {
				return sp, malformed(err)
			}
		case "services":
			if sp.services, err = decodeServices(dec, br, id, left); err != nil {
				return sp, err
			}
		default:
			return sp, fmt.Errorf("not a log state file: unknown field %q in project %q", k, id)
		}
	}
	return sp, expect(dec, json.Delim('}'))
}

func decodeServices(dec *json.Decoder, br *safefile.ValueReader, id string, left *int) (savedServices, error) {
	if err := expect(dec, json.Delim('{')); err != nil {
		return nil, err
	}
	var services savedServices
	for dec.More() {
		sid, err := key(dec)
		if err != nil {
			return nil, err
		}
		var fc fileCursor
		br.Bound(maxPositionsService)
		err = strictDecode(dec, &fc)
		br.Unbound()
		if err != nil {
			return nil, fmt.Errorf("project %q service %q: %w", id, sid, err)
		}
		if err := fc.check(left); err != nil {
			return nil, fmt.Errorf("project %q service %q: %w", id, sid, err)
		}
		services = append(services, fc.saved(sid))
	}
	slices.SortFunc(services, compareSaved)
	for i := 1; i < len(services); i++ {
		if compareSaved(services[i-1], services[i]) == 0 {
			return nil, fmt.Errorf("project %q service %q twice", id, services[i].counts.ServiceID())
		}
	}
	return services, expect(dec, json.Delim('}'))
}

// strictDecode decodes one service's value, unknown fields refused: the
// decoder holds that value only.
func strictDecode(dec *json.Decoder, fc *fileCursor) error {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return malformed(err)
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(fc); err != nil {
		return malformed(err)
	}
	return nil
}

func key(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", malformed(err)
	}
	return tok.(string), nil // a key is always a string
}

func expect(dec *json.Decoder, want ...any) error {
	for _, w := range want {
		tok, err := dec.Token()
		if err != nil {
			return malformed(err)
		}
		if tok != w {
			return fmt.Errorf("not a log state file: %v where %v was expected", tok, w)
		}
	}
	return nil
}

func malformed(err error) error { return fmt.Errorf("not a log state file: %w", err) }
