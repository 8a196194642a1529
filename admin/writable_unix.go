//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package admin

import "syscall"

// checkWritable reports whether the process may create files in dir, as
// access(2) with W_OK says: --config.check checks the audit log's directory
// without creating the file.
func checkWritable(dir string) error {
	const wOK = 0x2 // W_OK, the same on every Unix
	return syscall.Access(dir, wOK)
}
