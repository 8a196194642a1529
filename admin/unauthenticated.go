package admin

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Refusals of unauthenticated requests are summed up per client and
// interval: anybody can send them, and a record each would fill the disk,
// after which every valid write fails closed.
const (
	unauthInterval   = time.Minute
	unauthSweep      = 10 * time.Second
	maxUnauthClients = 10000
	unauthOverflow   = "other" // the key of clients beyond maxUnauthClients
)

const eventUnauthenticated = "unauthenticated_summary"

// unauthSummary counts a client's refusals after the first, which has its
// full record.
type unauthSummary struct {
	Time     time.Time      `json:"time"`
	Event    string         `json:"event"`
	Client   string         `json:"client"`
	Count    int            `json:"count"`
	Since    time.Time      `json:"since"`
	Statuses map[string]int `json:"statuses"`
}

type refusals struct {
	since    time.Time
	count    int // after the first
	statuses map[int]int
}

type unauthAudit struct {
	audit *auditor
	now   func() time.Time

	mu      sync.Mutex
	clients map[string]*refusals
}

func newUnauthAudit(a *auditor, now func() time.Time) *unauthAudit {
	return &unauthAudit{audit: a, now: now, clients: map[string]*refusals{}}
}

func (u *unauthAudit) refused(rec *auditRecord) {
	now, key := u.now(), clientKey(rec.RemoteAddr)
	u.mu.Lock()
	c, seen := u.clients[key]
	if !seen && len(u.clients) >= maxUnauthClients {
		key = unauthOverflow
		c, seen = u.clients[key]
	}
	if seen {
		c.count++
		c.statuses[rec.Status]++
	} else {
		u.clients[key] = &refusals{since: now, statuses: map[int]int{}}
	}
	u.mu.Unlock()
	if !seen {
		_ = u.audit.write(eventOutcome, rec) // failures are logged; nothing waits on this record
	}
}

func (u *unauthAudit) sweep(final bool) {
	now := u.now()
	var due []unauthSummary
	u.mu.Lock()
	for key, c := range u.clients {
		if !final && now.Sub(c.since) < unauthInterval {
			continue
		}
		delete(u.clients, key)
		if c.count > 0 {
			s := unauthSummary{Time: now.UTC(), Event: eventUnauthenticated, Client: key, Count: c.count, Since: c.since.UTC(), Statuses: map[string]int{}}
			for status, n := range c.statuses {
				s.Statuses[strconv.Itoa(status)] = n
			}
			due = append(due, s)
		}
	}
	u.mu.Unlock()
	slices.SortFunc(due, func(a, b unauthSummary) int { return a.Since.Compare(b.Since) })
	for _, s := range due {
		u.write(s)
	}
}

func (u *unauthAudit) write(s unauthSummary) {
	u.audit.logger.Info("Admin unauthenticated requests", "client", s.Client, "count", s.Count,
		"since", s.Since, "statuses", s.Statuses)
	line, err := json.Marshal(s)
	if err != nil {
		u.audit.logger.Error("Cannot encode an audit record", "event", s.Event, "err", err)
		return
	}
	_ = u.audit.append(line, "event", s.Event, "client", s.Client) // logged
}

func (u *unauthAudit) run(ctx context.Context) {
	tick := time.NewTicker(unauthSweep)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			u.sweep(true)
			return
		case <-tick.C:
			u.sweep(false)
		}
	}
}
