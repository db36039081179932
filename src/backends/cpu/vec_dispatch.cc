// SPDX-License-Identifier: Apache-2.0
#include <cstdlib>
#include <string_view>

#include "backends/cpu/isa.h"
#include "backends/cpu/vec_kernels.h"
#include "spore/error.h"

namespace spore::cpu {

namespace {
Isa detect() {
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
  if (const char* s = std::getenv("SPORE_ISA"); s && *s) {
    std::string_view v(s);
    SPORE_CHECK(v == "base" || v == "avx2" || v == "avx512", "[isa] SPORE_ISA='", v,
                "' is unknown; use base, avx2 or avx512");
    SPORE_CHECK(v != "avx512" || avx512, "[isa] SPORE_ISA=avx512 but this CPU lacks AVX-512");
    SPORE_CHECK(v != "avx2" || avx2, "[isa] SPORE_ISA=avx2 but this CPU lacks AVX2/FMA/F16C");
    return v == "base" ? Isa::Base : v == "avx2" ? Isa::Avx2 : Isa::Avx512;
  }
  return avx512 ? Isa::Avx512 : avx2 ? Isa::Avx2 : Isa::Base;
}
}  // namespace

Isa cpu_isa() {
  static const Isa isa = detect();
  return isa;
}

const char* isa_name(Isa isa) { return isa == Isa::Avx512 ? "avx512" : isa == Isa::Avx2 ? "avx2" : "base"; }

const VecKernels& vec_kernels_base();
const VecKernels& vec_kernels_avx2();
const VecKernels& vec_kernels_avx512();

const VecKernels& vec_kernels() {
  static const VecKernels& k = select_isa(&vec_kernels_base, &vec_kernels_avx2, &vec_kernels_avx512);
  return k;
}

}  // namespace spore::cpu
