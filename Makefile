# SPDX-License-Identifier: Apache-2.0
# Spore's two set-up commands are `make demo` and `make test`; both install what they need.
JOBS ?= $(shell nproc)
BUILD ?= build
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release -DSPORE_WERROR=ON

.PHONY: all deps build test unit oracle asan bench demo clean

all: build

deps:
	@./scripts/install-deps.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD) -j $(JOBS)

# Unit tests, the seed examples' five lines, the layering check, the `spore` command line end to end,
# the per-ISA symbol checks, the PyTorch oracle (with this CPU's
# kernels, then again with the baseline and AVX2 ones), then the sanitizer build.
test: build
	$(BUILD)/bin/spore_tests --gtest_brief=1
	test "$$($(BUILD)/bin/seed_tour)" = "$$(printf '3\n12\n14\n7\n12')" || { echo "seed_tour: expected 3 12 14 7 12"; exit 1; }
	python3 tests/include_graph.py
	/usr/bin/python3 tests/tools/cli_test.py $(BUILD)/bin/spore
	tests/isa_symbols_check.sh $(BUILD)
	tests/oracle/run.sh $(BUILD)/bin/spore_oracle_cases $(BUILD)/oracle
	SPORE_ISA=base tests/oracle/run.sh $(BUILD)/bin/spore_oracle_cases $(BUILD)/oracle-base
	if grep -qw avx2 /proc/cpuinfo; then SPORE_ISA=avx2 SPORE_NUM_THREADS=1 tests/oracle/run.sh $(BUILD)/bin/spore_oracle_cases $(BUILD)/oracle-avx2; fi
	$(MAKE) asan

# Every oracle case's kernels run once more under the sanitizers (values are checked by `test`).
asan: deps
	cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1" -DSPORE_SANITIZE=ON -DSPORE_BUILD_BENCH=OFF -DSPORE_WERROR=ON
	ninja -C build-asan -j $(JOBS) spore_tests spore_oracle_cases
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 build-asan/bin/spore_tests --gtest_brief=1
	rm -rf build-asan/oracle && mkdir -p build-asan/oracle
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 build-asan/bin/spore_oracle_cases build-asan/oracle

bench: build
	./bench/run.sh $(BUILD)

# The main job (scripts/demo.sh): LeNet-5 on Fashion-MNIST in Graph mode, evaluate, save, reload.
# Builds only the command line, so a fresh machine runs it in minutes.
demo: deps $(BUILD)/build.ninja
	ninja -C $(BUILD) -j $(JOBS) spore_cli
	./scripts/demo.sh $(BUILD)

clean:
	rm -rf $(BUILD) build-asan
