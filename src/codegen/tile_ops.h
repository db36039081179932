// SPDX-License-Identifier: Apache-2.0
#pragma once
// The loop interpreter's vector instructions: one loop per instruction over a whole tile,
// compiled once per instruction set (tile_ops.isa.cc, like backends/cpu/vec_kernels.isa.cc) and
// chosen at run time. The math is the same functor rows the unfused kernels use
// (backends/cpu/unary_math.h, binary_math.h), so a fused op gives the bits of the unfused
// vector loop. Every loop runs whole vectors only: `n` must be a multiple of `lanes`; the
// interpreter pads tiles, so no element ever takes a scalar-tail path and the result of an
// element does not depend on where a tile or a thread's range ends.
//
// Boolean values live in the compute type as 0 and 1 (compare results, bool inputs), so one
// register file serves a whole program.
#include <cstdint>

#include "backends/cpu/binary_math.h"
#include "backends/cpu/unary_math.h"

namespace spore::codegen {

/// Comparisons (result 1 or 0). NaN compares unequal to everything, as IEEE and the unfused
/// kernels say: ne is !(a == b).
enum class CompareCode : uint8_t { eq, ne, lt, le, gt, ge, kCount };
/// Logical ops on "nonzero" (NaN counts as true, as the unfused kernels' `x != 0`).
enum class LogicalCode : uint8_t { land, lor, lxor, kCount };
/// One-operand tests giving 1 or 0.
enum class PredicateCode : uint8_t { isnan, isinf, isfinite, logical_not, to_bool, kCount };

template <class T>
struct TileOps {
  int lanes = 1;
  void (*unary[cpu::kNumUnaryOps])(const T* x, T* y, int64_t n, const cpu::UnaryParams& p);
  void (*binary[cpu::kNumBinaryOps])(const T* a, const T* b, T* y, int64_t n);
  void (*compare[static_cast<int>(CompareCode::kCount)])(const T* a, const T* b, T* y, int64_t n);
  void (*logical[static_cast<int>(LogicalCode::kCount)])(const T* a, const T* b, T* y, int64_t n);
  void (*predicate[static_cast<int>(PredicateCode::kCount)])(const T* x, T* y, int64_t n);
  /// y = c != 0 ? a : b (bit-exact select).
  void (*where)(const T* c, const T* a, const T* b, T* y, int64_t n);
  /// min(max(x, lo), hi) with the unfused kernel's NaN rules.
  void (*clamp)(const T* x, const T* lo, const T* hi, T* y, int64_t n);
  /// PyTorch's two-sided lerp, as the unfused kernel.
  void (*lerp)(const T* a, const T* b, const T* w, T* y, int64_t n);
};

struct TileKernels {
  const char* isa = "";
  TileOps<float> f32;
  TileOps<double> f64;
};

/// The tile kernels for this CPU (the instruction set backends/cpu/isa.h picks), chosen once.
const TileKernels& tile_kernels();

}  // namespace spore::codegen
