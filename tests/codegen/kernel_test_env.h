// SPDX-License-Identifier: Apache-2.0
#pragma once
// The kernel generator's test environment, set when the test binary starts (before any thread):
// - SPORE_CXX defaults to "none", so tests that run fused nodes at O2 for other reasons spawn no
//   compiles they never wait for; the compile and cache tests opt in (UseHostCompiler, or
//   child_compiler_env for a child process). Compiles read SPORE_CXX when they are requested,
//   so setting it on the test's thread before requesting is enough.
// - SPORE_KERNEL_CACHE points at a private temporary directory, removed at exit, unless the
//   environment already names one (a parent test running this binary as a child passes its own).
#include <string>

namespace spore::codegen::testing {

/// The kernel cache directory tests use (sets SPORE_KERNEL_CACHE when unset); created 0700.
const std::string& use_test_kernel_cache();

/// A fresh private (0700) directory under $TMPDIR; remove it with remove_temp_dir.
std::string fresh_temp_dir();

/// Removes `dir` and everything under it (no-op for an empty path).
void remove_temp_dir(const std::string& dir);

/// The SPORE_CXX the binary started with ("" when it was unset: find c++ or g++ on PATH).
const std::string& startup_spore_cxx();

/// "SPORE_CXX='<startup value>'", for the environment of a child that should compile.
std::string child_compiler_env();

/// Enables compiles for its scope (SPORE_CXX back to its startup value), "none" after. Use on
/// the test's main thread only.
class UseHostCompiler {
 public:
  UseHostCompiler();
  ~UseHostCompiler();
  UseHostCompiler(const UseHostCompiler&) = delete;
  UseHostCompiler& operator=(const UseHostCompiler&) = delete;
};

}  // namespace spore::codegen::testing
