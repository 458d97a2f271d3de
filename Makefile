# Sluice: `make run` (demo), `make test` (every test), `make bench` (benchmarks).
# Each target installs the Debian packages the build needs when they are missing.

BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)
NRANKS     ?= 4
CTEST_ARGS ?=

# command-or-file : Debian package
DEPS := cmake:cmake ninja:ninja-build g++:g++ gnuplot:gnuplot-nox \
        /usr/include/gtest/gtest.h:libgtest-dev /usr/include/hwloc.h:libhwloc-dev \
        /usr/include/liburing.h:liburing-dev nft:nftables ip:iproute2 \
        /usr/lib/x86_64-linux-gnu/pkgconfig/pmix.pc:libpmix-dev pkg-config:pkg-config

.PHONY: all deps configure build run test test-release test-asan bench clean

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

$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

$(ASAN_BUILD)/build.ninja: | deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_SANITIZE=ON

run: build
	$(BUILD)/bin/sluicerun -n $(NRANKS) --timeout 120 $(BUILD)/bin/sluice-demo

# The release build's full suite, then the sanitizer build's unit and multi-process tests.
test: test-release test-asan

test-release: build
	cd $(BUILD) && ctest --output-on-failure -j 2 --timeout 600 $(CTEST_ARGS)

test-asan: deps $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	  ctest --output-on-failure -j 2 --timeout 900 -L '^(unit|mp|mpi)$$' $(CTEST_ARGS)

bench: build
	mkdir -p bench/results
	$(BUILD)/bin/sluicerun -n 2 --bind core $(BUILD)/bin/sluice-bench pingpong --json \
	  | tee bench/results/pingpong-sluice.jsonl
	@if [ -x bench/peers/run.sh ]; then bench/peers/run.sh; fi

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)

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
