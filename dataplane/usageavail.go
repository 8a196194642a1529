package dataplane

import "time"

// availability is 24 bytes: a pointer to a list the services share (see
// match), and when it was read after the reader's base, the time.Time's
// monotonic reading kept.
type availability struct {
	// names holds the API's name of each selected suffix, by index; "" where the service has none.
	names *[]string
	at    time.Duration
	known bool
}

// list returns the names, nil for none.
func (a availability) list() []string {
	if a.names == nil {
		return nil
	}
	return *a.names
}

// availableAt is availability of names read at t.
func (u *usageReader) availableAt(names *[]string, t time.Time) availability {
	return availability{names: names, at: t.Sub(u.base), known: true}
}

// known reports whether the available series were read (or answered 404) and not forgotten.
func (s *usageService) known() bool { return s.avail.known }

// fresh reports whether the available series of s were read less than
// availableSeriesTTL before now.
func (u *usageReader) fresh(s *usageService, now time.Time) bool {
	return s != nil && s.known() && now.Sub(u.base)-s.avail.at < availableSeriesTTL
}
