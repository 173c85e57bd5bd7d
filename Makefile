# aasa-server: the two commands of the README quick start, and a few helpers.
SWIFT ?= swift
CONFIG ?= site-config
CERTS ?= certs
FUZZ_SECONDS ?= 30

.PHONY: run test build release lint clean bench fuzz

## make run: install what is missing, build, make dev certificates, serve the sample site-config/.
run: release
	.build/release/aasa-server serve --dev --config $(CONFIG) --certs $(CERTS)

## make test: install what is missing and run every test (unit, live HTTPS, corpus, schema), bounded in time by
## scripts/run-tests (AASA_TEST_LIMIT minutes, 40 by default; a run over it fails naming the tests still running).
test:
	scripts/setup.sh --test
	$(SWIFT) build --build-tests
	SWIFT=$(SWIFT) scripts/run-tests
	$(SWIFT) format lint --recursive --strict Sources Tests Package.swift

build:
	scripts/setup.sh
	$(SWIFT) build

release:
	scripts/setup.sh
	$(SWIFT) build -c release

lint:
	$(SWIFT) format lint --recursive --strict Sources Tests Package.swift

clean:
	rm -rf .build .build-fuzz

## make bench: aasa-server against nginx, at scale, and as a fleet on PostgreSQL (see docs/benchmarks.md).
bench:
	scripts/bench

## make fuzz: libFuzzer with AddressSanitizer on site.json loading, association and assetlinks files and the
## matcher, FUZZ_SECONDS per target (docs/fuzzing.md). Findings land in Tests/AASACoreTests/Fixtures/fuzz-regressions/.
fuzz:
	scripts/fuzz $(FUZZ_SECONDS)
