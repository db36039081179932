// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "ir/graph.h"

namespace spore::passes {

/// Rewrites the transpose of a 2-D matrix product, permute{[1,0]}(matmul(a, b)), as the product
/// of the transposes, matmul(b^T, a^T), where the product has no other use: the transposes of
/// the operands are strided views the matmul kernel reads as they are (and a^T of a^T is a), so
/// the result is made contiguous in the layout its users read. Only transposes read element by
/// element (by an elementwise op, or as a graph output) are rewritten: a matmul reads a
/// transposed operand at no cost. A weight gradient, (x^T dy)^T,
/// becomes dy^T x: the optimizer's update then reads it row by row instead of across rows.
/// Level 2 only: the product sums the same terms, but the GEMM may order them differently, so
/// results agree with the unrewritten graph within the O2 tolerance, not bitwise. Returns `g`
/// itself when nothing matched.
ir::GraphPtr transpose_matmul(const ir::GraphPtr& g);

}  // namespace spore::passes
