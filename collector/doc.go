// Package collector defines the resource metrics (name, HELP, and the snapshot
// field each is read from) and the collect functions that emit them; the
// exposition package renders them.
package collector
