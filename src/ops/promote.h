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

/// Promotion category: bool 0 < integer 1 < floating 2.
int category(DType t);

/// The literal for `t (op) s`, made directly in the dtype promotion will pick (t's dtype unless
/// the literal raises the category), so the op needs no second literal or cast.
Tensor literal_for(const Tensor& t, Scalar s);

/// A weak 0-d literal holding `s` in `dtype`, made without dispatch: literals are constants.
Tensor literal(Scalar s, DType dtype);

/// `x` converted to `dtype` (weak flag kept), or x itself.
Tensor to_dtype(const Tensor& x, DType dtype);

/// Throws "[op] value 1000 cannot be converted to int8 without overflow; ..." when the number
/// `s` does not fit dtype `t` (PyTorch's checked Scalar conversion). Integer dtypes refuse
/// out-of-range and non-finite values; floating dtypes and bool accept any number. Call it
/// wherever a C++ number is stored in a tensor's dtype (fills, bounds, pad values).
void check_scalar_fits(Scalar s, DType t, const char* op);

}  // namespace spore::ops
