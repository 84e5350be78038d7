# storecheck — make targets. cgo is on: the libSQL driver links a static libSQL.
export CGO_ENABLED := 1
SHELL := /bin/bash
MAKEFLAGS += --no-builtin-rules
.SUFFIXES:

GO      ?= go
OUT     ?= storecheck-out
BIN     := bin/storecheck
PKGS    := ./...

.PHONY: all build run test test-short lint bench soak readme clean

all: lint test

## build: bin/storecheck, and beside it bin/storecheck-worker (cmd/storecheck-worker: the
## worker roles alone, without container support), which the scenarios that start dozens of
## worker processes start (a third of the start-up time); storecheck uses it only when both
## come from one clean commit. The two go builds run side by side. `make build` always asks
## go; the targets that run the binaries (run, soak) rebuild them only when a Go source
## (tracked or new), go.mod, go.sum, a source folder (a file added or removed), this Makefile
## or git's index or HEAD (the commit the binaries are stamped with) is newer than they are
## (go may leave an up-to-date binary's time alone, so the rule touches them): go's own
## up-to-date check of the two costs 0.9 s of CPU, 1–2 s of `make run` on 2 loaded cores
## (docs/PERFORMANCE.md).
SOURCES := $(wildcard $(shell git ls-files --cached --others --exclude-standard -- '*.go' go.mod go.sum 2>/dev/null || find . -name '*.go' -not -path './$(OUT)/*'))
GITSTATE := $(wildcard .git/index .git/HEAD)

build:
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/storecheck & main=$$!; \
	$(GO) build -buildvcs=auto -tags storecheck_nocontainers -o $(BIN)-worker ./cmd/storecheck-worker; worker=$$?; \
	wait $$main && exit $$worker

$(BIN) $(BIN)-worker &: $(SOURCES) $(sort $(patsubst %/,%,$(dir $(SOURCES)))) $(GITSTATE) Makefile
	$(MAKE) --no-print-directory build
	touch $(BIN) $(BIN)-worker

## run: the main job on the embedded default (memory, sqlite, libsql); no servers needed.
## Each run writes a new folder under $(OUT)/; $(OUT)/latest points at the newest.
run: $(BIN) $(BIN)-worker
	./$(BIN) qualify

## test: every test, one line each, and at the end the tests NOT RUN (skipped)
## with their reasons; backends that need servers report NOT RUN when absent.
## TESTP test binaries run at once: one more than the CPUs (go's default is the
## CPUs), since the real-server tests spend much of their time waiting (docs/PERFORMANCE.md).
## The tests' scratch files (t.TempDir, and go's own build folder) go to a folder of their
## own on the /dev/shm tmpfs when it has 2 GiB free and TMPDIR is not set: the tests' SQLite
## writes then cost the kernel less (152–154 s against 182–185 s, docs/PERFORMANCE.md). No test
## asserts a disk's timing. The folder is open to every user as /tmp is (servers under test
## may run under user ids of their own) and removed when the tests end, Ctrl-C included; the
## evidence a real-server test keeps of a FAIL (storecheck-evidence-*) is moved to /tmp first.
## Its name carries the shell's process id: a run killed outright (no trap runs) leaves its
## folder, and the next make test removes the folders of shells that are gone. First, the
## worker build's container stubs (-tags storecheck_nocontainers) are type-checked.
## go test starts the test binaries in the order it is given the packages, which for ./...
## is by name; the packages that take longest come first (TESTFIRST, the longest of a
## `go test -json` run, docs/PERFORMANCE.md), so that they do not start last and leave the
## other cores idle at the end: TESTFIRST only orders the packages, it adds none (go tests
## each package once), and it is left out when PKGS names other packages than ./... .
## scenarios comes fifth, not second: started beside internal/mutantrun's two catalogues (CPU
## all along), its timed tests got less of a core than they had, and one that must see a
## spinning child use a quarter of a core missed it (docs/PERFORMANCE.md, 2026-12-04).
TESTP   ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))
TESTFIRST := ./internal/mutantrun ./internal/cli/realsqld ./internal/cli ./backends/runmutants ./scenarios
test:
	set -o pipefail; \
	keep() { for e in "$$1"/storecheck-evidence-*; do [ -e "$$e" ] && mv "$$e" /tmp/ && echo "evidence moved to /tmp/$${e##*/}"; done; }; \
	if [ -z "$$TMPDIR" ] && [ "$$(df -Pk /dev/shm 2>/dev/null | awk 'NR==2 && $$1=="tmpfs" {print $$4}')" -ge 2097152 ] 2>/dev/null; then \
		for d in /dev/shm/storecheck-test.*.*; do p=$${d#/dev/shm/storecheck-test.}; p=$${p%%.*}; [ -d "$$d" ] && [ ! -d "/proc/$$p" ] && rm -rf "$$d"; done; \
		TMPDIR=$$(mktemp -d /dev/shm/storecheck-test.$$$$.XXXXXX) && chmod 1777 "$$TMPDIR" && export TMPDIR && trap 'keep "$$TMPDIR"; rm -rf "$$TMPDIR"' EXIT && trap 'exit 130' INT && trap 'exit 143' TERM; \
	fi; \
	$(GO) vet -tags storecheck_nocontainers ./backends/... ./cmd/storecheck-worker && \
	$(GO) test -p $(TESTP) -count=1 -json -timeout 30m $(if $(filter ./...,$(PKGS)),$(TESTFIRST)) $(PKGS) | $(GO) run ./internal/tools/testsum

test-short:
	$(GO) test -count=1 -short $(PKGS)

## lint: formatting, vet, and staticcheck where it is installed (it says NOT RUN where not:
## go install honnef.co/go/tools/cmd/staticcheck@latest).
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) vet -tags storecheck_nocontainers ./backends/... ./cmd/storecheck-worker
	@sc=$$(command -v staticcheck || echo "$$($(GO) env GOPATH)/bin/staticcheck"); \
	if [ -x "$$sc" ]; then echo "$$sc $(PKGS)"; "$$sc" $(PKGS) && "$$sc" -tags storecheck_nocontainers ./backends/... ./cmd/storecheck-worker; \
	else echo "lint: staticcheck NOT RUN: not installed (go install honnef.co/go/tools/cmd/staticcheck@latest)"; fi

## bench: Go benchmarks, benchstat-friendly (run twice or more and compare with benchstat).
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 1 $(PKGS)

## soak: storecheck's false-alarm rate: the embedded backends (believed correct) × every
## scenario that applies × SEEDS seeds, on a machine stress-ng loads; exits 1 on any false alarm.
## Pass BACKENDS=URL,… to soak servers instead (docs/SOAK.md).
SEEDS    ?= 20
BACKENDS ?=
soak: $(BIN) $(BIN)-worker
	./$(BIN) soak --seeds $(SEEDS) $(if $(BACKENDS),--backends '$(BACKENDS)')

## readme: every storecheck command of README.md, in order, as written, in a scratch folder
## (minutes: the soak and the real-sqld runs); NOT RUN for those whose server is missing.
readme:
	STORECHECK_README=1 $(GO) test -count=1 -timeout 90m -run TestREADMECommands -v ./cmd/storecheck

clean:
	rm -rf bin $(OUT)
