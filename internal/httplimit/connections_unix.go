//go:build unix

package httplimit

import "syscall"

// openFilesLimit: the Go runtime raises the soft limit to the hard one at startup.
func openFilesLimit() int {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil || l.Cur == 0 {
		return fallbackOpenFilesLimit
	}
	return int(min(l.Cur, 1<<30)) // RLIM_INFINITY is all ones
}
