# Sluice: `make run` (demo), `make test` (every test), `make bench` (benchmarks).
# Each target installs the Debian packages the build needs when they are missing.

BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
# Warnings fail every build this Makefile configures (-Werror); WERROR=OFF to relax.
WERROR     ?= ON
JOBS       ?= $(shell nproc)
NRANKS     ?= 4
CTEST_ARGS ?=

# command-or-file : Debian package
DEPS := cmake:cmake ninja:ninja-build g++:g++ gnuplot:gnuplot-nox \
        /usr/include/gtest/gtest.h:libgtest-dev /usr/include/hwloc.h:libhwloc-dev \
        /usr/include/liburing.h:liburing-dev nft:nftables ip:iproute2 \
        /usr/lib/x86_64-linux-gnu/pkgconfig/pmix.pc:libpmix-dev pkg-config:pkg-config \
        clang-format:clang-format python3:python3 gfortran:gfortran \
        /usr/include/rdma/fabric.h:libfabric-dev fi_info:libfabric-bin

.PHONY: all deps build run test test-release test-asan test-tsan lint bench clean

all: build

deps:
	@missing=""; for d in $(DEPS); do \
	  what=$${d%%:*}; pkg=$${d##*:}; \
	  case $$what in /*) [ -e $$what ] || missing="$$missing $$pkg";; \
	                 *) command -v $$what >/dev/null 2>&1 || missing="$$missing $$pkg";; esac; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null 2>&1 || \
	  { $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; }; \
	fi

# (Re-)configures a tree: $(call configure,<dir>,<cmake options>). Run before every build,
# so a tree configured by hand still gets the Makefile's options (cheap when unchanged).
configure = cmake -S . -B $(1) -G Ninja -DSLUICE_WERROR=$(WERROR) $(2) >/dev/null

build: deps
	$(call configure,$(BUILD),-DCMAKE_BUILD_TYPE=Release)
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/bin/sluicerun -n $(NRANKS) --timeout 120 $(BUILD)/bin/sluice-demo

# The release build's full suite (lint included), the ASan/UBSan build's unit, multi-process
# and MPI tests, then the ThreadSanitizer build of the threaded tests only.
test: test-release test-asan test-tsan

test-release: build
	cd $(BUILD) && ctest --output-on-failure -j 2 --timeout 600 $(CTEST_ARGS)

# The source checks alone (layer order of includes, clang-format): no build needed.
lint: deps
	python3 tools/check-layers.py
	tools/check-format.sh

# -Werror here too: a fresh, uncached ASan build (GCC 12) shows no warning. GCC may report
# -Wmaybe-uninitialized under -fsanitize=address where -O2 alone does not (it once did for
# sluicerun's drain_output read count): initialize the variable rather than relax the build.
test-asan: deps
	$(call configure,$(ASAN_BUILD),-DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_SANITIZE=ON)
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	  ctest --output-on-failure -j 2 --timeout 900 -L '^(unit|mp|mpi)$$' $(CTEST_ARGS)

# Only what the `threads` tests run is built (target threaded_tests): the progress thread,
# MPI_THREAD_MULTIPLE, the shm ring's two-thread test. tests/tsan.supp covers only
# libraries built without TSan (see there).
test-tsan: deps
	$(call configure,$(TSAN_BUILD),-DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_TSAN=ON)
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target threaded_tests
	cd $(TSAN_BUILD) && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/tsan.supp" \
	  ctest --output-on-failure -j 2 --timeout 900 -L '^threads$$' $(CTEST_ARGS)

bench: build
	mkdir -p bench/results
	$(BUILD)/bin/sluicerun -n 2 --bind core $(BUILD)/bin/sluice-bench pingpong --json \
	  | tee bench/results/pingpong-sluice.jsonl
	@if [ -x bench/peers/run.sh ]; then bench/peers/run.sh; fi

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD)

# docs/CONFIGURATION.md's key tables, regenerated from sluice-info --config --markdown
# (the config_docs test fails while they differ).
.PHONY: config-docs
config-docs: build
	cmake --build $(BUILD) --target config-docs

# make install PREFIX=/opt/sluice: the tools (sluicerun also as mpirun/mpiexec), mpicc and
# mpicxx, mpi.h and include/sluice/, libmpi and libsluice (shared and static), sluice.pc and
# the CMake package (find_package(Sluice) -> Sluice::sluice). See cmake/Install.cmake.
PREFIX ?= /usr/local
.PHONY: install
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)
