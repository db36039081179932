// SPDX-License-Identifier: Apache-2.0
#pragma once
// The host C++ compiler as the kernel generator's back end: it finds the compiler
// (SPORE_CXX: a name or path, "none" to disable; else `c++`, then `g++` on PATH), compiles one
// emitted translation unit to a shared object with kKernelFlags, loads it with dlopen and looks
// up its kernels, through the disk cache (kernel_cache.h). Compiles run on one background
// thread so that the interpreter serves calls meanwhile. SPORE_DUMP_KERNELS=dir writes each
// unit's source there as <key>.cc.
//
// Every setting (SPORE_CXX, SPORE_KERNEL_CACHE / XDG_CACHE_HOME / HOME, SPORE_DUMP_KERNELS,
// TMPDIR, and the environment the compiler runs with) is read on the requesting thread when a
// compile is requested; the worker never reads the environment, so callers may setenv between
// requests. At exit the worker takes no new jobs, drops queued ones and is joined before static
// destruction.
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

/// The CPU's features as -march=native sees them (the `flags` line of /proc/cpuinfo on x86,
/// `Features` on aarch64), or empty when unknown (then the disk cache is not used).
const std::string& cpu_features();

/// A unit's full cache key material: its kernels' arity, the generator version, the compiler,
/// the flags, the CPU's features and the source. Stored in the cache entry and compared byte
/// for byte on load; its hash (unit_key) only names the entry.
std::string unit_key_material(const std::string& source, const std::string& arity, const HostCompiler& cxx);
uint64_t unit_key(const std::string& source, const std::string& arity, const HostCompiler& cxx);

/// Compiles (or loads from the cache) `source` and returns the addresses of `symbols`, or
/// nothing with `error` saying why. `arity` names the kernels' inputs and outputs with their
/// dtypes (part of the key). Synchronous; the shared object stays loaded.
std::optional<std::vector<void*>> compile_and_load(const std::string& source, const std::vector<std::string>& symbols,
                                                   const std::string& arity, std::string* error);

/// A unit to build later: its source, symbols, arity and what to do with the result.
struct UnitRequest {
  std::string source;
  std::vector<std::string> symbols;
  std::string arity;
  std::function<void(std::optional<std::vector<void*>>)> done;
};

/// Queues compile_and_load on the background thread (settings read now); `done` runs there
/// with the symbols, or with nothing when the unit could not be built (the error is reported
/// once on stderr), and then the `on_failure` units are queued with the same settings (a
/// graph's unit falls back to its kernels one by one). Dropped when the process is exiting.
void compile_async(std::string source, std::vector<std::string> symbols, std::string arity,
                   std::function<void(std::optional<std::vector<void*>>)> done,
                   std::vector<UnitRequest> on_failure = {});

/// Blocks until every queued compile has finished (tests, benchmarks).
void wait_for_compiles();

/// How many times this process has run the compiler on a unit (cache hits do not count).
int64_t compiler_invocations();

/// How many units this process could not build (compile errors, no compiler when one was asked).
int64_t compile_failures();

}  // namespace spore::codegen
