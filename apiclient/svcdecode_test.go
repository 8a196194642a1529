package apiclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The services list is split and decoded by hand; the reference is the
// reflective path it replaced, which a list of refService still takes:
// same layout and tags, but not []Service.

type refService Service

func (s *refService) dropField(e FieldError) { s.Dropped = append(s.Dropped, e) }
func (*refService) idField() string          { return "service_id" }

// decodeRun is what one decoding of a list gives: its services (or each's),
// its error, the records dropped and the texts cut.
type decodeRun struct {
	services []Service
	err      string
	dropped  []FieldError
	cuts     int
	nilList  bool
}

// chunkReader answers at most n bytes a read, so that elements straddle reads.
type chunkReader struct {
	r io.Reader
	n int
}

func (c chunkReader) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

func runServicesDecode(data []byte, opts streamOptions, lenient, reference bool, chunk int) decodeRun {
	var run decodeRun
	var drop func(FieldError)
	if lenient {
		drop = func(e FieldError) { run.dropped = append(run.dropped, e) }
	}
	opts.cut = func() { run.cuts++ }
	var r io.Reader = bytes.NewReader(data)
	if chunk < 0 { // the connection fails halfway
		r = io.MultiReader(bytes.NewReader(data[:len(data)/2]), errorReader{errors.New("connection reset")})
	} else if chunk > 0 {
		r = chunkReader{r, chunk}
	}
	prefix := func() ([]byte, bool) { return data[:min(len(data), 64)], len(data) > 64 }
	var err error
	if reference {
		var out []refService
		err = decodeStream(OpListServices, r, &out, drop, diffRedactor, prefix, opts)
		if out != nil {
			run.services = make([]Service, len(out))
		}
		for i, s := range out {
			run.services[i] = Service(s)
		}
		run.nilList = out == nil
	} else {
		var out []Service
		err = decodeStream(OpListServices, r, &out, drop, diffRedactor, prefix, opts)
		run.services, run.nilList = out, out == nil
	}
	if err != nil {
		run.err = strings.ReplaceAll(err.Error(), "refService", "Service") // the reference's type, in type errors
		if errors.Is(err, ErrValueTooLarge) || errors.Is(err, ErrTooManyResources) || errors.Is(err, ErrMostlyInvalid) {
			run.err += " (sentinel)"
		}
	}
	return run
}

var servicesDecodeOptions = []streamOptions{{}, {maxValue: 300}, {maxItems: 2}, {maxValue: 1 << 20, maxItems: 3}}

// checkServicesDecode compares both paths on data under several bounds, lenient or not, read whole or in pieces.
func checkServicesDecode(t testing.TB, data []byte) {
	t.Helper()
	for _, opts := range servicesDecodeOptions {
		for _, lenient := range []bool{true, false} {
			for _, chunk := range []int{0, 1 + len(data)%61, -1} {
				want := runServicesDecode(data, opts, lenient, true, chunk)
				got := runServicesDecode(data, opts, lenient, false, chunk)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%q (bounds %+v, lenient %v, read by %d): split\n%#v\nreflection\n%#v", data, opts, lenient, chunk, got, want)
				}
			}
		}
	}
}

// checkServicesEach compares the services handed to each, one by one.
func checkServicesEach(t testing.TB, data []byte) {
	t.Helper()
	var got, want []Service
	opts := streamOptions{each: func(e any) {
		switch e := e.(type) {
		case *Service:
			got = append(got, *e)
		case *refService:
			want = append(want, Service(*e))
		}
	}}
	g := runServicesDecode(data, opts, true, false, 0)
	w := runServicesDecode(data, opts, true, true, 0)
	if g.err != w.err || !reflect.DeepEqual(got, want) || !reflect.DeepEqual(g.dropped, w.dropped) {
		t.Fatalf("%q: each: split %v %#v\nreflection %v %#v", data, g.err, got, w.err, want)
	}
}

func servicesSeeds(t testing.TB) [][]byte {
	long := strings.Repeat("é", 600)
	seeds := [][]byte{
		[]byte(`null`), []byte(`[]`), []byte(` [ ] `), []byte(`[null]`), []byte(`[{}]`), []byte(`[1]`), []byte(`["x",{}]`), []byte(`{}`),
		[]byte(`[{"service_id":"a"},{"service_id":"b"},{"service_id":"c"},{"service_id":"d"}]`),
		[]byte(`[{"service_id":"a"} , {"service_id":"b"}]x`), []byte(`[{"service_id":"a"},]`), []byte(`[{"service_id":"a"}{}]`),
		[]byte(`[{"service_id":"a"}`), []byte(`[{"service_id":"a"},`), []byte(`[{"service_id":"a"}]]`),
		[]byte(`[{"service_id":"a","created":null,"paused":null,"resources":null,"metadata":null,"endpoint":null,"connection_pooler":null,"forked_from":null,"metrics":null,"ha_replicas":null,"vpc_endpoint":null,"vpcEndpoint":null,"read_replica_sets":null,"name":null}]`),
		[]byte(`[{"service_id":"a","resources":[],"read_replica_sets":[],"metadata":{},"endpoint":{},"connection_pooler":{},"forked_from":{},"metrics":{},"ha_replicas":{},"vpc_endpoint":{}}]`),
		[]byte(`[{"service_id":"a","resources":[null,{"id":"r","spec":null},{"id":"q","spec":{"cpu_millis":"1000","memory_gbs":" 4 ","volume_type":"gp3"}}]}]`),
		[]byte(`[{"service_id":"a","resources":[{"spec":{"cpu_millis":1e3,"memory_gbs":-2.0}},{"spec":{"cpu_millis":99999999999999999999,"memory_gbs":"x"}}]}]`),
		[]byte(`[{"service_id":"a","endpoint":{"host":"h","port":"5432"},"vpc_endpoint":{"port":1.5},"connection_pooler":{"endpoint":{"port":null}}}]`),
		[]byte(`[{"service_id":"a","metrics":{"memory_mb":123456789012345678,"storage_mb":-1234567890123456789,"milli_cpu":"9223372036854775807"}}]`),
		[]byte(`[{"service_id":"a","ha_replicas":{"replica_count":"","sync_replica_count":null}},{"service_id":"b","ha_replicas":{"replica_count":true}}]`),
		[]byte(`[{"service_id":"a","created":"2026-01-02 03:04:05","paused":true},{"service_id":"b","created":" 2026-01-02T03:04:05.5+02:00 ","paused":"no"}]`),
		[]byte(`[{"service_id":"a","created":""},{"service_id":"b","created":"yesterday"},{"service_id":"c","created":5},{"service_id":"d","created":"2026-02-30T00:00:00Z"}]`),
		[]byte(`[{"service_id":"a","created":"2026-01-02T03:04:0\u0035Z","name":"tab\there \"q\" \u00e9 \ud800 / \/"}]`),
		[]byte("[{\"service_id\":\"a\",\"name\":\"\xff\xfe bad\",\"status\":\"READY\xff\",\"created\":\"2026-01-02T03:04:05Z\xff\"}]"),
		[]byte(`[{"SERVICE_ID":"a"},{"service_id":"b","Name":"n"},{"service_id":"c","ſtatus":"READY"},{"\u0073ervice_id":"d"},{"service_id":"e","vpcendpoint":{}}]`),
		[]byte(`[{"service_id":"a","service_id":"b"},{"service_id":"c","metadata":{"environment":"PROD"},"metadata":{}},{"service_id":"d","resources":[{"id":"x","id":"y"}]}]`),
		[]byte(`[{"service_id":"a","unknown":{"deep":[1,[2,{"x":null}]],"s":"}]"},"other":[],"n":-0.5e-3,"t":true,"f":false}]`),
		[]byte(`[{"service_id":1},{"service_id":null},{"service_id":"ok","name":7},{"service_id":"ok2","resources":{}},{"service_id":"ok3","resources":[1]}]`),
		[]byte(`[{"service_id":"s","initial_password":"AKIAEXAMPLE42","name":"key AKIAEXAMPLE42 and s3cr3t/Key+with=Symbols","status":"` + long + `"}]`),
		[]byte(`[{"service_id":"bearer-api-key-0123456789","read_replica_sets":[{"id":"rs","name":"` + long + `","status":"active","nodes":"2","cpu_millis":1000,"memory_gbs":null,"endpoint":{"host":"AKIAEXAMPLE42"},"connection_pooler":{"endpoint":null},"metadata":{"environment":"DEV"}},null,{"id":"rs2","nodes":"many"}]}]`),
		[]byte(`[{"service_id":"a","forked_from":{"project_id":"p","service_id":"s","is_standby":true}},{"service_id":"b","forked_from":{"is_standby":"yes"}},{"service_id":"c","forked_from":{"is_standby":null}}]`),
		[]byte(`[{"service_id":"a","name":"` + strings.Repeat("n", 400) + `"},{"service_id":"b"}]`),
		[]byte(` [ {"service_id" : "a" ,"status":"READY" } ,` + "\n\t\r" + `{ "service_id":"b"}  ] ` + "\n"),
		[]byte(`[{"service_id":"a","x":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]},{"service_id":"b"}]`),
		[]byte("[{\"service_id\":\"a\",\"x\":\"\x01\"}]"), []byte("[{\"service_id\":\"a\",\"name\":\"tab\there\"}]"), []byte(`[{"service_id":"a","x":"\q"}]`), []byte(`[{"service_id":"a","x":01}]`), []byte(`[{"service_id":"a","x":tru}]`),
	}
	for _, name := range []string{"revision2024/services.json", "revision2026/services.json", "revision2026/services_variants.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	return seeds
}

// checkServicesMutations checks every seed and n mutations of them.
func checkServicesMutations(t testing.TB, seeds [][]byte, n int, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 6))
	for _, s := range seeds {
		checkServicesDecode(t, s)
		checkServicesEach(t, s)
	}
	for range n {
		checkServicesDecode(t, mutate(r, seeds[r.IntN(len(seeds))]))
	}
}

// TestServicesDecodeMatchesReflection: hand-written cases, recorded answers
// of both revisions and 3,000 mutations of them (the simulator's fleets:
// TestServicesDecodeMatchesReflectionOnSim).
func TestServicesDecodeMatchesReflection(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 1000
	}
	checkServicesMutations(t, servicesSeeds(t), n, 5)
}

func FuzzServiceDecode(f *testing.F) {
	for _, seed := range servicesSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkServicesDecode(t, data) })
}

// TestSkipValueIsJSONValid: the split's check agrees with json.Valid on
// every seed, mutation and prefix of one (a prefix of valid JSON is short).
func TestSkipValueIsJSONValid(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	seeds := servicesSeeds(t)
	for range 20000 {
		data := mutate(r, seeds[r.IntN(len(seeds))])
		n, st := skipValue(append(bytes.Clone(data), ' '))
		valid := st == valDone && len(bytes.TrimSpace(data[min(n, len(data)):])) == 0
		if json.Valid(data) != valid && (st != valBad || !deep(data)) {
			t.Fatalf("%q: skipValue %d at %d, json.Valid %v", data, st, n, json.Valid(data))
		}
	}
}

// deep tells data that may nest deeper than the split takes, which it leaves to json.Decoder.
func deep(data []byte) bool {
	return bytes.Count(data, []byte("["))+bytes.Count(data, []byte("{")) > maxSkipDepth
}

// checkHandTakesAll fails unless the hand decoder takes every element of
// data: a recorded answer that fell back to reflection would pass the
// comparison and lose the gain unseen.
func checkHandTakesAll(t testing.TB, data []byte) {
	t.Helper()
	var elems []json.RawMessage
	if err := json.Unmarshal(data, &elems); err != nil {
		t.Fatal(err)
	}
	for _, e := range elems {
		s := validJSON{b: e}
		if !s.service(new(Service)) {
			t.Errorf("the hand decoder leaves %s to reflection", e)
		}
	}
}

func TestServicesDecodedByHand(t *testing.T) {
	for _, name := range []string{"revision2024/services.json", "revision2026/services.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		checkHandTakesAll(t, data)
	}
}

// TestServiceTextsDecodedByHand: every text field of Service, a field
// added later included, is decoded and sanitized by hand at its place.
func TestServiceTextsDecodedByHand(t *testing.T) {
	ty := reflect.TypeFor[Service]()
	n := 0
	for i := range ty.NumField() {
		f := ty.Field(i)
		name := jsonName(f)
		if name == "" || f.Type.Kind() != reflect.String {
			continue
		}
		n++
		var v Service
		s := validJSON{b: []byte(`{"` + name + `":"text of ` + name + `"}`)}
		if !s.service(&v) {
			t.Errorf("%s: left to reflection", name)
			continue
		}
		if got := reflect.ValueOf(v).Field(i).String(); got != "text of "+name {
			t.Errorf("%s: decoded %q", name, got)
		}
	}
	if n < 7 {
		t.Fatalf("%d text fields found", n)
	}
}
