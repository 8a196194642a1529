package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

const (
	maxBodyBytes = 64 << 10
	maxNameRunes = 128
	maxIDLen     = 128
	// maxPasswordBytes only keeps a password from being the whole body.
	maxPasswordBytes = 1024
)

func invalidf(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, code: codeInvalidRequest, message: fmt.Sprintf(format, args...)}
}

func readBody(r *http.Request) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return nil, invalidf("body: cannot be read")
	}
	if len(raw) > maxBodyBytes {
		return nil, invalidf("body: larger than the limit of %d bytes", maxBodyBytes)
	}
	return raw, nil
}

// decodeStrict leaves absent and null fields nil in T's pointer fields.
func decodeStrict[T any](raw []byte) (*T, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return nil, invalidf("body: a JSON object is required")
	}
	if trimmed[0] != '{' {
		return nil, invalidf("body: must be a JSON object")
	}
	if !utf8.Valid(trimmed) {
		return nil, invalidf("body: must be valid UTF-8")
	}
	if err := checkKeys[T](trimmed); err != nil {
		return nil, err
	}
	var v T
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return nil, jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, invalidf("body: unexpected data after the JSON object")
	}
	return &v, nil
}

func decodeEmpty(raw []byte) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	_, err := decodeStrict[struct{}](raw)
	return err
}

// jsonError never quotes the value: it may be a password.
func jsonError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return invalidf("body: must be a JSON object")
		}
		return invalidf("%s: must be %s, got a JSON %s", typeErr.Field, jsonKind(typeErr.Type.String()), typeErr.Value)
	case errors.As(err, &syntaxErr):
		return invalidf("body: malformed JSON at byte %d", syntaxErr.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return invalidf("body: truncated JSON")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return invalidf("%s: unknown field", strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`))
	default:
		return invalidf("body: not a valid JSON object")
	}
}

func jsonKind(goType string) string {
	goType = strings.TrimPrefix(goType, "*")
	switch {
	case goType == "int64":
		return "an integer"
	case goType == "string":
		return "a string"
	case strings.HasPrefix(goType, "[]"):
		return "an array of strings"
	default:
		return "a JSON object"
	}
}

// checker collects every wrong field, for one answer to name them all.
type checker struct{ problems []string }

func (c *checker) fail(field, format string, args ...any) {
	c.problems = append(c.problems, field+": "+fmt.Sprintf(format, args...))
}

func (c *checker) err() error {
	if len(c.problems) == 0 {
		return nil
	}
	return invalidf("%s", strings.Join(c.problems, "; "))
}

func required[T any](c *checker, field string, v *T) bool {
	if v == nil {
		c.fail(field, "is required")
		return false
	}
	return true
}

func (c *checker) atLeast(field string, v *int64, lowest int64) int64 {
	if !required(c, field, v) {
		return 0
	}
	if *v < lowest {
		c.fail(field, "must be >= %d", lowest)
	}
	return *v
}

func (c *checker) optionalAtLeast(field string, v *int64, lowest int64) *int64 {
	if v == nil {
		return nil
	}
	n := c.atLeast(field, v, lowest)
	return &n
}

func (c *checker) optionalEnvironment(field string, v *string) string {
	if v == nil {
		return ""
	}
	return c.environment(field, v)
}

func (c *checker) forkStrategy(field string, v *string) string {
	if !required(c, field, v) {
		return ""
	}
	known := []string{apiclient.ForkLastSnapshot, apiclient.ForkNow, apiclient.ForkPITR}
	if !slices.Contains(known, *v) {
		c.fail(field, "must be one of %s", strings.Join(known, ", "))
	}
	return *v
}

// size takes an integer >= 1, a string of digits or, if shared, "shared",
// and sends revision 2026's string.
func (c *checker) size(field string, v *json.RawMessage, shared bool) apiclient.Size {
	if !required(c, field, v) {
		return ""
	}
	want := "an integer >= 1 or a string of digits"
	if shared {
		want += ` or "shared"`
	}
	var s string
	if err := json.Unmarshal(*v, &s); err != nil {
		var n int64
		if err := json.Unmarshal(*v, &n); err != nil || n < 1 {
			c.fail(field, "must be %s", want)
			return ""
		}
		return apiclient.SizeOf(n)
	}
	if shared && apiclient.Size(s) == apiclient.SizeShared {
		return apiclient.SizeShared
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 || strings.TrimLeft(s, "0123456789") != "" {
		c.fail(field, "must be %s", want)
		return ""
	}
	return apiclient.SizeOf(n)
}

// sizes takes both sizes, or both "shared".
func (c *checker) sizes(cpu, mem *json.RawMessage, shared bool) (apiclient.Size, apiclient.Size) {
	a, b := c.size("cpu_millis", cpu, shared), c.size("memory_gbs", mem, shared)
	if a != "" && b != "" && (a == apiclient.SizeShared) != (b == apiclient.SizeShared) {
		c.fail("memory_gbs", `cpu_millis and memory_gbs must both be "shared" or both be sizes`)
	}
	return a, b
}

func (c *checker) name(field string, v *string) string {
	if !required(c, field, v) {
		return ""
	}
	switch n := utf8.RuneCountInString(*v); {
	case strings.TrimSpace(*v) == "":
		c.fail(field, "must not be blank")
	case n > maxNameRunes:
		c.fail(field, "must be at most %d characters", maxNameRunes)
	}
	return *v
}

func (c *checker) ident(field string, v *string) string {
	if !required(c, field, v) {
		return ""
	}
	switch {
	case strings.TrimSpace(*v) == "":
		c.fail(field, "must not be blank")
	case len(*v) > maxIDLen:
		c.fail(field, "must be at most %d bytes", maxIDLen)
	}
	return *v
}

func (c *checker) environment(field string, v *string) string {
	if !required(c, field, v) {
		return ""
	}
	if *v != apiclient.EnvironmentProd && *v != apiclient.EnvironmentDev {
		c.fail(field, "must be %s or %s", apiclient.EnvironmentProd, apiclient.EnvironmentDev)
	}
	return *v
}

// addons takes [] for a plain Postgres service.
func (c *checker) addons(field string, v *[]string) []string {
	if !required(c, field, v) {
		return nil
	}
	known := []string{apiclient.AddonTimeSeries, apiclient.AddonAI}
	for i, a := range *v {
		switch {
		case !slices.Contains(known, a):
			c.fail(field, "must only hold %s", strings.Join(known, " and "))
			return nil
		case slices.Contains((*v)[:i], a):
			c.fail(field, "must not repeat an addon")
			return nil
		}
	}
	return slices.Clone(*v)
}

// cidr refuses host bits (10.0.0.1/16): they are most often a typo.
func (c *checker) cidr(field string, v *string) string {
	if !required(c, field, v) {
		return ""
	}
	p, err := netip.ParsePrefix(*v)
	switch {
	case err != nil || !p.Addr().Is4():
		c.fail(field, "must be an IPv4 CIDR block such as 10.0.0.0/16")
	case p.Masked() != p || p.String() != *v:
		c.fail(field, "must be in canonical form (%s)", p.Masked())
	}
	return *v
}

// password never quotes the value.
func (c *checker) password(field string, v *string) string {
	if !required(c, field, v) {
		return ""
	}
	switch {
	case *v == "":
		c.fail(field, "must not be empty")
	case len(*v) > maxPasswordBytes:
		c.fail(field, "must be at most %d bytes", maxPasswordBytes)
	}
	return *v
}

// checkPathID refuses slashes and dot segments: the mux unescapes
// segments, so such an id would address another resource upstream.
func checkPathID(name, v string) error {
	switch {
	case strings.TrimSpace(v) == "":
		return invalidf("%s: must not be empty", name)
	case v == "." || v == "..":
		return invalidf("%s: must not be a dot segment", name)
	case strings.ContainsAny(v, "/\\"):
		return invalidf("%s: must not contain a slash", name)
	case len(v) > maxIDLen:
		return invalidf("%s: must be at most %d bytes", name, maxIDLen)
	case !utf8.ValidString(v) || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return invalidf("%s: must be printable text", name)
	}
	return nil
}
