package dataplane

import "time"

// availability is 16 bytes: a pointer to a list the services share (see
// match), and the stamp of when it was read, 0 for never.
type availability struct {
	// names holds the API's name of each selected suffix, by index; "" where the service has none.
	names *[]string
	at    uint32
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
	return availability{names: names, at: u.stamp(t)}
}

// known reports whether the available series were read (or answered 404) and not forgotten.
func (s *usageService) known() bool { return s.avail.at != 0 }

// fresh reports whether the available series of s are not due again at
// now. They fall due about hourly, as the nodes' totals do, at the
// service's own second of the hour (nextRefresh): a fleet's fall due a
// few a tick, not all in one tick an hour after the start, which would
// lift the calls the budget's round-robin counts (and flap its WARN)
// every hour.
func (u *usageReader) fresh(s *usageService, now time.Time) bool {
	return s != nil && s.known() && u.stamp(now) < nextRefresh(s.phase, s.avail.at)
}
