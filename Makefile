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

# Unit tests, the PyTorch oracle, then the unit tests again under ASan + UBSan.
test: build
	ctest --test-dir $(BUILD) --output-on-failure
	$(MAKE) asan

asan: deps
	cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1" -DSPORE_SANITIZE=ON -DSPORE_BUILD_BENCH=OFF -DSPORE_WERROR=ON
	ninja -C build-asan -j $(JOBS) spore_tests
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 build-asan/bin/spore_tests --gtest_brief=1

bench: build
	./bench/run.sh $(BUILD)

demo: build
	$(BUILD)/bin/op_tour

clean:
	rm -rf $(BUILD) build-asan
