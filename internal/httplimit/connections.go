package httplimit

import (
	"fmt"
	"strconv"
)

// Shares of the open-file limit (RLIMIT_NOFILE) that each listener's
// connections may take by default, and their caps: the rest is for
// the API's connections, the audit log and the files read. Each
// connection costs one descriptor, and an accepted connection beyond
// the limit would be one the process cannot afford.
const (
	MainConnectionsShare   = 2 // half
	MainConnectionsCap     = 8192
	AdminConnectionsShare  = 8 // an eighth
	AdminConnectionsCap    = 512
	fallbackOpenFilesLimit = 1024
)

// MaxConnections parses a connection limit flag: "auto" is the limit's
// share of the open-file limit, at most ceiling and at least 1; a
// number is taken as is, 0 meaning no limit.
func MaxConnections(flag, value string, share, ceiling int) (int, error) {
	if value == "auto" {
		return max(1, min(openFilesLimit()/share, ceiling)), nil
	}
	n, err := strconv.Atoi(value)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s: %q is neither auto nor a number of connections (0: no limit)", flag, value)
	}
	return n, nil
}
