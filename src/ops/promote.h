// SPDX-License-Identifier: Apache-2.0
#pragma once
// PyTorch's type promotion (docs/dtypes.md): operands are ranked dimensioned tensor >
// zero-dim tensor > weak C++ literal; a lower rank changes the result only by raising the
// category (bool < integer < floating), and then weak literals give the default dtype of their
// category (int64, float32) while zero-dim tensors keep their own dtype.
#include <initializer_list>

#include "spore/tensor.h"

namespace spore::ops {

DType result_type(std::initializer_list<const Tensor*> xs);
inline DType result_type(const Tensor& a, const Tensor& b) { return result_type({&a, &b}); }

/// The dtype floating functions compute in: integers and bool go to float32.
inline DType float_type(DType t) { return is_floating(t) ? t : DType::Float32; }

/// `x` converted to `dtype` (weak flag kept), or x itself.
Tensor to_dtype(const Tensor& x, DType dtype);

}  // namespace spore::ops
