# Build, test and lint targets. `scripts/test.sh` is the whole test suite
# (what CI runs, after scripts/install-deps.sh); these targets are
# conveniences around it (see docs/development.md).
GO        ?= go
BINARY    ?= clouddb_exporter
VERSION   ?= $(shell cat VERSION 2>/dev/null || echo 0.0.0)
REVISION  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
BRANCH    ?= $(shell git rev-parse --abbrev-ref HEAD 2>/dev/null || echo unknown)
# Two builds of one commit are byte for byte equal: the build date is the
# commit's time (SOURCE_DATE_EPOCH, as reproducible-builds.org defines it)
# and the build user a fixed name, never the clock or the machine.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
BUILDUSER ?= clouddb_exporter-make
BUILDDATE ?= $(shell date -u -d @$(SOURCE_DATE_EPOCH) +%Y%m%d-%H:%M:%S 2>/dev/null || date -u -r $(SOURCE_DATE_EPOCH) +%Y%m%d-%H:%M:%S)
VERSION_PKG := github.com/prometheus/common/version
LDFLAGS := -s -w \
	-X $(VERSION_PKG).Version=$(VERSION) \
	-X $(VERSION_PKG).Revision=$(REVISION) \
	-X $(VERSION_PKG).Branch=$(BRANCH) \
	-X $(VERSION_PKG).BuildUser=$(BUILDUSER) \
	-X $(VERSION_PKG).BuildDate=$(BUILDDATE)

.PHONY: all build build-sim crossbuild release test test-unit test-e2e install-deps lint bench run clean

all: lint build test

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/$(BINARY) .

build-sim:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/cloudsim ./cmd/cloudsim

# Release builds, laid out as the Prometheus project's promu does:
# dist/clouddb_exporter-<version>.<os>-<arch>/clouddb_exporter[.exe], then
# one tarball per platform with LICENSE and NOTICE, and sha256sums.txt.
# Override PLATFORMS to build fewer (make crossbuild PLATFORMS=linux/arm64).
PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
DIST      ?= dist
RELEASE_NAME = $(BINARY)-$(VERSION)

crossbuild:
	@set -e; for platform in $(PLATFORMS); do \
		os=$${platform%/*}; arch=$${platform#*/}; ext=; \
		[ "$$os" = windows ] && ext=.exe; \
		dir=$(DIST)/$(RELEASE_NAME).$$os-$$arch; \
		echo ">> building $$dir/$(BINARY)$$ext"; \
		mkdir -p "$$dir"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o "$$dir/$(BINARY)$$ext" .; \
	done

# Tarballs are reproducible (sorted, fixed owner and time) so that two
# release builds of one commit give the same checksums.
release: crossbuild
	@set -e; cd $(DIST); rm -f sha256sums.txt; \
	for platform in $(PLATFORMS); do \
		name=$(RELEASE_NAME).$${platform%/*}-$${platform#*/}; \
		cp $(CURDIR)/LICENSE $(CURDIR)/NOTICE "$$name/"; \
		echo ">> packaging $(DIST)/$$name.tar.gz"; \
		tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@$(SOURCE_DATE_EPOCH) -cf - "$$name" | gzip -9n > "$$name.tar.gz"; \
	done; \
	sha256sum *.tar.gz > sha256sums.txt; \
	cat sha256sums.txt

# Everything CI runs: lint, every Go test (whole-binary ones included) and
# the tool modules' tests.
test:
	scripts/test.sh

# Unit and in-process tests: the whole-binary tests are skipped under -short.
test-unit:
	$(GO) test -short -race ./...

# The whole-binary tests only (e2e/); they run 8 at a time (see e2e_test.go).
test-e2e:
	$(GO) test -race -count=1 ./e2e

# The system packages of the tests (Debian's prometheus and
# prometheus-alertmanager); needs root or sudo.
install-deps:
	scripts/install-deps.sh

lint:
	scripts/lint.sh

bench:
	scripts/bench.sh

run:
	$(GO) run . --simulate

clean:
	rm -rf bin $(DIST)
