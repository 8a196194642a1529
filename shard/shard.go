// Package shard splits one project's resources between exporter processes,
// as kube-state-metrics does: every shard lists, but keeps only its own ids.
package shard

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/alecthomas/kingpin/v2"

	"github.com/clouddb/clouddb_exporter/internal/flagval"
)

// Shard is shard Index of Total; the zero value, like Total 1, owns everything.
type Shard struct {
	Index, Total int
}

// Owns uses FNV-1a modulo Total: stable across processes and versions.
func (s Shard) Owns(id string) bool {
	if s.Total <= 1 {
		return true
	}
	h := fnv.New32a()
	h.Write([]byte(id))
	return int(h.Sum32()%uint32(s.Total)) == s.Index
}

// Enabled reports whether there is more than one shard.
func (s Shard) Enabled() bool { return s.Total > 1 }

// Flags are the sharding flags.
type Flags struct {
	index, total int
	indexSet     bool
	fromHostname bool
}

// AddFlags registers --shard, --total-shards and --shard.from-hostname.
func AddFlags(app *kingpin.Application) *Flags {
	f := &Flags{}
	flagval.Int(app, "shard", "This process's shard, from 0 to --total-shards - 1.",
		"0", "CLOUDDB_SHARD", &f.index)
	app.GetFlag("shard").IsSetByUser(&f.indexSet)
	flagval.Int(app, "total-shards", "Number of shards the services and VPCs are split between (1: none).",
		"1", "CLOUDDB_TOTAL_SHARDS", &f.total)
	app.Flag("shard.from-hostname", "Take --shard from the host name's trailing -N (a StatefulSet ordinal).").
		Envar("CLOUDDB_SHARD_FROM_HOSTNAME").BoolVar(&f.fromHostname)
	return f
}

// Shard resolves the flags, naming the flag at fault.
func (f *Flags) Shard(hostname func() (string, error)) (Shard, error) {
	if f.total < 1 {
		return Shard{}, fmt.Errorf("--total-shards (CLOUDDB_TOTAL_SHARDS) must be at least 1, not %d", f.total)
	}
	index := f.index
	if f.fromHostname {
		if f.indexSet || f.index != 0 {
			return Shard{}, errors.New("--shard and --shard.from-hostname contradict each other: give one")
		}
		name, err := hostname()
		if err != nil {
			return Shard{}, fmt.Errorf("--shard.from-hostname: %w", err)
		}
		if index, err = Ordinal(name); err != nil {
			return Shard{}, fmt.Errorf("--shard.from-hostname: %w", err)
		}
		if index >= f.total {
			return Shard{}, fmt.Errorf("--shard.from-hostname: host name %q gives shard %d, not below --total-shards %d", name, index, f.total)
		}
	}
	if index < 0 || index >= f.total {
		return Shard{}, fmt.Errorf("--shard (CLOUDDB_SHARD) must be from 0 to --total-shards - 1 (%d), not %d", f.total-1, index)
	}
	return Shard{Index: index, Total: f.total}, nil
}

// Ordinal parses the trailing -N of a StatefulSet pod's name.
func Ordinal(hostname string) (int, error) {
	i := strings.LastIndexByte(hostname, '-')
	if i < 0 {
		return 0, fmt.Errorf("host name %q does not end in -N (a StatefulSet pod's ordinal)", hostname)
	}
	n, err := strconv.Atoi(hostname[i+1:])
	if err != nil || n < 0 || hostname[i+1] == '+' {
		return 0, fmt.Errorf("host name %q does not end in -N (a StatefulSet pod's ordinal)", hostname)
	}
	return n, nil
}
