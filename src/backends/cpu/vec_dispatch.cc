// SPDX-License-Identifier: Apache-2.0
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "backends/cpu/isa.h"
#include "backends/cpu/vec_kernels.h"

namespace spore::cpu {

namespace {
Isa detect() {
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
  // Decided lazily, possibly inside an OpenMP region where an exception would terminate the
  // process: a bad SPORE_ISA is reported on stderr and ignored, never thrown.
  if (const char* s = std::getenv("SPORE_ISA"); s && *s) {
    const std::string_view v(s);
    const bool known = v == "base" || v == "avx2" || v == "avx512";
    const bool usable = v == "base" || (v == "avx2" && (avx2 || avx512)) || (v == "avx512" && avx512);
    if (known && usable) return v == "base" ? Isa::Base : v == "avx2" ? Isa::Avx2 : Isa::Avx512;
    std::fprintf(stderr, "spore: ignoring SPORE_ISA='%s' (%s); using %s\n", s,
                 known ? "this CPU lacks it" : "use base, avx2 or avx512", avx512 ? "avx512" : avx2 ? "avx2" : "base");
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
