package main

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

func TestSetMemoryLimit(t *testing.T) {
	const cgroup = 256 << 20
	for _, tt := range []struct {
		name    string
		env     string
		flags   memLimitFlags
		cgroup  func() (uint64, error)
		want    int64 // the limit set, 0 for none
		wantLog string
	}{
		{"from the cgroup", "", memLimitFlags{auto: true, ratio: 0.9},
			func() (uint64, error) { return cgroup, nil }, cgroup * 9 / 10, "cgroup_limit_bytes=268435456"},
		{"another ratio", "", memLimitFlags{auto: true, ratio: 0.5},
			func() (uint64, error) { return cgroup, nil }, cgroup / 2, "ratio=0.5"},
		{"GOMEMLIMIT wins", "200MiB", memLimitFlags{auto: true, ratio: 0.9},
			func() (uint64, error) { return cgroup, nil }, 0, "GOMEMLIMIT=200MiB"},
		{"turned off", "", memLimitFlags{auto: false, ratio: 0.9},
			func() (uint64, error) { return cgroup, nil }, 0, "--no-runtime.gomemlimit"},
		{"no limit", "", memLimitFlags{auto: true, ratio: 0.9},
			func() (uint64, error) { return 0, memlimit.ErrNoLimit }, 0, "the cgroup has no memory limit"},
		{"no cgroup", "", memLimitFlags{auto: true, ratio: 0.9},
			func() (uint64, error) { return 0, errors.New("cgroups is not supported on this system") }, 0, "no cgroup memory limit found"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			var set int64
			got := setMemoryLimit(slog.New(slog.NewTextHandler(&logs, nil)), &tt.flags,
				func(k string) string {
					if k == "GOMEMLIMIT" {
						return tt.env
					}
					return ""
				}, tt.cgroup, func(n int64) int64 { set = n; return 0 })
			if got != tt.want || set != tt.want {
				t.Errorf("limit %d (set %d), want %d", got, set, tt.want)
			}
			if !strings.Contains(logs.String(), tt.wantLog) {
				t.Errorf("log %q does not say %q", logs.String(), tt.wantLog)
			}
		})
	}
}

func TestMemLimitRatioChecked(t *testing.T) {
	for _, ratio := range []string{"0", "-0.5", "1.5"} {
		if _, err := parseFlags([]string{"--runtime.gomemlimit.ratio=" + ratio}, os.Getenv); err == nil || !strings.Contains(err.Error(), "--runtime.gomemlimit.ratio") {
			t.Errorf("ratio %s: err = %v, want one naming the flag", ratio, err)
		}
	}
	f, err := parseFlags(nil, os.Getenv)
	if err != nil || !f.memLimit.auto || f.memLimit.ratio != defaultMemLimitRatio {
		t.Errorf("defaults: %+v, %v; want on at %g", f.memLimit, err, defaultMemLimitRatio)
	}
}

func TestSetGCPercent(t *testing.T) {
	for _, tt := range []struct {
		name    string
		env     string
		gogc    int
		want    int // the percent set, 0 for none
		wantLog string
	}{
		{"the default", "", defaultGOGC, 75, "gogc=75"},
		{"another", "", 50, 50, "gogc=50"},
		{"GOGC wins", "200", defaultGOGC, 0, "GOGC=200"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			set := 0
			setGCPercent(slog.New(slog.NewTextHandler(&logs, nil)), &memLimitFlags{gogc: tt.gogc},
				func(k string) string {
					if k == "GOGC" {
						return tt.env
					}
					return ""
				}, func(n int) int { set = n; return 100 })
			if set != tt.want {
				t.Errorf("set %d, want %d", set, tt.want)
			}
			if !strings.Contains(logs.String(), tt.wantLog) {
				t.Errorf("log %q does not say %q", logs.String(), tt.wantLog)
			}
		})
	}
}

func TestGOGCChecked(t *testing.T) {
	for _, v := range []string{"0", "-5"} {
		if _, err := parseFlags([]string{"--runtime.gogc=" + v}, os.Getenv); err == nil || !strings.Contains(err.Error(), "--runtime.gogc") {
			t.Errorf("--runtime.gogc=%s: err = %v, want one naming the flag", v, err)
		}
	}
	f, err := parseFlags(nil, os.Getenv)
	if err != nil || f.memLimit.gogc != defaultGOGC {
		t.Errorf("defaults: %+v, %v; want --runtime.gogc at %d", f.memLimit, err, defaultGOGC)
	}
}
