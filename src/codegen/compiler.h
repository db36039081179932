// SPDX-License-Identifier: Apache-2.0
#pragma once
// The host C++ compiler as the kernel generator's back end: it finds the compiler
// (SPORE_CXX: a name or path, "none" to disable; else `c++`, then `g++` on PATH), compiles one
// emitted translation unit to a shared object with kKernelFlags, loads it with dlopen and looks
// up its kernels, through the disk cache (kernel_cache.h). Compiles run on one background
// thread so that the interpreter serves calls meanwhile. SPORE_DUMP_KERNELS=dir writes each
// unit's source there as <key>.cc.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace spore::codegen {

/// The flags every unit is compiled with. Beyond the issue's `-O2 -march=native -shared -fPIC
/// -nostdlib`: -fvect-cost-model=dynamic (g++ 12's -O2 "very cheap" model vectorizes no loop
/// whose trip count is unknown, i.e. none of ours), -ffp-contract=off (the interpreter rounds
/// each product and sum, so no FMA contraction), -fno-math-errno and -fno-trapping-math (inline
/// sqrt, if-convertible selects). None of them changes a value.
inline constexpr const char* kKernelFlags =
    "-O2 -march=native -fvect-cost-model=dynamic -shared -fPIC -nostdlib -ffp-contract=off -fno-math-errno "
    "-fno-trapping-math";

struct HostCompiler {
  std::string path;      // absolute
  std::string identity;  // first line of `path --version`
};

/// The host compiler, or nothing (then a one-time notice on stderr says the interpreter runs).
/// Found again when SPORE_CXX changes.
std::optional<HostCompiler> host_compiler();

/// The cache key of a unit: its source, the generator version, the compiler, the flags and the
/// CPU's features.
uint64_t unit_key(const std::string& source, const HostCompiler& cxx);

/// Compiles (or loads from the cache) `source` and returns the addresses of `symbols`, or
/// nothing with `error` saying why. Synchronous; the shared object stays loaded.
std::optional<std::vector<void*>> compile_and_load(const std::string& source, const std::vector<std::string>& symbols,
                                                   std::string* error);

/// Queues compile_and_load on the background thread; `done` runs there with the symbols, or
/// with nothing when the unit could not be built (the error is reported once on stderr).
void compile_async(std::string source, std::vector<std::string> symbols,
                   std::function<void(std::optional<std::vector<void*>>)> done);

/// Blocks until every queued compile has finished (tests, benchmarks).
void wait_for_compiles();

/// How many times this process has run the compiler on a unit (cache hits do not count).
int64_t compiler_invocations();

}  // namespace spore::codegen
