// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <string>
#include <vector>

#include "spore/tensor.h"

namespace spore::ops {

/// numpy.matmul semantics: 1-D operands are promoted and squeezed, batch dimensions broadcast.
Tensor matmul(const Tensor& a, const Tensor& b);
/// beta * bias + alpha * (a @ b) for 2-D a and b; bias broadcasts (fused into the GEMM).
Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b, double beta = 1.0, double alpha = 1.0);
/// The outer product of two 1-D tensors: out[i][j] = a[i] * b[j] (any dtype, promoted).
Tensor outer(const Tensor& a, const Tensor& b);
/// Einstein summation: explicit ("ij,jk->ik") or implicit ("ij,jk") output, repeated
/// subscripts take diagonals ("ii->i"), any number of operands contracted left to right as
/// batched matmuls. No ellipsis; every subscript must have one size across operands.
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);

}  // namespace spore::ops
