//go:build unix

package safefile

import "syscall"

// noBlock makes the open of a FIFO without a peer return at once instead
// of waiting for one (and changes nothing for a regular file).
const noBlock = syscall.O_NONBLOCK

// noFollow: O_NOFOLLOW also refuses a symbolic link as the last component.
const noFollow = syscall.O_NOFOLLOW | noBlock
