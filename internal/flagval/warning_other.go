//go:build !unix

package flagval

func exposedFile(string) string { return "" }
