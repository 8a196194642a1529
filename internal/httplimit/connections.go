package httplimit

import (
	"fmt"
	"strconv"
)

// Shares of RLIMIT_NOFILE each listener's connections may take by default,
// and their caps: the rest is for API connections, the audit log and files.
const (
	MainConnectionsShare   = 2 // half
	MainConnectionsCap     = 8192
	AdminConnectionsShare  = 8 // an eighth
	AdminConnectionsCap    = 512
	fallbackOpenFilesLimit = 1024
)

// MaxConnections parses a connection limit flag: "auto" is share of the
// open-file limit, within [1, ceiling]; a number is taken as is, 0 no limit.
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
