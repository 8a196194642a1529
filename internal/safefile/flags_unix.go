//go:build unix

package safefile

import "syscall"

// noFollow: O_NOFOLLOW refuses a symbolic link as the last component;
// O_NONBLOCK makes the open of a FIFO without a peer return at once instead
// of waiting for one (and changes nothing for a regular file).
const noFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
