// SPDX-License-Identifier: Apache-2.0
#include "backends/cpu/isa.h"
#include "codegen/tile_ops.h"

namespace spore::cpu {
// The per-ISA copies' getters (tile_ops.isa.cc).
const codegen::TileKernels& tile_kernels_base();
const codegen::TileKernels& tile_kernels_avx2();
const codegen::TileKernels& tile_kernels_avx512();
}  // namespace spore::cpu

namespace spore::codegen {

const TileKernels& tile_kernels() {
  static const TileKernels& k = cpu::select_isa(&cpu::tile_kernels_base, &cpu::tile_kernels_avx2, &cpu::tile_kernels_avx512);
  return k;
}

}  // namespace spore::codegen
