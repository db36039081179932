// SPDX-License-Identifier: Apache-2.0
#pragma once
// The bridge between the primitive registry and the IR (src/ir knows ops only by name, through
// OpInfo): every primitive becomes an IR op whose attributes print, parse and compare through its
// typed attribute struct and whose nodes are type-checked by the primitive's own inference. Also
// converts types between the two layers, and defines the IR's `constant` op (a literal).
#include "core/primitive.h"
#include "ir/graph.h"

namespace spore::transforms {

/// Registers every primitive (and `constant`) with the IR; idempotent.
void register_ir_ops();

ir::DType to_ir(DType t);
DType from_ir(ir::DType t);
ir::TensorType to_ir(const TensorType& t);
/// Symbols become run-time dimensions (symbol_named); expressions of symbols are not supported.
TensorType from_ir(const ir::TensorType& t);

/// A literal: a weak 0-d tensor's value (C++ numbers in `x * 2.0`), stored exactly.
struct ConstantAttrs {
  DType dtype = DType::Float32;
  bool weak = true;
  double f = 0;   // floating dtypes
  int64_t i = 0;  // integer and bool dtypes
  static constexpr auto fields() {
    return std::make_tuple(field("dtype", &ConstantAttrs::dtype), field("weak", &ConstantAttrs::weak),
                           field("f", &ConstantAttrs::f), field("i", &ConstantAttrs::i));
  }
};
inline constexpr const char* kConstantOp = "constant";
/// The attributes of a 0-d tensor as a constant, and the tensor a constant node makes.
ConstantAttrs constant_of(const Tensor& t);
Tensor tensor_of(const ConstantAttrs& c);

}  // namespace spore::transforms
