# SPDX-License-Identifier: GPL-2.0
# filemap-noref workbench. 'make check' and 'make bench' are the two
# commands; the others are their steps. DEBUG=1 builds the debug kernel.

SHELL := /bin/bash
export DEBUG

.PHONY: all check check-debug check-series check-matrix check-compilers htmldocs bench deps base apply quilt-check export sync-selftests clean help

all: help

help:
	@echo "make check        apply the series, build, boot, run the selftests"
	@echo "make check-debug  the same on a KASAN/lockdep/DEBUG_VM kernel"
	@echo "make bench        base vs patched read benchmark (build/bench/)"
	@echo "make apply        base tree + series in build/linux (for development)"
	@echo "make export       build/linux commits back into patches/ and series"
	@echo "make sync-selftests  fold tools/testing/selftests/filemap-noref/ into"
	@echo "                  the selftests patch in build/linux (then make export)"
	@echo "make quilt-check  prove quilt push -a --fuzz=0 applies the series"
	@echo "make check-series build after every patch, checkpatch --strict each"
	@echo "make check-matrix page-flag room (NUMA, MAXSMP, MGLRU...) and i386"
	@echo "make check-compilers  clang build; W=1 and sparse against the base"
	@echo "make htmldocs     Sphinx build of the touched docs against the base"

deps:
	@scripts/deps.sh

base: deps
	@scripts/get-base.sh >/dev/null

check: base
	@scripts/quilt-check.sh
	@scripts/check.sh

check-debug:
	@$(MAKE) --no-print-directory check DEBUG=1

check-series: base
	@scripts/check-series.sh

check-matrix: base
	@DEPS_EXTRA=/usr/lib32/libc.a:gcc-multilib scripts/deps.sh
	@scripts/check-matrix.sh

check-compilers: base
	@DEPS_EXTRA="clang:clang sparse:sparse" scripts/deps.sh
	@scripts/check-compilers.sh

htmldocs: base
	@DEPS_EXTRA=sphinx-build:python3-sphinx scripts/deps.sh
	@scripts/htmldocs.sh

bench: base
	@scripts/bench.sh

apply: base
	@scripts/apply.sh build/linux

export:
	@scripts/export.sh build/linux

sync-selftests:
	@scripts/sync-selftests.sh build/linux

quilt-check: base
	@scripts/quilt-check.sh

clean:
	rm -rf build
