// SPDX-License-Identifier: Apache-2.0
#pragma once
// Intra-op parallelism on OpenMP, the runtime Debian's oneDNN is built on: one pool for all
// kernels. A parallel region costs ~1.4 us here, so small work runs on the calling thread.
#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "spore/threading.h"

namespace spore::runtime {

/// Below this many element-operations a loop runs on one thread (~20 us of simple work).
inline constexpr int64_t kParallelGrain = 32768;

/// Calls f(begin, end) over [0, n) split into contiguous ranges of at least `grain`.
/// The split affects only speed: callers must not make results depend on it.
template <class F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
  if (n <= 0) return;
  int nt = num_threads();
  if (nt <= 1 || n <= grain || omp_in_parallel()) {
    f(int64_t{0}, n);
    return;
  }
  int64_t chunks = std::min<int64_t>(nt, (n + grain - 1) / grain);
#pragma omp parallel num_threads(static_cast<int>(chunks))
  {
    int64_t t = omp_get_thread_num();
    int64_t per = (n + chunks - 1) / chunks;
    int64_t b = t * per, e = std::min(n, b + per);
    if (b < e) f(b, e);
  }
}

/// Calls f(i) for each of `count` fixed work items (e.g. reduction chunks), in parallel when
/// `cost_per_item * count` is large. Items are independent, so results do not depend on threads.
template <class F>
void parallel_items(int64_t count, int64_t cost_per_item, F&& f) {
  int nt = num_threads();
  if (nt <= 1 || count <= 1 || count * cost_per_item <= kParallelGrain || omp_in_parallel()) {
    for (int64_t i = 0; i < count; ++i) f(i);
    return;
  }
#pragma omp parallel for num_threads(std::min<int64_t>(nt, count)) schedule(static)
  for (int64_t i = 0; i < count; ++i) f(i);
}

}  // namespace spore::runtime
