//go:build unix

package flagval

import (
	"os"
	"syscall"
)

func exposedFile(path string) string {
	info, err := os.Stat(path)
	if err != nil {
		return ""
	}
	mode := info.Mode().Perm()
	switch st, ok := info.Sys().(*syscall.Stat_t); {
	case mode&0o004 != 0:
		return "the file is readable by every user of the system: make it 0600 or 0400"
	case mode&0o040 != 0 && ok && int(st.Gid) != os.Getegid():
		return "the file is readable by a group the exporter does not run as: make it 0600 or 0400"
	}
	return ""
}
