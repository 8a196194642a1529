package poller_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/cloudsim"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/poller"
)

// savedAnswers are the simulator's answers to two successive poll cycles,
// by request URI, replayed in turn so that each cycle sees what changed
// since the last (every simulated service's current usage changes).
type savedAnswers struct {
	rounds [2]map[string][]byte
	round  atomic.Int32
	mu     sync.Mutex // guards rounds while recording
}

// record serves next through the simulator and saves its answers in round.
func (a *savedAnswers) record(next http.Handler, round int) http.Handler {
	a.rounds[round] = map[string][]byte{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		a.mu.Lock()
		a.rounds[round][r.URL.RequestURI()] = rec.Body.Bytes()
		a.mu.Unlock()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

// ServeHTTP replays the answers of the current round.
func (a *savedAnswers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, ok := a.rounds[a.round.Load()][r.URL.RequestURI()]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

// decodeOnce decodes every answer of a round with encoding/json into its
// wire type, and nothing else: the floor of what a cycle must spend.
func decodeOnce(b *testing.B, answers map[string][]byte) {
	for uri, body := range answers {
		var err error
		switch path, _, _ := strings.Cut(uri, "?"); {
		case strings.HasSuffix(path, "/services"):
			var v []apiclient.Service
			err = json.Unmarshal(body, &v)
		case strings.HasSuffix(path, "/vpcs"):
			var v []apiclient.VPC
			err = json.Unmarshal(body, &v)
		case strings.HasSuffix(path, "/peerings"):
			var v []apiclient.Peering
			err = json.Unmarshal(body, &v)
		case strings.HasSuffix(path, "/replicaSets"):
			var v []apiclient.ReplicaSet
			err = json.Unmarshal(body, &v)
		default:
			var v apiclient.AuthInfo
			err = json.Unmarshal(body, &v)
		}
		if err != nil {
			b.Fatalf("%s: %v", uri, err)
		}
	}
}

// cpuTime is the CPU the process used so far, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCycleVsDecode measures the CPU of a real poll cycle (the poller
// and the API client, concurrency 8, against an httptest server replaying
// the simulator's saved answers for a fleet of N services with a replica
// set each and a VPC per 10 services with two peerings) against decoding
// the same answers once with encoding/json, alternated so that both see
// the same load: x_decode is the median of their ratio, the goal <= 2.
// transport_ms is the CPU of fetching the same answers over the same
// loopback HTTP without decoding them (client and server both: they run in
// this process), part of the cycle that no decoding can save.
func BenchmarkCycleVsDecode(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
			benchCycleVsDecode(b, n)
		})
	}
}

func benchCycleVsDecode(b *testing.B, n int) {
	creds := cloudsim.Credential{AccessKey: "bench-access", SecretKey: "bench-secret", APIKey: "bench-api-key", ProjectID: "bench"}
	sim := cloudsim.New(cloudsim.Options{Credentials: []cloudsim.Credential{creds}, Seed: 1})
	sim.LoadFleet("bench", cloudsim.Fleet{Services: n, ReplicaSetsPerService: 1, VPCs: n / 10, PeeringsPerVPC: 2})
	answers := &savedAnswers{}
	var handler atomic.Pointer[http.Handler]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*handler.Load()).ServeHTTP(w, r)
	}))
	defer srv.Close()
	client, err := apiclient.New(apiclient.Config{
		BaseURL: srv.URL + "/v1", ProjectID: "bench",
		AccessKey: apiclient.Secret(creds.AccessKey), SecretKey: apiclient.Secret(creds.SecretKey), APIKey: apiclient.Secret(creds.APIKey),
		RateLimit: 1e6, Burst: 1000,
	})
	if err != nil {
		b.Fatal(err)
	}
	p := poller.New(client, poller.Options{Collect: config.Collect{Concurrency: 8}})
	poll := func() {
		if snap := p.Poll(context.Background()); len(snap.Services) != n {
			b.Fatalf("got %d services", len(snap.Services))
		}
	}
	for round := range 2 {
		h := answers.record(sim, round)
		handler.Store(&h)
		poll()
	}
	var replay http.Handler = answers
	handler.Store(&replay)
	poll() // The poller keeps what it read: start from the last round.

	var cycles, decodes, transports []time.Duration
	var ratios []float64
	i := 0
	for b.Loop() {
		i++
		answers.round.Store(int32(i % 2))
		c0 := cpuTime(b)
		poll()
		c1 := cpuTime(b)
		decodeOnce(b, answers.rounds[i%2])
		c2 := cpuTime(b)
		fetchAll(b, srv.URL, answers.rounds[i%2])
		c3 := cpuTime(b)
		cycles, decodes, transports = append(cycles, c1-c0), append(decodes, c2-c1), append(transports, c3-c2)
		ratios = append(ratios, float64(c1-c0)/float64(c2-c1))
	}
	ms := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2]) / 1e6
	}
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "x_decode")
	b.ReportMetric(ms(cycles), "cycle_cpu_ms")
	b.ReportMetric(ms(decodes), "decode_cpu_ms")
	b.ReportMetric(ms(transports), "transport_cpu_ms")
}

// fetchAll reads every answer over HTTP, 8 at a time as the cycle does, and
// discards it.
func fetchAll(b *testing.B, base string, answers map[string][]byte) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	defer client.CloseIdleConnections()
	uris := make(chan string)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for uri := range uris {
				resp, err := client.Get(base + uri)
				if err != nil {
					b.Error(err)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
		})
	}
	for uri := range answers {
		uris <- uri
	}
	close(uris)
	wg.Wait()
}
