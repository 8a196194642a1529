//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package changes

// openFlags: elsewhere the regular-file check after the open is the guard.
const openFlags = 0

func isSymlinkError(error) bool { return false }
