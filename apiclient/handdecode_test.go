package apiclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The hand decoders of the usage series and log answers must decode as the
// reflective path they replaced: equal results, or both fail.

var diffRedactor = newRedactor("AKIAEXAMPLE42", "s3cr3t/Key+with=Symbols", "bearer-api-key-0123456789")

// referenceSeries is the reflective path: json.Unmarshal, then sanitize.
func referenceSeries(data []byte) ([]Series, int, error) {
	var out []Series
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, 0, err
	}
	cuts := 0
	sanitize(&out, diffRedactor, func() { cuts++ })
	return out, cuts, nil
}

func checkSeriesDecode(t *testing.T, data []byte) {
	t.Helper()
	want, wantCuts, wantErr := referenceSeries(data)
	// The whole path of a call: read whole, checked, decoded by hand.
	var streamed []Series
	streamedCuts := 0
	err := decodeStream(OpGetServiceMetricsSeries, bytes.NewReader(data), &streamed, func(FieldError) {}, diffRedactor,
		func() ([]byte, bool) { return nil, false }, streamOptions{maxValue: 1 << 20, cut: func() { streamedCuts++ }})
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%q: decodeStream error %v, encoding/json error %v", data, err, wantErr)
	}
	if err == nil && (!reflect.DeepEqual(streamed, want) || streamedCuts != wantCuts) {
		t.Fatalf("%q: decodeStream\n%#v (%d cut)\nencoding/json\n%#v (%d cut)", data, streamed, streamedCuts, want, wantCuts)
	}
	if !json.Valid(data) {
		return // the hand decoder is given checked JSON only
	}
	var got []Series
	cuts := 0
	if !decodeSeriesList(data, &got, diffRedactor, func() { cuts++ }) {
		if wantErr == nil {
			t.Fatalf("%q: the hand decoder refused what encoding/json decodes as %+v", data, want)
		}
		return
	}
	if wantErr != nil {
		t.Fatalf("%q: the hand decoder took what encoding/json refuses (%v): %+v", data, wantErr, got)
	}
	if !reflect.DeepEqual(got, want) || cuts != wantCuts {
		t.Fatalf("%q: hand decoder\n%#v (%d cut)\nencoding/json\n%#v (%d cut)", data, got, cuts, want, wantCuts)
	}
}

// referenceLogPage is LogPage.decodeFrom as it was, with each entry
// decoded through LogEntry.UnmarshalJSON.
func referenceLogPage(data []byte) (LogPage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	p, err := referencePageFrom(dec)
	if err != nil {
		return p, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return p, fmt.Errorf("data after the page")
	}
	p.normalize()
	return p, nil
}

func referencePageFrom(dec *json.Decoder) (LogPage, error) {
	var p LogPage
	reset := func() {}
	tok, err := dec.Token()
	if err != nil || tok == nil {
		return p, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return p, fmt.Errorf("not an object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return p, err
		}
		key, _ := tok.(string)
		switch key {
		case "entries":
			p.Entries, err = decodeList[LogEntry](dec, reset)
		case "logs":
			p.Logs, err = decodeList[string](dec, reset)
		case "last_cursor":
			err = dec.Decode(&p.LastCursor)
		case "lastCursor":
			err = dec.Decode(&p.LastCursorDeprecated)
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return p, err
		}
	}
	_, err = dec.Token()
	return p, err
}

func checkLogsDecode(t *testing.T, data []byte) {
	t.Helper()
	want, wantErr := referenceLogPage(data)
	var got LogPage
	err := decodeBody(OpGetServiceLogs, data, &got, func(FieldError) {})
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%q: hand decoder error %v, encoding/json error %v", data, err, wantErr)
	}
	if err != nil {
		return
	}
	got.normalize()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: hand decoder\n%#v\nencoding/json\n%#v", data, got, want)
	}
	// Each entry alone, as the value that LogEntry.UnmarshalJSON is given.
	var entries []json.RawMessage
	if json.Unmarshal(data, &struct {
		Entries *[]json.RawMessage `json:"entries"`
	}{&entries}) == nil {
		for _, raw := range entries {
			var e LogEntry
			_ = json.Unmarshal(raw, &e)
			s := validJSON{b: raw}
			if got := s.entry(); got != e {
				t.Fatalf("entry %q: hand decoder %+v, encoding/json %+v", raw, got, e)
			}
		}
	}
}

func usageSeeds(t testing.TB) [][]byte {
	seeds := [][]byte{
		[]byte(`null`), []byte(`[]`), []byte(`[null]`), []byte(`{}`), []byte(`"x"`), []byte(`[1]`), []byte(`[[]]`), []byte(`[true]`),
		[]byte(`[{"labels":null,"data":null}]`),
		[]byte(`[{"Labels":{"ROLE":"primary"},"DATA":[{"TIME":"2026-01-01T00:00:00Z","Value":"1"}]}]`),
		[]byte(`[{"labels":{"a":"1","a":null,"b":2,"b":"x","c":{"d":1},"e":[1],"f":true,"g":-1.5e3}}]`),
		[]byte(`[{"labels":{"k\u0041":"v\n\u00e9\ud800","\u006cabels":1},"data":[]}]`),
		[]byte(`[{"\u006cabels":{"x":"y"},"ſabels":{},"labelſ":{"z":"1"},"data":[{"time":"2026-01-01 00:00:00","value":" 7 "}]}]`),
		[]byte(`[{"data":[{"time":"2026-02-30T00:00:00Z","value":"NaN"},{"time":"2026-01-01T24:00:00Z","value":"inf"},{"time":"2026-01-01T00:00:60Z","value":1e999},{"time":"\u0032026-01-01T00:00:00+02:00","value":"0x1p-2"}]}]`),
		[]byte(`[{"data":[1,"x",null,[],{"time":null,"value":null},{"time":5,"value":{"a":1}},{"time":"","value":""},{"time":" 2026-01-01T00:00:00.5Z ","value":"1_0"}]}]`),
		[]byte(`[{"data":[{"value":1,"value":"x"},{"time":"2026-01-01T00:00:00Z","time":"bad"}],"data":[{"value":2}]}]`),
		[]byte(`[{"data":{}}]`), []byte(`[{"data":"x"}]`), []byte(`[{"data":1}]`), []byte(`[{"labels":"x","data":true}]`),
		[]byte(`[{"labels":{"role":"AKIAEXAMPLE42 s3cr3t/Key+with=Symbols","AKIAEXAMPLE42":"x","ordinal":"` + strings.Repeat("é", 700) + `"}}]`),
		[]byte(`[{"labels":{"` + strings.Repeat("k", 1100) + `":"` + strings.Repeat("v", 1100) + `"}}]`),
		[]byte("[{\"labels\":{\"a\":\"\xff\xfe\"},\"data\":[{\"time\":\"2026-01-01T00:00:00\xffZ\",\"value\":\"\xff1\"}]}]"),
		[]byte(` [ { "labels" : { "role" : "primary" } , "data" : [ { "time" : "2026-01-01T00:00:00Z" , "value" : 1 } ] } ] `),
	}
	for _, name := range []string{"series.json", "series_variants.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", "revision2026", name))
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	return seeds
}

func logsSeeds(t testing.TB) [][]byte {
	seeds := [][]byte{
		[]byte(`null`), []byte(`{}`), []byte(`[]`), []byte(`{"entries":null}`), []byte(`{"entries":[null,1,"x",[],{}]}`),
		[]byte(`{"entries":[{"Timestamp":"2026-01-01T00:00:00Z","MESSAGE":"m","ſeverity":"LOG","message":1}],"last_cursor":"c","last_cursor":null}`),
		[]byte(`{"entries":[{"timestamp":null,"message":null,"severity":{"a":1}},{"timestamp":5,"message":"\u00e9\ud800x","severity":"\u004cOG"}]}`),
		[]byte(`{"entries":[{"timestamp":"2026-01-01T00:00:00Z","timestamp":"bad","message":"a","message":"b"}],"entries":[]}`),
		[]byte(`{"logs":["2026-01-02 03:04:05 UTC [1] FATAL:  x",null],"lastCursor":"c","Entries":[{"message":"ignored"}]}`),
		[]byte(`{"logs":[1]}`), []byte(`{"entries":{}}`), []byte(`{"last_cursor":1}`), []byte(`{"entries":[]} x`),
		[]byte("{\"entries\":[{\"message\":\"\xff\",\"severity\":\"LOG\"}]}"),
	}
	for _, name := range []string{"logs.json", "logs_deprecated.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", "revision2026", name))
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	return seeds
}

// mutate changes, inserts or deletes a few bytes, often JSON's own.
func mutate(r *rand.Rand, data []byte) []byte {
	out := bytes.Clone(data)
	const alphabet = `{}[]":,\ nul0-1.e5"x` + "\xff"
	for range 1 + r.IntN(3) {
		if len(out) == 0 {
			return out
		}
		i := r.IntN(len(out))
		c := alphabet[r.IntN(len(alphabet))]
		switch r.IntN(3) {
		case 0:
			out[i] = c
		case 1:
			out = append(out[:i], append([]byte{c}, out[i:]...)...)
		default:
			out = append(out[:i], out[i+1:]...)
		}
	}
	return out
}

// TestUsageDecodeMatchesReflection: every seed and 20,000 mutations of them.
func TestUsageDecodeMatchesReflection(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	seeds := usageSeeds(t)
	for _, seed := range seeds {
		checkSeriesDecode(t, seed)
	}
	for range 20000 {
		checkSeriesDecode(t, mutate(r, seeds[r.IntN(len(seeds))]))
	}
}

// TestLogsDecodeMatchesReflection: every seed and 20,000 mutations of them.
func TestLogsDecodeMatchesReflection(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	seeds := logsSeeds(t)
	for _, seed := range seeds {
		checkLogsDecode(t, seed)
	}
	for range 20000 {
		checkLogsDecode(t, mutate(r, seeds[r.IntN(len(seeds))]))
	}
}

func FuzzUsageDecode(f *testing.F) {
	for _, seed := range usageSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(checkSeriesDecode)
}

func FuzzLogsDecode(f *testing.F) {
	for _, seed := range logsSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(checkLogsDecode)
}

// TestSeriesRequestMarshalsAsJSON: the hand-written request body is the
// bytes json.Marshal writes.
func TestSeriesRequestMarshalsAsJSON(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 600, time.FixedZone("x", 3600))
	texts := []string{"", "x_database_qps", `a"b\c`, "<&>", "é\u2028\x00\x1f\x7f", "\xff", "tab\there"}
	for i, name := range texts {
		for _, req := range []SeriesRequest{
			{Name: name},
			{Name: name, From: Time{at}, To: Time{at.Add(time.Minute)}, BucketSeconds: MinBucketSeconds},
			{Name: name, BucketSeconds: -1, Fn: name, Filters: []SeriesFilter{}},
			{Name: "n", From: Time{time.Unix(0, 0)}, Filters: []SeriesFilter{{Key: name, Value: texts[(i+1)%len(texts)]}, {Key: LabelRole, Value: "primary"}}},
		} {
			want, err := json.Marshal(req)
			if err != nil {
				t.Fatal(err)
			}
			if got := req.appendJSON(nil); !bytes.Equal(got, want) {
				t.Errorf("%+v: appendJSON wrote\n%s\njson.Marshal\n%s", req, got, want)
			}
		}
	}
}
