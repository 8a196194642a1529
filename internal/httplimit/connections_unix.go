//go:build unix

package httplimit

import "syscall"

// The soft limit, which the Go runtime raises to the hard one at startup.
func openFilesLimit() int {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil || l.Cur == 0 {
		return fallbackOpenFilesLimit
	}
	return int(min(l.Cur, 1<<30)) // RLIM_INFINITY is all ones
}
