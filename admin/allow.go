package admin

import (
	"fmt"
	"slices"
	"strings"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// WriteOperations lists every write operation the admin surface serves, in
// the spec's order.
func WriteOperations() []string {
	var ops []string
	for _, e := range endpoints() {
		ops = append(ops, e.op)
	}
	return ops
}

// destructive operations are refused unless --admin.allow names them: they
// lose data or lock people out.
var destructive = []string{
	apiclient.OpDeleteService, apiclient.OpDeleteReplicaSet, apiclient.OpDeleteVPC,
	apiclient.OpDeletePeering, apiclient.OpUpdatePassword,
}

// DefaultAllow is the allow list when none is given: every write operation
// except the deletes and updatePassword.
func DefaultAllow() []string {
	return slices.DeleteFunc(WriteOperations(), func(op string) bool { return slices.Contains(destructive, op) })
}

// CheckAllow checks an allow list: every name must be a write operation.
// flag names the flag in the error.
func CheckAllow(flag string, names []string) error {
	writes := WriteOperations()
	for _, name := range names {
		if slices.Contains(writes, name) {
			continue
		}
		if slices.Contains(apiclient.Operations, name) {
			return fmt.Errorf("%s: %q is a read operation; only write operations can be allowed (%s)", flag, name, strings.Join(writes, ", "))
		}
		return fmt.Errorf("%s: %q is not an operation name; write operations are %s", flag, name, strings.Join(writes, ", "))
	}
	return nil
}
