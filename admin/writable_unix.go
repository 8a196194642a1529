//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package admin

import "syscall"

// checkWritable reports whether the process may write to a file, or
// create files in a directory, as access(2) with W_OK says: --config.check
// checks the audit log without opening or creating it.
func checkWritable(path string) error {
	const wOK = 0x2 // W_OK, the same on every Unix
	return syscall.Access(path, wOK)
}
