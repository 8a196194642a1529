# Build, test and lint targets. `scripts/test.sh` is the whole test suite
# (what CI runs); these targets are conveniences around it.
GO        ?= go
BINARY    ?= clouddb_exporter
VERSION   ?= $(shell cat VERSION 2>/dev/null || echo 0.0.0)
REVISION  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
BRANCH    ?= $(shell git rev-parse --abbrev-ref HEAD 2>/dev/null || echo unknown)
BUILDUSER ?= $(shell whoami)@$(shell hostname)
BUILDDATE ?= $(shell date -u +%Y%m%d-%H:%M:%S)
VERSION_PKG := github.com/prometheus/common/version
LDFLAGS := -s -w \
	-X $(VERSION_PKG).Version=$(VERSION) \
	-X $(VERSION_PKG).Revision=$(REVISION) \
	-X $(VERSION_PKG).Branch=$(BRANCH) \
	-X $(VERSION_PKG).BuildUser=$(BUILDUSER) \
	-X $(VERSION_PKG).BuildDate=$(BUILDDATE)

.PHONY: all build build-sim test lint bench run clean

all: lint build test

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/$(BINARY) .

build-sim:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/cloudsim ./cmd/cloudsim

test:
	scripts/test.sh

lint:
	scripts/lint.sh

bench:
	scripts/bench.sh

run:
	$(GO) run . --simulate

clean:
	rm -rf bin
