//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package changes

import (
	"errors"
	"syscall"
)

// openFlags: no symlink followed, and a FIFO put in the file's place cannot
// block the open.
const openFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

func isSymlinkError(err error) bool { return errors.Is(err, syscall.ELOOP) }
