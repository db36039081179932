// SPDX-License-Identifier: Apache-2.0
#include "spore/dtype.h"

#include <array>
#include <string>

#include "spore/error.h"

namespace spore {

namespace {
constexpr std::array<std::string_view, kNumDTypes> kNames = {
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"};
}

std::string_view dtype_name(DType t) { return kNames[static_cast<int>(t)]; }

DType dtype_from_name(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (kNames[i] == name) return static_cast<DType>(i);
  throw Error(detail::cat("[dtype] unknown dtype '", name,
                          "'; use one of bool, uint8, int8, int16, int32, int64, float16, bfloat16, "
                          "float32, float64"));
}

// PyTorch's promotion table (c10/core/ScalarType.h), restricted to our dtypes.
DType promote_types(DType a, DType b) {
  using D = DType;
  constexpr D b1 = D::Bool, u1 = D::UInt8, i1 = D::Int8, i2 = D::Int16, i4 = D::Int32, i8 = D::Int64,
              f2 = D::Float16, bf = D::BFloat16, f4 = D::Float32, f8 = D::Float64;
  static constexpr D table[kNumDTypes][kNumDTypes] = {
      /*        b1  u1  i1  i2  i4  i8  f2  bf  f4  f8 */
      /* b1 */ {b1, u1, i1, i2, i4, i8, f2, bf, f4, f8},
      /* u1 */ {u1, u1, i2, i2, i4, i8, f2, bf, f4, f8},
      /* i1 */ {i1, i2, i1, i2, i4, i8, f2, bf, f4, f8},
      /* i2 */ {i2, i2, i2, i2, i4, i8, f2, bf, f4, f8},
      /* i4 */ {i4, i4, i4, i4, i4, i8, f2, bf, f4, f8},
      /* i8 */ {i8, i8, i8, i8, i8, i8, f2, bf, f4, f8},
      /* f2 */ {f2, f2, f2, f2, f2, f2, f2, f4, f4, f8},
      /* bf */ {bf, bf, bf, bf, bf, bf, f4, bf, f4, f8},
      /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f4, f4, f8},
      /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8},
  };
  return table[static_cast<int>(a)][static_cast<int>(b)];
}

}  // namespace spore
