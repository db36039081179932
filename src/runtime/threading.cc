// SPDX-License-Identifier: Apache-2.0
#include <omp.h>

#include <atomic>
#include <cstdlib>

#include "spore/error.h"
#include "spore/threading.h"

namespace spore {
namespace {

int initial_threads() {
  if (const char* s = std::getenv("SPORE_NUM_THREADS"); s && *s) {
    char* end = nullptr;
    long n = std::strtol(s, &end, 10);
    SPORE_CHECK(*end == '\0' && n >= 1 && n <= 4096, "[threading] SPORE_NUM_THREADS='", s,
                "' is not a positive thread count; use e.g. SPORE_NUM_THREADS=2");
    return static_cast<int>(n);
  }
  return omp_get_num_procs();
}

std::atomic<int>& threads() {
  static std::atomic<int> n = [] {
    int v = initial_threads();
    omp_set_num_threads(v);  // oneDNN sizes its regions from the same setting
    return v;
  }();
  return n;
}

}  // namespace

void set_num_threads(int n) {
  SPORE_CHECK(n >= 1, "[set_num_threads] thread count must be >= 1, got ", n);
  threads().store(n);
  omp_set_num_threads(n);
}

int num_threads() { return threads().load(std::memory_order_relaxed); }

}  // namespace spore
