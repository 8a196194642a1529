//go:build !unix

package safefile

// noFollow: the fstat after the open still refuses anything but a regular
// file.
const noFollow, noBlock = 0, 0
