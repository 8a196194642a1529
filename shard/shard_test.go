package shard

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/alecthomas/kingpin/v2"
)

func TestOwnsSplitsEveryIDOnce(t *testing.T) {
	const total, ids = 3, 3000
	counts := make([]int, total)
	for i := range ids {
		id := fmt.Sprintf("svc-%05d", i)
		owners := 0
		for idx := range total {
			if (Shard{Index: idx, Total: total}).Owns(id) {
				owners++
				counts[idx]++
			}
		}
		if owners != 1 {
			t.Fatalf("%s is owned by %d shards, want 1", id, owners)
		}
		if !(Shard{}).Owns(id) || !(Shard{Index: 0, Total: 1}).Owns(id) {
			t.Fatalf("an unsharded process does not own %s", id)
		}
	}
	for idx, n := range counts {
		if n < ids/total*8/10 || n > ids/total*12/10 {
			t.Errorf("shard %d owns %d of %d ids, want about %d", idx, n, ids, ids/total)
		}
	}
}

func TestOwnsIsStable(t *testing.T) {
	// FNV-1a 32 of "a" is 0xe40c292c = 3826002220, 3826002220 mod 3 = 1.
	if !(Shard{Index: 1, Total: 3}).Owns("a") {
		t.Error(`"a" should hash to shard 1 of 3: the hash changed, which would move every resource between shards on upgrade`)
	}
}

func TestFlags(t *testing.T) {
	host := func(name string) func() (string, error) {
		return func() (string, error) { return name, nil }
	}
	for _, tc := range []struct {
		args    []string
		host    func() (string, error)
		want    Shard
		wantErr string
	}{
		{args: nil, want: Shard{0, 1}},
		{args: []string{"--shard=2", "--total-shards=3"}, want: Shard{2, 3}},
		{args: []string{"--shard.from-hostname", "--total-shards=3"}, host: host("clouddb-exporter-1"), want: Shard{1, 3}},
		{args: []string{"--shard=3", "--total-shards=3"}, wantErr: "--shard (CLOUDDB_SHARD) must be from 0 to --total-shards - 1 (2), not 3"},
		{args: []string{"--shard=-1", "--total-shards=3"}, wantErr: "--shard (CLOUDDB_SHARD)"},
		{args: []string{"--total-shards=0"}, wantErr: "--total-shards (CLOUDDB_TOTAL_SHARDS) must be at least 1"},
		{args: []string{"--shard.from-hostname", "--total-shards=3"}, host: host("clouddb-exporter"), wantErr: `--shard.from-hostname: host name "clouddb-exporter" does not end in -N`},
		{args: []string{"--shard.from-hostname", "--total-shards=3"}, host: host("exporter"), wantErr: "--shard.from-hostname: host name"},
		{args: []string{"--shard.from-hostname", "--total-shards=3"}, host: host("exporter-"), wantErr: "--shard.from-hostname: host name"},
		{args: []string{"--shard.from-hostname", "--total-shards=3"}, host: host("exporter-+1"), wantErr: "--shard.from-hostname: host name"},
		{args: []string{"--shard.from-hostname", "--total-shards=3"}, host: host("clouddb-exporter-3"), wantErr: "gives shard 3, not below --total-shards 3"},
		{args: []string{"--shard.from-hostname", "--total-shards=3"}, host: func() (string, error) { return "", errors.New("no name") }, wantErr: "--shard.from-hostname: no name"},
		{args: []string{"--shard.from-hostname", "--shard=1", "--total-shards=3"}, host: host("x-1"), wantErr: "--shard and --shard.from-hostname contradict"},
	} {
		app := kingpin.New("t", "")
		f := AddFlags(app)
		if _, err := app.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		got, err := f.Shard(tc.host)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: error %v, want %q", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: %+v, %v; want %+v", tc.args, got, err, tc.want)
		}
	}
}

func TestFlagParseErrorsNameTheFlag(t *testing.T) {
	app := kingpin.New("t", "")
	AddFlags(app)
	_, err := app.Parse([]string{"--total-shards=three"})
	if err == nil || !strings.Contains(err.Error(), "--total-shards ($CLOUDDB_TOTAL_SHARDS)") {
		t.Errorf("error %v does not name --total-shards", err)
	}
}
