// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <cstdint>
#include <type_traits>

#include "spore/dtype.h"

namespace spore {

/// A C++ number passed to an op. Scalars are weak: `x * 2.0` keeps x's float16 dtype, and
/// only a change of category (bool < integer < floating) moves an integer tensor to float32.
class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Float };
  Scalar(bool v) : kind_(Kind::Bool), i_(v) {}  // NOLINT: implicit on purpose
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(Kind::Int), i_(static_cast<int64_t>(v)) {}  // NOLINT
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : kind_(Kind::Float), d_(static_cast<double>(v)) {}  // NOLINT

  Kind kind() const { return kind_; }
  double to_double() const { return kind_ == Kind::Float ? d_ : static_cast<double>(i_); }
  int64_t to_int() const { return kind_ == Kind::Float ? static_cast<int64_t>(d_) : i_; }
  /// The dtype a weak scalar of this kind would have on its own.
  DType default_dtype() const {
    return kind_ == Kind::Bool ? DType::Bool : kind_ == Kind::Int ? DType::Int64 : DType::Float32;
  }

 private:
  Kind kind_;
  int64_t i_ = 0;
  double d_ = 0;
};

}  // namespace spore
