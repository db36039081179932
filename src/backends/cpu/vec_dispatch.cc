// SPDX-License-Identifier: Apache-2.0
// Picks the widest instruction set the CPU supports, once (SPORE_ISA=base|avx2|avx512 overrides).
#include <cstdlib>
#include <string_view>

#include "backends/cpu/vec_kernels.h"
#include "spore/error.h"

namespace spore::cpu {

const VecKernels& vec_kernels_base();
const VecKernels& vec_kernels_avx2();
const VecKernels& vec_kernels_avx512();

namespace {
const VecKernels& choose() {
  __builtin_cpu_init();
  bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
  if (const char* s = std::getenv("SPORE_ISA"); s && *s) {
    std::string_view v(s);
    SPORE_CHECK(v == "base" || v == "avx2" || v == "avx512", "[isa] SPORE_ISA='", v,
                "' is unknown; use base, avx2 or avx512");
    SPORE_CHECK(v != "avx512" || avx512, "[isa] SPORE_ISA=avx512 but this CPU lacks AVX-512");
    SPORE_CHECK(v != "avx2" || avx2, "[isa] SPORE_ISA=avx2 but this CPU lacks AVX2/FMA");
    if (v == "base") return vec_kernels_base();
    if (v == "avx2") return vec_kernels_avx2();
    return vec_kernels_avx512();
  }
  if (avx512) return vec_kernels_avx512();
  if (avx2) return vec_kernels_avx2();
  return vec_kernels_base();
}
}  // namespace

const VecKernels& vec_kernels() {
  static const VecKernels& k = choose();
  return k;
}

}  // namespace spore::cpu
