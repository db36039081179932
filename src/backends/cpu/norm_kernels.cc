// SPDX-License-Identifier: Apache-2.0
// Picks the norm_kernels.isa.cc copy for this CPU.
#include "backends/cpu/norm_kernels.h"

#include "backends/cpu/isa.h"

namespace spore::cpu {

const NormKernels& norm_kernels_base();
const NormKernels& norm_kernels_avx2();
const NormKernels& norm_kernels_avx512();

const NormKernels& norm_kernels() {
  static const NormKernels& k = select_isa(&norm_kernels_base, &norm_kernels_avx2, &norm_kernels_avx512);
  return k;
}

}  // namespace spore::cpu
