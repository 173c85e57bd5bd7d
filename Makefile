# aasa-server: the two commands of the README quick start, and a few helpers.
SWIFT ?= swift
CONFIG ?= site-config
CERTS ?= certs

.PHONY: run test build release lint clean bench

## make run: install what is missing, build, make dev certificates, serve the sample site-config/.
run: release
	.build/release/aasa-server serve --dev --config $(CONFIG) --certs $(CERTS)

## make test: install what is missing and run every test (unit, live HTTPS, corpus, schema).
test:
	scripts/setup.sh --test
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	$(SWIFT) format lint --recursive Sources Tests Package.swift

build:
	scripts/setup.sh
	$(SWIFT) build

release:
	scripts/setup.sh
	$(SWIFT) build -c release

lint:
	$(SWIFT) format lint --recursive --strict Sources Tests Package.swift

clean:
	rm -rf .build

## make bench: aasa-server against nginx (see docs/benchmarks.md).
bench:
	scripts/bench
