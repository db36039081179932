// SPDX-License-Identifier: Apache-2.0
#pragma once
// Run-time choice of instruction set for our own vectorized kernels. A family of kernels puts
// its loops in a `*.isa.cc` file, which CMake compiles three times (SPORE_ISA = base, avx2,
// avx512), each copy in its own namespace; a plain .cc picks one copy with select_isa().
#include <cstdint>

#define SPORE_ISA_CAT2(a, b) a##b
#define SPORE_ISA_CAT(a, b) SPORE_ISA_CAT2(a, b)
/// In a *.isa.cc file: `SPORE_ISA_NAME(my_kernels)` expands to my_kernels_avx512 (etc.).
#define SPORE_ISA_NAME(name) SPORE_ISA_CAT(SPORE_ISA_CAT(name, _), SPORE_ISA)
#define SPORE_ISA_STR2(a) #a
#define SPORE_ISA_STR(a) SPORE_ISA_STR2(a)
/// Marks the few functions a *.isa.cc file exports (its SPORE_ISA_NAME table getters). The ISA
/// copies are compiled with -fvisibility=hidden and every other symbol is made local to its copy
/// at build time (see CMakeLists.txt), so an unmarked function is not callable from other files.
#define SPORE_ISA_EXPORT __attribute__((visibility("default")))

namespace spore::cpu {

enum class Isa : uint8_t { Base, Avx2, Avx512 };

/// The widest instruction set this CPU supports (SPORE_ISA=base|avx2|avx512 overrides), decided once.
Isa cpu_isa();
const char* isa_name(Isa isa);

/// Picks the table for the current CPU: `select_isa(&t_base, &t_avx2, &t_avx512)`. Takes the
/// functions, not their results: only the chosen one may run (building an AVX-512 table on a
/// CPU without AVX-512 would fault).
template <class T>
const T& select_isa(const T& (*base)(), const T& (*avx2)(), const T& (*avx512)()) {
  switch (cpu_isa()) {
    case Isa::Avx512: return avx512();
    case Isa::Avx2: return avx2();
    default: return base();
  }
}

}  // namespace spore::cpu
