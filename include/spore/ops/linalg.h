// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <string>

#include "spore/tensor.h"

namespace spore::ops {

/// numpy.matmul semantics: 1-D operands are promoted and squeezed, batch dimensions broadcast.
Tensor matmul(const Tensor& a, const Tensor& b);
/// beta * bias + alpha * (a @ b) for 2-D a and b; bias broadcasts (fused into the GEMM).
Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b, double beta = 1.0, double alpha = 1.0);
Tensor outer(const Tensor& a, const Tensor& b);
/// Einstein summation for the common contractions ("ij,jk->ik", "bij,bjk->bik", "ii->i", ...).
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);

}  // namespace spore::ops
