package httplimit

import (
	"fmt"
	"strconv"
)

// Default shares of RLIMIT_NOFILE per listener; the rest is for API connections.
const (
	MainConnectionsShare   = 2 // half
	MainConnectionsCap     = 8192
	AdminConnectionsShare  = 8 // an eighth
	AdminConnectionsCap    = 512
	fallbackOpenFilesLimit = 1024
)

// MaxConnections parses "auto" (a share of RLIMIT_NOFILE) or a number (0: no limit).
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
