# SPDX-License-Identifier: GPL-2.0
# filemap-noref workbench. 'make check' and 'make bench' are the two
# commands; the others are their steps. DEBUG=1 builds the debug kernel.
# SERIES picks the series every target works on: the directory that holds
# its BASE, series and patches/; '.' (the default) is the mainline series,
# backports/6.12 the 6.12 backport. Each builds in build/NAME (NAME from
# its BASE).

SHELL := /bin/bash
SERIES ?= .
export SERIES DEBUG

# The series 'make check' covers: all of them, unless SERIES is given (on
# the command line or in the environment), then that one.
ALL_SERIES := . backports/6.12
SERIES_TO_CHECK := $(if $(filter file,$(origin SERIES)),$(ALL_SERIES),$(or $(SERIES),.))

.PHONY: all check check-one check-figures check-debug check-also check-b4 check-kunit check-litmus mbox check-series check-matrix check-distro check-arm64 check-compilers check-kcsan check-kmsan check-v11 control-rates htmldocs bench profile scale xfstests deps base apply quilt-check export sync-selftests clean help

all: help

help:
	@echo "SERIES=DIR picks the series (its BASE, series and patches/) for every"
	@echo "target: '.' (default) the mainline, backports/6.12 the 6.12 backport;"
	@echo "each builds in build/NAME. Example: make check-series SERIES=backports/6.12"
	@echo "make check        for each series (only SERIES if given): check-figures, quilt-check,"
	@echo "                  check-also and check-litmus (mainline; not check-debug),"
	@echo "                  check-b4, then apply, build, boot and run the selftests;"
	@echo "                  all series run even if one fails; one closing line per"
	@echo "                  kernel, 'check NAME (VERSION): ...'"
	@echo "make check-one    those steps for SERIES alone, no closing line if a"
	@echo "                  step before the selftests fails"
	@echo "make check-debug  make check (the same series) on a KASAN/lockdep/DEBUG_VM"
	@echo "                  kernel (.ci/run: the mainline); 'check-debug NAME ...'"
	@echo "make check-also   prove git am applies the series to the second tree"
	@echo "                  BASE names (ALSO_*: 7.3.4 for the mainline); no build"
	@echo "make check-kunit  the series' KUnit tests (mm/tests/filemap_noref_kunit.c)"
	@echo "                  under User-Mode Linux (kunit.py, scripts/kunit.config);"
	@echo "                  make check runs them too (not check-debug)"
	@echo "make check-litmus litmus tests of the reader/free hand-over"
	@echo "                  (tools/memory-model/litmus-tests/filemap-noref/), herd7"
	@echo "                  under the mainline base's LKMM (scripts/get-herd7.sh:"
	@echo "                  Debian sid's herd7); each has a twin that must fail;"
	@echo "                  seconds, no build"
	@echo "make check-figures  the exported cover letter's figures are what its"
	@echo "                  results files give (scripts/cover-body.sh)"
	@echo "make check-b4     b4 am takes the series from its mbox (make mbox) and"
	@echo "                  the result applies to the base, base-commit included"
	@echo "make mbox         the series as one threaded mbox, build/NAME/series.mbox"
	@echo "make bench        base vs patched read benchmark, will-it-scale pread1/2"
	@echo "                  (build/NAME/bench/)"
	@echo "make profile      instructions per read by kernel function, base vs"
	@echo "                  patched, under icount (perf in the guest)"
	@echo "make scale        reads/s per thread, base vs patched, 1..N CPUs reading"
	@echo "                  one file, on User-Mode Linux SMP (real atomics, no KVM;"
	@echo "                  mainline only), build/NAME/scale/table.txt"
	@echo "make xfstests     xfstests (generic tests on ext4 and xfs) on the base"
	@echo "                  and the patched kernel; XFSTESTS='-g quick' for the"
	@echo "                  quick group, XFSTESTS_SRC= for your own checkout"
	@echo "make apply        base tree + series in build/NAME/linux (for development)"
	@echo "make export       build/NAME/linux commits back into SERIES/patches/ and"
	@echo "                  SERIES/series"
	@echo "make sync-selftests  fold tools/testing/selftests/filemap-noref/ into"
	@echo "                  the selftests patch in build/NAME/linux (then make export)"
	@echo "make quilt-check  prove quilt push -a --fuzz=0 applies the series"
	@echo "make check-series build after every patch (tinyconfig + scripts/bisect.config),"
	@echo "                  checkpatch --strict each; records the result in"
	@echo "                  results/NAME/series.txt, which make check compares with"
	@echo "                  the series (not in .ci/run: time)"
	@echo "make check-matrix page-flag room (NUMA, MAXSMP, MGLRU...) and i386"
	@echo "make check-distro Debian's own kernel config: page->flags layout with"
	@echo "                  the series, and mm/ plus the touched files compile"
	@echo "make check-arm64  cross-build for arm64 (MTE), boot QEMU virt, run the"
	@echo "                  selftests there"
	@echo "make check-compilers  clang build; W=1 and sparse against the base"
	@echo "make check-kcsan  the race selftests on a KCSAN kernel (gcc): no data-race"
	@echo "                  report in the series' code"
	@echo "make check-kmsan  the same on a KMSAN kernel (clang-19): no uninit value"
	@echo "                  copied to user space, no report in the series' code"
	@echo "make check-v11    the live reproducer of v11's copy past the folio: the"
	@echo "                  check kernel with v11's order step (scripts/v11/) must"
	@echo "                  fail reuse_order, the series pass it; mainline only,"
	@echo "                  results/NAME/reuse.txt"
	@echo "make control-rates the control boot ROUNDS times (default 10): how often"
	@echo "                  each control run finds the bug it injects, and how fast;"
	@echo "                  results/NAME/control-rates.txt"
	@echo "make htmldocs     Sphinx build of the touched docs against the base"

deps:
	@scripts/deps.sh

base: deps
	@scripts/get-base.sh >/dev/null

# check-all.sh runs 'make check-one SERIES=...' for each series.
check:
	+@scripts/check-all.sh $(SERIES_TO_CHECK)

check-one: base
	@scripts/check-figures.sh
	@scripts/series-record.sh
	@scripts/quilt-check.sh
	@if grep -q '^ALSO_VERSION=' "$(SERIES)/BASE"; then scripts/check-also.sh; fi
	@if [ "$(SERIES)" = . ] && [ "$(DEBUG)" != 1 ]; then scripts/check-litmus.sh; fi
	@scripts/check-b4.sh
	@scripts/check.sh

check-debug:
	+@DEBUG=1 scripts/check-all.sh $(SERIES_TO_CHECK)

check-also: base
	@scripts/check-also.sh

check-b4: base
	@scripts/check-b4.sh

check-kunit: base
	@scripts/check-kunit.sh

# The litmus tests do not depend on the series: the mainline base's LKMM.
check-litmus: deps
	@SERIES=. scripts/get-base.sh >/dev/null
	@scripts/check-litmus.sh

check-figures:
	@scripts/check-figures.sh

mbox:
	@scripts/mbox.sh >/dev/null

check-series: base
	@scripts/check-series.sh

check-matrix: base
	@DEPS_EXTRA=/usr/lib32/libc.a:gcc-multilib scripts/deps.sh
	@scripts/check-matrix.sh

check-distro: base
	@scripts/check-distro.sh

check-arm64: base
	@DEPS_EXTRA="aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu qemu-system-aarch64:qemu-system-arm /usr/aarch64-linux-gnu/lib/libc.a:libc6-dev-arm64-cross" scripts/deps.sh
	@scripts/check-arm64.sh

check-compilers: base
	@DEPS_EXTRA="clang-19:clang-19 sparse:sparse" scripts/deps.sh
	@scripts/check-compilers.sh

check-kcsan: base
	@scripts/check-san.sh kcsan

check-kmsan: base
	@DEPS_EXTRA="clang-19:clang-19" scripts/deps.sh
	@scripts/check-san.sh kmsan

check-v11: base
	@scripts/check-v11.sh

control-rates: base
	@scripts/control-rates.sh

htmldocs: base
	@DEPS_EXTRA=sphinx-build:python3-sphinx scripts/deps.sh
	@scripts/htmldocs.sh

bench: base
	@DEPS_EXTRA=/usr/include/hwloc.h:libhwloc-dev scripts/deps.sh
	@scripts/bench.sh

profile: base
	@scripts/profile.sh

scale: base
	@DEPS_EXTRA="mkfs.ext4:e2fsprogs /usr/lib/x86_64-linux-gnu/libc.a:libc6-dev" scripts/deps.sh
	@scripts/scale.sh

xfstests: base
	@DEPS_EXTRA=debootstrap:debootstrap scripts/deps.sh
	@scripts/xfstests.sh

apply: base
	@scripts/apply.sh

export:
	@scripts/export.sh

sync-selftests:
	@scripts/sync-selftests.sh

quilt-check: base
	@scripts/quilt-check.sh

clean:
	rm -rf build
