//go:build !unix

package safefile

// noFollow: the fstat after the open still refuses anything but a regular
// file.
const noFollow = 0
