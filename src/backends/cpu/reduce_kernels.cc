// SPDX-License-Identifier: Apache-2.0
// Picks the reduction loops compiled for this CPU's instruction set (see isa.h).
#include "backends/cpu/reduce_kernels.h"

#include "backends/cpu/isa.h"

namespace spore::cpu {

const ReduceKernels& reduce_kernels_base();
const ReduceKernels& reduce_kernels_avx2();
const ReduceKernels& reduce_kernels_avx512();

const ReduceKernels& reduce_kernels() {
  static const ReduceKernels& k = select_isa(&reduce_kernels_base, &reduce_kernels_avx2, &reduce_kernels_avx512);
  return k;
}

}  // namespace spore::cpu
