# tmm-bridge: the commands. `make help` lists them; `make run` and `make test` are the two that
# matter. Everything works on a fresh Debian 12 machine with a Swift toolchain: the targets that
# need Debian packages first run scripts/install-deps.sh (installs them as root, or prints the
# sudo command to run).

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
# Steps run in the order written (swift build parallelises on its own).
.NOTPARALLEL:

# Use the toolchain in /opt/swift when `swift` is not already on PATH.
ifeq ($(shell command -v swift 2>/dev/null),)
  ifneq ($(wildcard /opt/swift/usr/bin/swift),)
    export PATH := /opt/swift/usr/bin:$(PATH)
  endif
endif

SWIFT ?= swift
# The Python tools are one package, tmmtools/ (tmmtools/README.md), each module run as
# `/usr/bin/python3 -m tmmtools.<module>` from the repository root with PYTHONPATH set to it.
# Debian's interpreter: python3-websockets, -cryptography, -gps and -selenium load only there.
PYTHON_TOOL := PYTHONPATH='$(CURDIR)' /usr/bin/python3 -B -m
# Seconds of fuzzing for `make fuzz` (override: make fuzz FUZZ_SECONDS=600).
FUZZ_SECONDS ?= 60
# Test IDs matching this filter (suites whose type name contains it: AllocationTests,
# LocationAllocationTests, AllocationCounterSanityTests, ...) also run in an optimized build.
ALLOCATION_TESTS ?= Allocation
# Generated Swift file that embeds the demo capture, and the script that writes it.
EMBEDDED := Sources/tmm-bridge/DemoCapture.swift
EMBED := scripts/embed-capture.sh

.PHONY: help deps deps-bench build static run test test-fast gpsd-suite check-warnings check-format format check-embedded embed udev-rules man bench hwtest hwtest-reliability browser-test fuzz conformance clean install uninstall deb package-test

help: ## List the targets
	@echo "tmm-bridge make targets:"
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z-]+):.*## (.*)/  make \1\t\2/' | expand -t 26

deps: ## Install missing Debian packages for build and test
	@scripts/install-deps.sh

deps-bench: ## Install missing Debian packages for build, test and benchmarks
	@scripts/install-deps.sh --bench

# The release tmm-bridge as shipped: the Swift runtime, Foundation and Dispatch linked in
# (--static-swift-stdlib), so that it runs without the toolchain and starts faster. It is built
# apart, in $(STATIC_SCRATCH): the flag changes how every module is compiled, and the test bundles
# (which link the executable's code next to the dynamic XCTest and Swift Testing) must stay
# dynamic. `make run` and scripts/bench.sh use it; the build fails if it still loads a library
# from the toolchain.
STATIC_SCRATCH := .build/static
BRIDGE := $(STATIC_SCRATCH)/release/tmm-bridge
# Full RELRO for the shipped binary (Debian's hardening "bindnow"): every symbol resolved at start,
# the relocation table read-only after.
STATIC_LINK_FLAGS := -Xlinker -z -Xlinker now

build: static ## Release build of everything (swift build -c release), and the static tmm-bridge in .build/static/release
	$(SWIFT) build -c release

# Only the shipped binary: what run, deb and hwtest need (the rest of `build` is minutes more).
static: ## The static tmm-bridge alone, in .build/static/release (fails if it loads a toolchain library)
	$(SWIFT) build -c release --product tmm-bridge --static-swift-stdlib --scratch-path $(STATIC_SCRATCH) $(STATIC_LINK_FLAGS)
	@toolchain=$$(dirname "$$(dirname "$$(command -v $(SWIFT))")"); \
	if ldd $(BRIDGE) | grep -F -e "$$toolchain/" -e libswift -e libFoundation -e libdispatch >&2; then \
		echo "make static: $(BRIDGE) loads the libraries above from the toolchain; it must link them statically" >&2; \
		exit 1; \
	fi

# The demo daemon: the built-in Trimble RTK capture replayed through a pty into gpsd (a private one
# unless a system gpsd answers), served on TMM's ports with open registration, until Ctrl-C.
# RUN_ARGS adds options, e.g. make run RUN_ARGS='--api-port 9737'.
RUN_ARGS ?=
run: deps static ## Run the bridge on the built-in receiver capture (TMM ports 9635-9640) until Ctrl-C
	$(BRIDGE) run --demo --no-discovery --registration open $(RUN_ARGS)

# Tests: the embedded capture must be current and the build warning-free; then the heap-allocation
# suites run in an optimized build (debug builds box closures and iterators, so they skip there;
# see Tests/Support/TestSupport/BuildConfiguration.swift), with Swift Testing's backtrace capture
# for thrown errors turned off (it allocates on every `throw`, even a typed one, on the throwing
# thread, so rejected sentences would count) and testable imports on (release builds leave them
# off by default); finally every test runs in debug, so the last line printed is Swift Testing's
# summary of the whole suite. Both runs always happen; the target fails if either failed.
test: deps gpsd-suite check-format check-embedded check-warnings ## Check formatting, generated files and warnings, then run all tests
	@status=0; \
	echo "== allocation suites, optimized build: swift test -c release --enable-testable-imports --filter '$(ALLOCATION_TESTS)'"; \
	SWT_SWIFT_ERROR_BACKTRACING_ENABLED=0 $(SWIFT) test -c release --enable-testable-imports --filter '$(ALLOCATION_TESTS)' || status=1; \
	echo "== all tests: swift test"; \
	$(SWIFT) test || status=$$((status + 2)); \
	case $$status in \
		0) ;; \
		1) echo "make test: the allocation suites failed in the optimized build (see above)" >&2 ;; \
		2) echo "make test: tests failed (see above)" >&2 ;; \
		*) echo "make test: tests failed, and the allocation suites failed in the optimized build" >&2 ;; \
	esac; \
	exit $$((status != 0))

# The unit suites alone, in a debug build: pure logic, no gpsd, child processes, ports or ptys
# (README.md says what goes where). Every suite is tagged `.unit` or `.integration`
# (Tests/Support/TestSupport/Tags.swift), but Swift Testing 6.3 cannot select by tag on the command
# line (`swift test --filter` matches test IDs only; `--filter tag:unit` matches nothing). So
# tmmtools/scripts/test_tags.py asks the built test bundle for its own tags (its --list-tests event stream)
# and turns the `.unit` suites into a `--filter` regex of their IDs: a suite added with a tag is
# picked up with no list to maintain, and the script refuses (fails the target) when any test has
# neither tag or both, the check Tests/CLITests/SuiteTagTests.swift also runs inside `make test`.
test-fast: deps ## Build (debug) and run only the unit suites: no gpsd, processes or ports (seconds)
	$(SWIFT) build --build-tests
	@bundle=$$(ls -d "$$($(SWIFT) build --show-bin-path)"/*PackageTests.xctest); \
	filter=$$($(PYTHON_TOOL) tmmtools.scripts.test_tags --filter unit "$$bundle"); \
	echo "== unit suites: swift test --skip-build --filter <the $$(tr '|' '\n' <<<"$$filter" | wc -l) .unit suites>"; \
	$(SWIFT) test --skip-build --filter "$$filter"

gpsd-suite: ## Fetch gpsd 3.22's regression suite into .build/gpsd-suite for the GPSDSuite tests (once; GPSD_SUITE_SKIP=1 skips)
	@scripts/fetch-gpsd-suite.sh

check-warnings: ## Build with tests and fail on any compiler warning in Sources/ or Tests/
	@scripts/check-warnings.sh

# The toolchain's formatter (swift-format, configured by .swift-format: 120 columns, 4 spaces).
# `make format` rewrites the Swift files in place; `check-format` (part of `make test`) fails on
# any line it would change, and on the few rules it checks beyond layout. String literals are
# never broken by the formatter, so `check-format` also fails on every Swift line over 120
# characters (characters, not bytes), naming it as file:line (tmmtools/scripts/line_length.py):
# split a long message by hand with + at a word boundary, or write a literal that must stay one
# (a static let, a test's expected text) as a multi-line literal with \ line continuations.
# Both checks always run; the target fails if either failed.
# Fuzz/'s own files only: the fuzzers' scratch copies of the sources (Fuzz/build) are not ours.
SWIFT_FORMAT_PATHS := Package.swift Sources Tests Benchmarks $(wildcard Fuzz/*.swift)
SWIFT_LINE_LIMIT := 120
format: ## Format every Swift file in place (swift format, .swift-format)
	$(SWIFT) format --in-place --recursive --parallel $(SWIFT_FORMAT_PATHS)

check-format: ## Fail on any Swift line `make format` would change, or over 120 characters
	@status=0; \
	$(SWIFT) format lint --strict --recursive --parallel $(SWIFT_FORMAT_PATHS) || \
		{ echo "make check-format: run make format (or fix the lines above by hand)" >&2; status=1; }; \
	$(PYTHON_TOOL) tmmtools.scripts.line_length --limit $(SWIFT_LINE_LIMIT) $(SWIFT_FORMAT_PATHS) || \
		{ echo "make check-format: split the lines above (see the Makefile's note on check-format)" >&2; status=1; }; \
	exit $$status

check-embedded: ## Verify Sources/tmm-bridge/DemoCapture.swift matches the capture byte for byte
	@tmp=$$(mktemp); trap 'rm -f "$$tmp"' EXIT; \
	$(EMBED) "$$tmp"; \
	if ! diff -q "$$tmp" $(EMBEDDED) >/dev/null; then \
		echo "check-embedded: $(EMBEDDED) is out of date; run 'make embed' (or $(EMBED))" >&2; \
		diff -u $(EMBEDDED) "$$tmp" | head -n 20 >&2 || true; \
		exit 1; \
	fi
	@$(EMBED) --verify

embed: ## Regenerate Sources/tmm-bridge/DemoCapture.swift from Tests/Fixtures/nmea/nmea-rtk.log
	$(EMBED)

# The udev rules are generated from the one receiver table (Sources/Discovery/KnownReceivers.swift)
# by the hidden `tmm-bridge udev-rules`; UdevRulesTests fails when the committed file drifts from
# the table (docs/service.md).
UDEV_RULES := udev/60-tmm-bridge.rules
udev-rules: ## Regenerate udev/60-tmm-bridge.rules from the receiver table (tmm-bridge udev-rules)
	$(SWIFT) build --product tmm-bridge
	@tmp=$$(mktemp); trap 'rm -f "$$tmp"' EXIT; \
	"$$($(SWIFT) build --show-bin-path)/tmm-bridge" udev-rules >"$$tmp"; \
	mkdir -p "$$(dirname $(UDEV_RULES))"; \
	install -m 0644 "$$tmp" $(UDEV_RULES); \
	echo "wrote $(UDEV_RULES)"

# The man page is generated from the option and command tables by the hidden `tmm-bridge man`;
# ManPageTests fails when the committed page drifts from them.
MAN_PAGE := packaging/tmm-bridge.8
man: ## Regenerate packaging/tmm-bridge.8 from the option and command tables (tmm-bridge man)
	$(SWIFT) build --product tmm-bridge
	@tmp=$$(mktemp); trap 'rm -f "$$tmp"' EXIT; \
	"$$($(SWIFT) build --show-bin-path)/tmm-bridge" man >"$$tmp"; \
	mkdir -p "$$(dirname $(MAN_PAGE))"; \
	install -m 0644 "$$tmp" $(MAN_PAGE); \
	echo "wrote $(MAN_PAGE)"

# Installing (docs/install.md). `make install` copies what `make build` made, and the service's
# files, under DESTDIR (a staging root, empty for the live system) and PREFIX. It builds nothing,
# so that `sudo make install` never compiles as root. The .deb is this same install with
# PREFIX=/usr, so one list of files serves both. With PREFIX=/usr, units and udev rules go in
# /lib, as Debian 12's own packages put them (its /usr merge moratorium; lintian wants units
# there); any other prefix keeps them under it (systemd and udev also read /usr/local/lib).
# The configuration stays in /etc/tmm-bridge whatever the prefix: the daemon reads it there.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
APPLICATIONSDIR ?= $(PREFIX)/share/applications
MODULESLOADDIR ?= $(PREFIX)/lib/modules-load.d
ifeq ($(PREFIX),/usr)
  SYSTEMLIBDIR ?= /lib
else
  SYSTEMLIBDIR ?= $(PREFIX)/lib
endif
UNITDIR ?= $(SYSTEMLIBDIR)/systemd/system
UDEVRULESDIR ?= $(SYSTEMLIBDIR)/udev/rules.d
CONFIGDIR ?= /etc/tmm-bridge
CONFIG_FILE := packaging/tmm-bridge.conf

# The unit and the URL handler name /usr/bin/tmm-bridge; another BINDIR is written into the
# installed copies (sed), and the install fails if a line to rewrite is no longer there.
install: ## Install the static tmm-bridge (make build first), unit, udev rules, man page, config (PREFIX=/usr/local, DESTDIR)
	@if [[ ! -x $(BRIDGE) ]]; then echo "make install: $(BRIDGE) is missing: run make build first (as your user)" >&2; exit 1; fi
	@for file in systemd/tmm-bridge.service packaging/tmm-bridge-open.desktop; do \
		grep -q '^Exec[A-Za-z]*=/usr/bin/tmm-bridge ' "$$file" || { echo "make install: $$file has no Exec line naming /usr/bin/tmm-bridge to rewrite" >&2; exit 1; }; \
	done
	install -d -m 0755 "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(UNITDIR)" "$(DESTDIR)$(UDEVRULESDIR)" "$(DESTDIR)$(MODULESLOADDIR)" \
		"$(DESTDIR)$(MANDIR)/man8" "$(DESTDIR)$(APPLICATIONSDIR)" "$(DESTDIR)$(CONFIGDIR)"
	install -m 0755 $(BRIDGE) "$(DESTDIR)$(BINDIR)/tmm-bridge"
	sed 's|^ExecStart=/usr/bin/tmm-bridge |ExecStart=$(BINDIR)/tmm-bridge |' systemd/tmm-bridge.service >"$(DESTDIR)$(UNITDIR)/tmm-bridge.service"
	chmod 0644 "$(DESTDIR)$(UNITDIR)/tmm-bridge.service"
	install -m 0644 $(UDEV_RULES) "$(DESTDIR)$(UDEVRULESDIR)/60-tmm-bridge.rules"
	install -m 0644 systemd/tmm-bridge-modules.conf "$(DESTDIR)$(MODULESLOADDIR)/tmm-bridge.conf"
	gzip -9n <$(MAN_PAGE) >"$(DESTDIR)$(MANDIR)/man8/tmm-bridge.8.gz"
	chmod 0644 "$(DESTDIR)$(MANDIR)/man8/tmm-bridge.8.gz"
	sed 's|^Exec=/usr/bin/tmm-bridge |Exec=$(BINDIR)/tmm-bridge |' packaging/tmm-bridge-open.desktop >"$(DESTDIR)$(APPLICATIONSDIR)/tmm-bridge-open.desktop"
	chmod 0644 "$(DESTDIR)$(APPLICATIONSDIR)/tmm-bridge-open.desktop"
	@# An existing configuration is the administrator's: never overwritten.
	@if [[ -e "$(DESTDIR)$(CONFIGDIR)/tmm-bridge.conf" ]]; then \
		echo "make install: kept the existing $(DESTDIR)$(CONFIGDIR)/tmm-bridge.conf"; \
	else \
		echo "install -m 0644 $(CONFIG_FILE) $(DESTDIR)$(CONFIGDIR)/tmm-bridge.conf"; \
		install -m 0644 $(CONFIG_FILE) "$(DESTDIR)$(CONFIGDIR)/tmm-bridge.conf"; \
	fi
	@if [[ -z "$(DESTDIR)" ]] && ! getent passwd tmm-bridge >/dev/null; then \
		echo "make install: next, as root: adduser --system --group --no-create-home --home /nonexistent tmm-bridge;" \
			"systemctl daemon-reload; udevadm control --reload; systemctl enable --now tmm-bridge (docs/install.md)"; \
	fi

# Removes what `make install` installed with the same PREFIX and DESTDIR. The configuration goes
# only when it is still the shipped file; an edited one is kept (and said so).
uninstall: ## Remove what make install installed (same PREFIX and DESTDIR); an edited config is kept
	rm -f "$(DESTDIR)$(BINDIR)/tmm-bridge" "$(DESTDIR)$(UNITDIR)/tmm-bridge.service" \
		"$(DESTDIR)$(UDEVRULESDIR)/60-tmm-bridge.rules" "$(DESTDIR)$(MODULESLOADDIR)/tmm-bridge.conf" \
		"$(DESTDIR)$(MANDIR)/man8/tmm-bridge.8.gz" "$(DESTDIR)$(APPLICATIONSDIR)/tmm-bridge-open.desktop"
	@config="$(DESTDIR)$(CONFIGDIR)/tmm-bridge.conf"; \
	if [[ -e "$$config" ]] && ! cmp -s "$$config" $(CONFIG_FILE); then \
		echo "make uninstall: kept $$config: it differs from the shipped file (remove it by hand)"; \
	else \
		rm -f "$$config"; \
		rmdir "$(DESTDIR)$(CONFIGDIR)" 2>/dev/null || true; \
	fi

# The .deb (scripts/build-deb.sh: dpkg-deb on a `make install PREFIX=/usr` tree, with maintainer
# scripts from packaging/debian/), written to $(DEB_DIR). DEB_REVISION is the Debian revision.
DEB_DIR := .build/deb
DEB_REVISION ?= 1
deb: deps static ## Build the .deb in .build/deb (dpkg-deb; packaging/debian/ has its control files)
	DEB_REVISION=$(DEB_REVISION) scripts/build-deb.sh $(DEB_DIR)

# Builds the .deb (the script runs make deb once it has installed lintian and dpkg-dev), installs
# it on this machine, checks it, runs the installed daemon as its user, purges it and checks
# nothing is left; also checks make install/uninstall in a staging root. Needs root; leaves the
# machine as it found it (docs/install.md, "How the packaging is tested").
package-test: deps ## Build the .deb, install it here, check files, user, service and the daemon, then purge it (root)
	scripts/package-test.sh $(DEB_DIR)

# The benchmarks: parser and pipeline (tmm-bench), tmm-bridge decode against gpsdecode, receiver
# input latency, WebSocket fan-out, fleet publishing at scale (scripts/bench-fleet.sh). BENCH_*
# environment variables tune scripts/bench.sh (see its header), e.g. make bench BENCH_LATENCY=0
# BENCH_FANOUT=0 BENCH_FLEET=0.
bench: deps-bench ## Run the benchmarks (scripts/bench.sh; see BENCHMARKS.md)
	scripts/bench.sh

# Hardware in the loop (hwtests/README.md): scripted virtual receivers through a private gpsd into
# the shipped binary, in a network namespace (target virtual, CI), or a real receiver on a bench:
# make hwtest device=/dev/ttyUSB0, make hwtest bluetooth=AA:BB:CC:DD:EE:FF. The report directory
# (hwtests/reports/<UTC timestamp>/) is the last line printed. hwtest-reliability is the long
# form: 1,000 plug/unplug cycles and a 10-minute soak (SOAK_HOURS= for longer).
# Then, report only, every log of gpsd 3.22's suite that gpsd reads with a binary driver (43)
# through a pty, gpsd and the shipped binary, every fix against /locationV2
# (tmmtools/endtoend/binary_suite.py, docs/input.md; make test gates the short ones): the table is
# printed and kept in .build/binary-suite.md, every figure in .build/binary-suite.json.
device ?=
bluetooth ?=
HWTEST_ARGS ?=
hwtest: deps static gpsd-suite ## Hardware-in-the-loop suite: virtual receivers (default), device=/dev/ttyX or bluetooth=ADDR on a bench; then gpsd's binary-receiver logs, report only
	@scripts/install-deps.sh --browser
	$(SWIFT) build --product tmm-wsecho
	$(PYTHON_TOOL) tmmtools.hwtest $(if $(device),--device $(device)) $(if $(bluetooth),--bluetooth $(bluetooth)) $(HWTEST_ARGS)
	@if [[ -d "$${GPSD_SUITE_DIR:-.build/gpsd-suite}/binary" ]]; then \
		echo "== gpsd's binary-receiver logs through gpsd and $(BRIDGE), report only (tmmtools/endtoend/binary_suite.py)"; \
		$(PYTHON_TOOL) tmmtools.endtoend.binary_suite $(BRIDGE) --json .build/binary-suite.json | tee .build/binary-suite.md; \
	else \
		echo "make hwtest: no $${GPSD_SUITE_DIR:-.build/gpsd-suite}/binary (GPSD_SUITE_SKIP=1, or gpsd/gpsfake missing): gpsd's binary-receiver logs not played"; \
	fi

hwtest-reliability: deps static ## The reliability figures at full size: 1,000 plug/unplug cycles, 1,000 clients, 50 SIGKILLs, a 10-minute soak
	HW_PLUG_CYCLES=1000 HW_CLIENT_CYCLES=1000 HW_KILL_ROUNDS=50 SOAK_SECONDS=$${SOAK_SECONDS:-600} \
		$(PYTHON_TOOL) tmmtools.hwtest --only plug-cycles --only client-cycles --only kill-9-registrations --only soak $(HWTEST_ARGS)

# A real browser as a TMM web client (tmmtools/browser/README.md): Debian's chromium, headless,
# driven by Selenium, loads a page from its own origin that runs the web sample's flow against
# `tmm-bridge run --demo` (CORS preflight, Access Code V2 made with WebCrypto, LocationV2 over ws://
# and wss://); the checks and the screenshot go to a report directory, printed last. The browser
# packages (~390 MiB) are installed only for this target (install-deps.sh --browser). The debug
# tmm-bridge: the quickest build, the same behaviour. BROWSER_ARGS adds options (--report DIR).
BROWSER_ARGS ?=
browser-test: ## A real browser (headless chromium) as a TMM web client: CORS, Access Code V2, LocationV2 over ws and wss, screenshot
	@scripts/install-deps.sh --browser
	$(SWIFT) build --product tmm-bridge
	$(PYTHON_TOOL) tmmtools.browser.browser_test --bridge "$$($(SWIFT) build --show-bin-path)/tmm-bridge" $(BROWSER_ARGS)

# Each parser's fuzzer runs for FUZZ_SECONDS; every one runs even if an earlier one fails.
FUZZERS := Fuzz/run.sh Fuzz/run-http.sh Fuzz/run-websocket.sh Fuzz/run-registration.sh Fuzz/run-bridge.sh Fuzz/run-tls.sh \
	Fuzz/run-gpsd-json.sh Fuzz/run-ntrip.sh Fuzz/run-rtcm.sh Fuzz/run-spool.sh

fuzz: ## Fuzz every parser (NMEA, HTTP, WebSocket, registration URLs and access codes, Bridge configuration/control/replay, the TLS input path, gpsd's JSON reports through libgps, an NTRIP caster's answers, RTCM 3 framing, the MQTT spool's recovery scan) for FUZZ_SECONDS seconds each (default 60)
	@status=0; \
	for fuzzer in $(FUZZERS); do \
		if [[ ! -x $$fuzzer ]]; then echo "make fuzz: $$fuzzer is missing or not executable" >&2; status=1; continue; fi; \
		echo "== $$fuzzer $(FUZZ_SECONDS)"; \
		FUZZ_SECONDS=$(FUZZ_SECONDS) $$fuzzer $(FUZZ_SECONDS) || status=1; \
	done; \
	exit $$status

# The WebSocket conformance suite (tmmtools/conformance/README.md): Autobahn|Testsuite's cases 1-7
# and 9 (at 1/16 of its sizes), re-created in Python 3, against tmm-wsecho, the daemon's own server
# with data messages echoed (a debug build; never installed). The report goes to
# hwtests/reports/conformance-<UTC time>/ (git-ignored), whose path is the last line printed; the
# target fails when any case FAILED. About 20 s after the build.
conformance: deps ## Run Autobahn's WebSocket cases against the daemon's server (tmm-wsecho); report in hwtests/reports/
	$(SWIFT) build --product tmm-wsecho
	$(PYTHON_TOOL) tmmtools.conformance.autobahn --quiet --echo "$$($(SWIFT) build --show-bin-path)/tmm-wsecho" \
		--report hwtests/reports/conformance-$$(date -u +%Y%m%dT%H%M%SZ)

clean: ## Remove build products (.build, Fuzz/build); keeps fuzz corpora
	rm -rf .build Fuzz/build
