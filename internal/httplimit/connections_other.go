//go:build !unix

package httplimit

func openFilesLimit() int { return fallbackOpenFilesLimit }
