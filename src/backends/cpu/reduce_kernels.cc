// SPDX-License-Identifier: Apache-2.0
// Picks the reduction loops compiled for this CPU's instruction set (see isa.h).
#include "backends/cpu/reduce_kernels.h"

#include "backends/cpu/isa.h"

namespace spore::cpu {

const ReduceKernels& reduce_kernels_base();
const ReduceKernels& reduce_kernels_avx2();
const ReduceKernels& reduce_kernels_avx512();

const ReduceKernels& reduce_kernels() {
  // Only the chosen table is built: building the AVX-512 one runs code compiled with AVX-512
  // flags (the compiler may use zmm stores to fill it), which faults on a CPU without it.
  // (select_isa(a(), b(), c()) would evaluate all three.)
  static const ReduceKernels& k = []() -> const ReduceKernels& {
    switch (cpu_isa()) {
      case Isa::Avx512: return reduce_kernels_avx512();
      case Isa::Avx2: return reduce_kernels_avx2();
      default: return reduce_kernels_base();
    }
  }();
  return k;
}

}  // namespace spore::cpu
