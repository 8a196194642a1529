//go:build !unix

package flagval

// exposedFile has no Unix permissions to read here.
func exposedFile(string) string { return "" }
