package cloudsim

import (
	"cmp"
	"encoding/json"
	"errors"
	"hash/fnv"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// Credential is one set of credentials the simulator accepts.
type Credential struct {
	// AccessKey and SecretKey are HTTP Basic for the service API.
	AccessKey, SecretKey string
	// APIKey is the Bearer for GET /v1/auth/info.
	APIKey string
	// ProjectID is the only project it may address; "" means any.
	ProjectID string
	Name      string
	ReadOnly  bool
	// Projects of a user's credential (revision 2026): GET /projects lists them.
	Projects []string
}

// API revisions the simulator serves (docs/api.md).
const (
	Revision2024 = "2024"
	// Revision2026 is what real accounts answer in today, the default.
	Revision2026 = "2026"
)

// Timings are the durations of the simulated asynchronous operations; zero
// completes at once.
type Timings struct {
	// Provision is each creation step.
	Provision time.Duration
	// Configure is resize, setHA, attach and detach.
	Configure  time.Duration
	Delete     time.Duration
	ReplicaSet time.Duration
	Peering    time.Duration
}

// Options configure a Sim.
type Options struct {
	// Credentials: with none, every API request is answered 401.
	Credentials []Credential
	Timings     Timings
	Seed        int64
	// Clock nil means time.Now; tests drive state machines with a fake clock.
	Clock func() time.Time
	// ClockSkew sets the simulated provider's clock this far from Clock:
	// every time it keeps and shows (log entries, usage buckets, the Date
	// header of its answers, which it then always sends) is off by as much.
	ClockSkew time.Duration
	Logger    *slog.Logger
	// Revision is Revision2026 (also for "") or Revision2024.
	Revision string
}

// Sim is a simulated cloud API, an http.Handler safe for concurrent use.
type Sim struct {
	clock func() time.Time
	// dated: the answers' Date header is the clock's (a skewed clock's).
	dated   bool
	logger  *slog.Logger
	timings Timings
	seed    int64
	rev     string
	// creds is replaced whole, so a request keeps the one it authenticated with.
	creds        atomic.Pointer[[]Credential]
	credsCreated time.Time
	mux          *http.ServeMux

	mu       sync.Mutex
	rng      *rand.Rand
	faultRNG *rand.Rand
	ids      map[string]struct{}
	projects map[string]*project
	faults   []*activeFault
	counts   map[string]int
	// conns tells a kept-alive connection (Fault.OnReuse); bounded by maxConns.
	conns map[string]struct{}
}

// project's order slices keep creation order without sorting on every list.
type project struct {
	id           string
	services     map[string]*service
	serviceOrder []string
	vpcs         map[string]*vpc
	vpcOrder     []string
}

// New returns a simulator with no resources.
func New(opts Options) *Sim {
	clock := opts.Clock
	if clock == nil {
		clock = time.Now
	}
	if skew := opts.ClockSkew; skew != 0 {
		base := clock
		clock = func() time.Time { return base().Add(skew) }
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Sim{
		clock:        clock,
		dated:        opts.ClockSkew != 0,
		logger:       logger,
		timings:      opts.Timings,
		seed:         opts.Seed,
		rev:          cmp.Or(opts.Revision, Revision2026),
		credsCreated: clock().UTC().Add(-90 * 24 * time.Hour).Truncate(time.Millisecond).Add(123 * time.Millisecond),
		mux:          http.NewServeMux(),
		rng:          newRand(opts.Seed, "api"),
		faultRNG:     newRand(opts.Seed, "faults"),
		ids:          map[string]struct{}{},
		projects:     map[string]*project{},
		counts:       map[string]int{},
		conns:        map[string]struct{}{},
	}
	creds := slices.Clone(opts.Credentials)
	s.creds.Store(&creds)
	for _, rt := range s.apiRoutes() {
		s.handleOperation(rt)
	}
	if s.rev != Revision2024 {
		for _, routes := range revision2026Routes {
			for _, rt := range routes(s) {
				s.handleOperation(rt)
			}
		}
	}
	s.registerControls()
	s.mux.HandleFunc("/", s.notFound)
	return s
}

// revision2026Routes holds the routes of revision 2026's operations, reads and writes,
// which each resource's file registers from its init beside their handlers.
var revision2026Routes []func(*Sim) []route

// newRand gives each purpose its own source, so scenarios, faults and calls
// do not shift one another's ids.
func newRand(seed int64, purpose string) *rand.Rand {
	h := fnv.New64a()
	_, _ = io.WriteString(h, purpose)
	return rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
}

// ServeHTTP serves the API under /v1 and the controls under /_sim.
func (s *Sim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.dated {
		w.Header().Set("Date", s.clock().UTC().Format(http.TimeFormat))
	}
	s.mux.ServeHTTP(w, r)
}

type authKind int

const (
	authBasic authKind = iota
	authBearer
)

type call struct {
	r       *http.Request
	body    []byte
	cred    *Credential
	project *project
	now     time.Time
}

// handlerFunc returns the status and a JSON body (nil for none), or an *apiError.
type handlerFunc func(c *call) (int, any, error)

type route struct {
	pattern string
	op      string
	auth    authKind
	handler handlerFunc
}

// apiRoutes are the reads; each resource's file routes its writes.
func (s *Sim) apiRoutes() []route {
	const (
		svc  = "/v1/projects/{project_id}/services"
		one  = svc + "/{service_id}"
		rs   = one + "/replicaSets"
		vpcs = "/v1/projects/{project_id}/vpcs"
		vpc  = vpcs + "/{vpc_id}"
	)
	reads := []route{
		{"GET /v1/auth/info", apiclient.OpGetAuthInfo, authBearer, s.getAuthInfo},

		{"GET " + svc, apiclient.OpListServices, authBasic, s.listServices},
		{"GET " + one, apiclient.OpGetService, authBasic, s.getService},

		{"GET " + rs, apiclient.OpListReplicaSets, authBasic, s.listReplicaSets},

		{"GET " + vpcs, apiclient.OpListVPCs, authBasic, s.listVPCs},
		{"GET " + vpc, apiclient.OpGetVPC, authBasic, s.getVPC},

		{"GET " + vpc + "/peerings", apiclient.OpListPeerings, authBasic, s.listPeerings},
		{"GET " + vpc + "/peerings/{peering_id}", apiclient.OpGetPeering, authBasic, s.getPeering},
	}
	return slices.Concat(reads, s.serviceWrites(), s.replicaSetWrites(), s.vpcWrites(), s.peeringWrites())
}

// Path templates of the write routes.
const (
	servicesRoute    = "/v1/projects/{project_id}/services"
	serviceRoute     = servicesRoute + "/{service_id}"
	replicaSetsRoute = serviceRoute + "/replicaSets"
	replicaSetRoute  = replicaSetsRoute + "/{replica_set_id}"
	vpcsRoute        = "/v1/projects/{project_id}/vpcs"
	vpcRoute         = vpcsRoute + "/{vpc_id}"
	peeringsRoute    = vpcRoute + "/peerings"
)

// response is bytes, so that a fault can cut it.
type response struct {
	status int
	body   []byte
	header http.Header
}

func (s *Sim) handleOperation(rt route) {
	s.mux.HandleFunc(rt.pattern, func(w http.ResponseWriter, r *http.Request) {
		reused := s.count(rt.op, r.RemoteAddr)
		serve := func() response { return s.serveOperation(r, rt) }
		if s.applyFaults(w, r, rt.op, reused, serve) {
			return
		}
		resp := serve()
		writeResponse(w, resp)
		s.logger.Debug("Request served", "op", rt.op, "method", r.Method, "path", r.URL.Path, "status", resp.status)
	})
}

// The spec sets no limit; real APIs do.
const maxBodyBytes = 1 << 20

func readBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return nil, invalidf("request body could not be read")
	}
	if len(body) > maxBodyBytes {
		return nil, invalidf("request body is larger than 1 MiB")
	}
	return body, nil
}

func (s *Sim) serveOperation(r *http.Request, rt route) response {
	cred, err := s.authenticate(r, rt.auth)
	if err != nil {
		return errorResponse(err)
	}
	projectID := r.PathValue("project_id")
	if err := authorize(cred, projectID, r.Method != http.MethodGet && !readPOSTs[rt.op]); err != nil {
		return errorResponse(err)
	}
	var body []byte
	if r.Method == http.MethodPost {
		if body, err = readBody(r); err != nil {
			return errorResponse(err)
		}
	}

	s.mu.Lock()
	c := &call{r: r, body: body, cred: cred, now: s.clock()}
	if projectID != "" {
		c.project = s.project(projectID)
	}
	status, out, err := rt.handler(c)
	s.mu.Unlock()

	if err != nil {
		var ae *apiError
		if s.rev == Revision2024 && errors.As(err, &ae) {
			ae.details = nil // the first revision sends code and message only
		}
		return errorResponse(err)
	}
	return jsonResponse(status, out)
}

// project: a valid credential always sees its project, if only as empty lists.
func (s *Sim) project(id string) *project {
	p := s.projects[id]
	if p == nil {
		p = &project{id: id, services: map[string]*service{}, vpcs: map[string]*vpc{}}
		s.projects[id] = p
	}
	return p
}

// notFound answers 405 for a path known under another method.
func (s *Sim) notFound(w http.ResponseWriter, r *http.Request) {
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := &http.Request{Method: m, URL: r.URL, Host: r.Host, Header: http.Header{}}
		if _, pattern := s.mux.Handler(probe); pattern != "" && pattern != "/" {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) > 0 {
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		writeResponse(w, errorResponse(&apiError{status: http.StatusMethodNotAllowed, code: "METHOD_NOT_ALLOWED",
			message: "method " + r.Method + " is not allowed on this path"}))
		return
	}
	writeResponse(w, errorResponse(&apiError{status: http.StatusNotFound, code: "NOT_FOUND", message: "no such path"}))
}

type apiError struct {
	status  int
	code    string
	message string
	// details: revision 2026 only.
	details map[string]any
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

func jsonResponse(status int, body any) response {
	if body == nil {
		return response{status: status}
	}
	b, err := json.Marshal(body)
	if err != nil {
		return errorResponse(err)
	}
	return response{status: status, body: b, header: http.Header{"Content-Type": {"application/json"}}}
}

func errorResponse(err error) response {
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = &apiError{status: http.StatusInternalServerError, code: "INTERNAL_ERROR", message: "internal error"}
	}
	eb := apiclient.ErrorBody{Code: ae.code, Message: ae.message}
	if ae.details != nil {
		eb.Details, _ = json.Marshal(ae.details)
	}
	resp := jsonResponse(ae.status, eb)
	if ae.code == "UNAUTHORIZED" {
		resp.header.Set("WWW-Authenticate", `Basic realm="clouddb"`)
	}
	return resp
}

func writeResponse(w http.ResponseWriter, resp response) {
	for k, v := range resp.header {
		w.Header()[k] = v
	}
	if resp.body != nil {
		w.Header().Set("Content-Length", strconv.Itoa(len(resp.body)))
	}
	w.WriteHeader(resp.status)
	_, _ = w.Write(resp.body)
}

// maxConns: past it, a client's next request looks like a new connection's.
const maxConns = 4096

// count reports whether the connection carried a request before.
func (s *Sim) count(op, remote string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts[op]++
	_, reused := s.conns[remote]
	if !reused {
		if len(s.conns) >= maxConns {
			clear(s.conns)
		}
		s.conns[remote] = struct{}{}
	}
	return reused
}

// RequestCount returns the requests that reached the operation's route since
// start or reset, whatever their answer.
func (s *Sim) RequestCount(operation string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[operation]
}

// RequestCounts returns a copy of all non-zero request counts by operation.
func (s *Sim) RequestCounts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.counts))
	for op, n := range s.counts {
		out[op] = n
	}
	return out
}

// ResetRequestCounts sets every request count to zero.
func (s *Sim) ResetRequestCounts() {
	s.mu.Lock()
	s.counts = map[string]int{}
	s.mu.Unlock()
}

const idAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// newID is unique across the simulator. The caller holds s.mu.
func (s *Sim) newID(rng *rand.Rand) string {
	for {
		var b [10]byte
		for i := range b {
			b[i] = idAlphabet[rng.IntN(len(idAlphabet))]
		}
		id := string(b[:])
		if _, dup := s.ids[id]; !dup {
			s.ids[id] = struct{}{}
			return id
		}
	}
}

// newNumericID: as revision 2026 gives VPCs and peerings. The caller holds s.mu.
func (s *Sim) newNumericID(rng *rand.Rand) string {
	for {
		id := strconv.FormatInt(1_000_000_000+rng.Int64N(9_000_000_000), 10)
		if _, dup := s.ids[id]; !dup {
			s.ids[id] = struct{}{}
			return id
		}
	}
}

func (s *Sim) newNetworkID(rng *rand.Rand) string {
	if s.rev == Revision2024 {
		return s.newID(rng)
	}
	return s.newNumericID(rng)
}

func newPort(rng *rand.Rand) int {
	return 30000 + rng.IntN(10000)
}

func host(id, projectID string) string {
	return id + "." + projectID + ".sim.clouddb.invalid"
}

const poolerPort = 6432

func endpoint(id, projectID string, port int) *apiclient.Endpoint {
	return &apiclient.Endpoint{Host: host(id, projectID), Port: apiclient.Int(port)}
}

func pooler(id, projectID string) *apiclient.ConnectionPooler {
	return &apiclient.ConnectionPooler{Endpoint: endpoint(id, projectID, poolerPort)}
}

func message(text string) apiclient.Message { return apiclient.Message{Message: text} }
