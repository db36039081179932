// SPDX-License-Identifier: Apache-2.0
#include "kernel_test_env.h"

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>

namespace spore::codegen::testing {
namespace {

std::string g_startup_cxx;
std::string g_owned_cache;  // the cache directory this process made (removed at exit)

void remove_owned_cache() { remove_temp_dir(g_owned_cache); }

}  // namespace

std::string fresh_temp_dir() {
  const char* t = std::getenv("TMPDIR");
  std::string tmpl = std::string(t && *t ? t : "/tmp") + "/spore-test-kernels-XXXXXX";
  return ::mkdtemp(tmpl.data()) ? tmpl : std::string();
}

void remove_temp_dir(const std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

const std::string& use_test_kernel_cache() {
  static const std::string dir = [] {
    if (const char* e = std::getenv("SPORE_KERNEL_CACHE"); e && *e) return std::string(e);
    std::string d = fresh_temp_dir();
    ::setenv("SPORE_KERNEL_CACHE", d.c_str(), 1);
    g_owned_cache = d;
    std::atexit(remove_owned_cache);
    return d;
  }();
  return dir;
}

const std::string& startup_spore_cxx() { return g_startup_cxx; }

std::string child_compiler_env() { return "SPORE_CXX='" + g_startup_cxx + "'"; }

UseHostCompiler::UseHostCompiler() { ::setenv("SPORE_CXX", g_startup_cxx.c_str(), 1); }
UseHostCompiler::~UseHostCompiler() { ::setenv("SPORE_CXX", "none", 1); }

namespace {
// At static initialization, before any test (or thread) runs.
[[maybe_unused]] const bool kAtStart = [] {
  if (const char* e = std::getenv("SPORE_CXX")) g_startup_cxx = e;
  else ::setenv("SPORE_CXX", "none", 1);
  use_test_kernel_cache();
  return true;
}();
}  // namespace

}  // namespace spore::codegen::testing
