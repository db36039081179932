// SPDX-License-Identifier: Apache-2.0
// Compiled three times (SPORE_ISA = base, avx2, avx512; see CMakeLists.txt). The functors are
// the unfused kernels' own rows, instantiated on the same xsimd batch type with the same flags,
// so each lane computes what backends/cpu/vec_kernels.isa.cc computes.
#include "backends/cpu/isa.h"
#include "codegen/tile_ops.h"

namespace spore::cpu {
namespace SPORE_ISA {
namespace {

using codegen::CompareCode;
using codegen::LogicalCode;
using codegen::PredicateCode;
using codegen::TileKernels;
using codegen::TileOps;
using Arch = xsimd::default_arch;

template <class T> using B = xsimd::batch<T, Arch>;
template <class T> constexpr int64_t kW = B<T>::size;

template <class T> B<T> ld(const T* p, int64_t i) { return B<T>::load_unaligned(p + i); }
template <class T> B<T> bit(xsimd::batch_bool<T, Arch> m) { return xsimd::select(m, B<T>(T(1)), B<T>(T(0))); }

template <class Op, class T>
void unary_tile(const T* x, T* y, int64_t n, const UnaryParams& p) {
  for (int64_t i = 0; i < n; i += kW<T>) Op::f(ld(x, i), p).store_unaligned(y + i);
}

template <class Op, class T>
void binary_tile(const T* a, const T* b, T* y, int64_t n) {
  for (int64_t i = 0; i < n; i += kW<T>) Op::f(ld(a, i), ld(b, i)).store_unaligned(y + i);
}

template <CompareCode C, class T>
void compare_tile(const T* a, const T* b, T* y, int64_t n) {
  for (int64_t i = 0; i < n; i += kW<T>) {
    const B<T> u = ld(a, i), v = ld(b, i);
    xsimd::batch_bool<T, Arch> m;
    if constexpr (C == CompareCode::eq) m = u == v;
    else if constexpr (C == CompareCode::ne) m = !(u == v);  // xsimd's != is ordered: false on NaN
    else if constexpr (C == CompareCode::lt) m = u < v;
    else if constexpr (C == CompareCode::le) m = u <= v;
    else if constexpr (C == CompareCode::gt) m = u > v;
    else m = u >= v;
    bit<T>(m).store_unaligned(y + i);
  }
}

template <LogicalCode C, class T>
void logical_tile(const T* a, const T* b, T* y, int64_t n) {
  const B<T> zero(T(0));
  for (int64_t i = 0; i < n; i += kW<T>) {
    const auto u = !(ld(a, i) == zero), v = !(ld(b, i) == zero);
    xsimd::batch_bool<T, Arch> m;
    if constexpr (C == LogicalCode::land) m = u && v;
    else if constexpr (C == LogicalCode::lor) m = u || v;
    else m = !(bit<T>(u) == bit<T>(v));  // batch_bool's ^ gave true for (true, true) on AVX-512
    bit<T>(m).store_unaligned(y + i);
  }
}

template <PredicateCode C, class T>
void predicate_tile(const T* x, T* y, int64_t n) {
  const B<T> zero(T(0)), inf(std::numeric_limits<T>::infinity());
  for (int64_t i = 0; i < n; i += kW<T>) {
    const B<T> v = ld(x, i);
    xsimd::batch_bool<T, Arch> m;
    if constexpr (C == PredicateCode::isnan) m = xsimd::isnan(v);
    else if constexpr (C == PredicateCode::isinf) m = xsimd::abs(v) == inf;
    else if constexpr (C == PredicateCode::isfinite) m = xsimd::abs(v) < inf;
    else if constexpr (C == PredicateCode::logical_not) m = v == zero;
    else m = !(v == zero);  // to_bool: NaN is true, as the unfused cast's `x != 0`
    bit<T>(m).store_unaligned(y + i);
  }
}

template <class T>
void where_tile(const T* c, const T* a, const T* b, T* y, int64_t n) {
  const B<T> zero(T(0));
  for (int64_t i = 0; i < n; i += kW<T>) xsimd::select(!(ld(c, i) == zero), ld(a, i), ld(b, i)).store_unaligned(y + i);
}

template <class T>
void clamp_tile(const T* x, const T* lo, const T* hi, T* y, int64_t n) {
  const B<T> nan(std::numeric_limits<T>::quiet_NaN());
  for (int64_t i = 0; i < n; i += kW<T>) {
    const B<T> v = ld(x, i), l = ld(lo, i), h = ld(hi, i);
    const B<T> m = xsimd::select(v < l, l, v);  // NaN x passes through, as the unfused kernel
    const B<T> r = xsimd::select(h < m, h, m);
    xsimd::select(xsimd::isnan(l) || xsimd::isnan(h), nan, r).store_unaligned(y + i);
  }
}

// No contraction to FMA: the unfused kernel rounds the product and the sum separately.
template <class T>
__attribute__((optimize("fp-contract=off"))) void lerp_tile(const T* a, const T* b, const T* w, T* y, int64_t n) {
  const B<T> half(T(0.5)), one(T(1));
  for (int64_t i = 0; i < n; i += kW<T>) {
    const B<T> u = ld(a, i), v = ld(b, i), t = ld(w, i);
    const B<T> d = v - u;
    xsimd::select(xsimd::abs(t) < half, u + t * d, v - d * (one - t)).store_unaligned(y + i);
  }
}

template <class T>
TileOps<T> make_ops() {
  TileOps<T> k{};
  k.lanes = static_cast<int>(kW<T>);
#define SPORE_FILL_UNARY(name, F) k.unary[static_cast<int>(UnaryOp::name)] = &unary_tile<F, T>;
  SPORE_UNARY_FLOAT_OPS(SPORE_FILL_UNARY)
#undef SPORE_FILL_UNARY
#define SPORE_FILL_BINARY(name, F) k.binary[static_cast<int>(BinaryOp::name)] = &binary_tile<F, T>;
  SPORE_BINARY_FLOAT_OPS(SPORE_FILL_BINARY)
#undef SPORE_FILL_BINARY
  k.compare[0] = &compare_tile<CompareCode::eq, T>;
  k.compare[1] = &compare_tile<CompareCode::ne, T>;
  k.compare[2] = &compare_tile<CompareCode::lt, T>;
  k.compare[3] = &compare_tile<CompareCode::le, T>;
  k.compare[4] = &compare_tile<CompareCode::gt, T>;
  k.compare[5] = &compare_tile<CompareCode::ge, T>;
  k.logical[0] = &logical_tile<LogicalCode::land, T>;
  k.logical[1] = &logical_tile<LogicalCode::lor, T>;
  k.logical[2] = &logical_tile<LogicalCode::lxor, T>;
  k.predicate[0] = &predicate_tile<PredicateCode::isnan, T>;
  k.predicate[1] = &predicate_tile<PredicateCode::isinf, T>;
  k.predicate[2] = &predicate_tile<PredicateCode::isfinite, T>;
  k.predicate[3] = &predicate_tile<PredicateCode::logical_not, T>;
  k.predicate[4] = &predicate_tile<PredicateCode::to_bool, T>;
  k.where = &where_tile<T>;
  k.clamp = &clamp_tile<T>;
  k.lerp = &lerp_tile<T>;
  return k;
}

}  // namespace

const TileKernels& tile_table() {
  static const TileKernels k = [] {
    TileKernels t;
    t.isa = SPORE_ISA_STR(SPORE_ISA);
    t.f32 = make_ops<float>();
    t.f64 = make_ops<double>();
    return t;
  }();
  return k;
}

}  // namespace SPORE_ISA

SPORE_ISA_EXPORT const codegen::TileKernels& SPORE_ISA_NAME(tile_kernels)() { return SPORE_ISA::tile_table(); }

}  // namespace spore::cpu
