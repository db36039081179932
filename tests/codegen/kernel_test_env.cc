// SPDX-License-Identifier: Apache-2.0
#include "kernel_test_env.h"

#include <stdlib.h>

#include <cstdlib>

namespace spore::codegen::testing {

std::string fresh_temp_dir() {
  const char* t = std::getenv("TMPDIR");
  std::string tmpl = std::string(t && *t ? t : "/tmp") + "/spore-test-kernels-XXXXXX";
  return ::mkdtemp(tmpl.data()) ? tmpl : std::string();
}

const std::string& use_test_kernel_cache() {
  static const std::string dir = [] {
    if (const char* e = std::getenv("SPORE_KERNEL_CACHE"); e && *e) return std::string(e);
    std::string d = fresh_temp_dir();
    ::setenv("SPORE_KERNEL_CACHE", d.c_str(), 1);
    return d;
  }();
  return dir;
}

namespace {
[[maybe_unused]] const bool kAtStart = (use_test_kernel_cache(), true);
}  // namespace

}  // namespace spore::codegen::testing
