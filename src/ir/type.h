// SPDX-License-Identifier: Apache-2.0
#pragma once
// Value types of the IR: tensors (dtype, weak flag, shape of Dims, layout) and the token that
// orders effects. The IR keeps its own DType enum, mirroring spore::DType by name, so that it
// depends only on the standard library; the tracing layer converts between the two.
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/dim.h"

namespace spore::ir {

/// The ten element types, in spore::DType's order and with its names.
enum class DType : uint8_t { Bool, UInt8, Int8, Int16, Int32, Int64, Float16, BFloat16, Float32, Float64 };
inline constexpr int kNumDTypes = 10;

/// The text name of a dtype ("float32").
const char* dtype_name(DType t);
/// The dtype with this name, if any.
std::optional<DType> dtype_from_name(const std::string& name);

/// A tensor's static type. `layout` is empty except inside compiled plans.
struct TensorType {
  DType dtype = DType::Float32;
  bool weak = false;  // a Python-scalar-like type that yields to the other operand in promotion
  std::vector<Dim> shape;
  std::string layout;
  bool operator==(const TensorType&) const = default;
};

/// The type of an ordering token: values that chain I/O and collective effects.
struct TokenType {
  bool operator==(const TokenType&) const = default;
};

/// A value's type.
using Type = std::variant<TensorType, TokenType>;

/// True for the token type.
inline bool is_token(const Type& t) { return std::holds_alternative<TokenType>(t); }
/// Text form: `float32[n, 4]`, `~float32[]` (weak), `float32[2, 3]<nhwc>` (layout), `token`.
std::string type_str(const Type& t);

}  // namespace spore::ir
