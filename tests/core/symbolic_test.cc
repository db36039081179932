// SPDX-License-Identifier: Apache-2.0
// Shape inference over symbolic dimensions: the same infer functions that serve eager calls
// must carry a symbolic batch through (what jit's dynamic batch will rely on).
#include <gtest/gtest.h>

#include "core/primitive.h"
#include "prims/binary.h"
#include "prims/matmul.h"
#include "prims/reduce.h"
#include "prims/views.h"
#include "spore/spore.h"

namespace spore {
namespace {

OutTypes infer(const Primitive& p, const void* attrs, std::vector<TensorType> in) {
  OutTypes out;
  p.infer(attrs, in, out);
  return out;
}

TEST(Symbolic, ArithmeticFoldsConstantsAndInternsExpressions) {
  Dim b = new_symbol("batch");
  EXPECT_TRUE(is_symbolic(b));
  EXPECT_FALSE(is_symbolic(-1));  // a bad user size is never a symbol
  EXPECT_EQ(dim_str(b), "batch");
  EXPECT_EQ(dim_mul(b, 4), dim_mul(b, 4));
  EXPECT_EQ(dim_str(dim_mul(b, 4)), "(batch*4)");
  EXPECT_EQ(dim_add(4, -2), 2);
  EXPECT_EQ(dim_sub(2, 5), -3);
  EXPECT_EQ(dim_floordiv(-7, 2), -4);
  EXPECT_EQ(dim_mul(b, 1), b);
  EXPECT_EQ(dim_sub(b, b), 0);
  EXPECT_EQ(shape_str(Shape{b, 3}), "(batch, 3)");
}

TEST(Symbolic, InferenceCarriesABatchSymbol) {
  Dim b = new_symbol("n");
  const NoAttrs none;
  // Broadcasting: (n, 3) + (1, 3) -> (n, 3)
  auto add = infer(prims::binary_primitive(cpu::BinaryOp::add), &none,
                   {{DType::Float32, false, {b, 3}}, {DType::Float32, false, {1, 3}}});
  EXPECT_EQ(add.t[0].shape, (Shape{b, 3}));
  // matmul: (n, 3) @ (3, 5) -> (n, 5)
  prims::MatmulAttrs mm;
  auto m = infer(prims::matmul_primitive(), &mm, {{DType::Float32, false, {b, 3}}, {DType::Float32, false, {3, 5}}});
  EXPECT_EQ(m.t[0].shape, (Shape{b, 5}));
  // reshape (n, 3) -> (n*3)
  prims::ReshapeAttrs r{Shape{dim_mul(b, 3)}};
  auto rs = infer(prims::reshape_primitive(), &r, {{DType::Float32, false, {b, 3}}});
  EXPECT_EQ(dim_str(rs.t[0].shape[0]), "(n*3)");
  // sum over axis 1 keeps the symbol
  prims::ReduceAttrs sa;
  sa.axes = {1};
  auto s = infer(prims::reduce_primitive(prims::ReduceOp::Sum), &sa, {{DType::Float32, false, {b, 3}}});
  EXPECT_EQ(s.t[0].shape, (Shape{b}));
  // A mismatch of constants is still an error under symbols.
  EXPECT_THROW(infer(prims::binary_primitive(cpu::BinaryOp::add), &none,
                     {{DType::Float32, false, {b, 3}}, {DType::Float32, false, {b, 4}}}),
               Error);
}

}  // namespace
}  // namespace spore
