// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "ir/graph.h"

namespace spore::passes {

/// Folds a bias add into the matmul it follows: add(matmul(a, b), bias) (either operand order),
/// where the product has no other reader, no bias of its own, and `bias` is a vector over the
/// result's last dim ((N) or (1, ..., 1, N), the product's dtype), becomes matmul(a, b, bias),
/// which oneDNN runs with the bias in the GEMM's epilogue (its native bias) instead of a second
/// pass over the whole result: how exporters write a linear layer on a 3-D activation (MatMul
/// then Add) and how attention projections come out. Level 2 (a fusion): a 16-bit result now
/// takes the bias before rounding once, not after. Sub-graphs are rewritten too. Returns `g`
/// itself when nothing matched.
ir::GraphPtr matmul_bias(const ir::GraphPtr& g);

}  // namespace spore::passes
