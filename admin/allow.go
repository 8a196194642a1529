package admin

import (
	"fmt"
	"slices"
	"strings"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// WriteOperations lists every write operation the admin surface serves, in
// the spec's order: the catalog's write operations.
func WriteOperations() []string { return writeOperations(apiclient.Catalog()) }

func writeOperations(catalog []apiclient.Operation) []string {
	var ops []string
	for _, o := range catalog {
		if o.Write {
			ops = append(ops, o.Name)
		}
	}
	return ops
}

// DefaultAllow is the allow list when none is given: every write operation
// whose endpoint is not opt-in.
func DefaultAllow() []string { return defaultAllow(apiclient.Catalog(), endpoints()) }

// OptIn lists the write operations that --admin.allow must name.
func OptIn() []string {
	allowed := DefaultAllow()
	return slices.DeleteFunc(WriteOperations(), func(op string) bool { return slices.Contains(allowed, op) })
}

func defaultAllow(catalog []apiclient.Operation, eps []*endpoint) []string {
	optIn := map[string]bool{}
	for _, e := range eps {
		optIn[e.op] = e.optIn
	}
	return slices.DeleteFunc(writeOperations(catalog), func(op string) bool { return optIn[op] })
}

// CheckAllow checks an allow list: every name must be a write operation.
// flag names the flag in the error.
func CheckAllow(flag string, names []string) error {
	return checkAllow(flag, names, apiclient.Catalog())
}

func checkAllow(flag string, names []string, catalog []apiclient.Operation) error {
	writes := writeOperations(catalog)
	for _, name := range names {
		if slices.Contains(writes, name) {
			continue
		}
		if slices.ContainsFunc(catalog, func(o apiclient.Operation) bool { return o.Name == name }) {
			return fmt.Errorf("%s: %q is a read operation; only write operations can be allowed (%s)", flag, name, strings.Join(writes, ", "))
		}
		return fmt.Errorf("%s: %q is not an operation name (the list is comma-separated or the flag repeated); write operations are %s", flag, name, strings.Join(writes, ", "))
	}
	return nil
}
