// SPDX-License-Identifier: Apache-2.0
#pragma once
// "matmul_fused": a matmul (alpha = beta = 1) followed by an epilogue of elementwise post-ops
// (prims/epilogue.h), made only by the matmul_epilogue pass (src/passes/matmul_epilogue.h) from
// a matmul and the chain of elementwise ops that alone reads its result: a linear layer's
// activation, a transformer's residual add. Like conv_fused it is made after autodiff and never
// meets a transform (no jvp, vjp or vmap rule). The oneDNN kernel runs the epilogue as the
// GEMM's post-ops (the product is written once, already activated); the reference kernel, and
// the oneDNN one for post-ops oneDNN cannot take, run the matmul and then each post-op with the
// very kernel of the unfused primitive.
#include <string>

#include "prims/conv.h"  // IntList
#include "prims/epilogue.h"
#include "prims/matmul.h"

namespace spore::prims {

/// Attributes of "matmul_fused". Inputs: a, b, the bias when `has_bias`, then one operand per
/// Binary post-op, in order. trans_a / trans_b and the bias mean what MatmulAttrs' do.
struct MatmulFusedAttrs {
  bool trans_a = false;
  bool trans_b = false;
  bool has_bias = false;
  IntList post_kind;                   // PostKind of each post-op, applied in order
  std::string post_ops;                // their primitives' names, comma-separated
  SmallVec<double, 6> post_a, post_b;  // their parameters (see PostKind)
  static constexpr auto fields() {
    return std::make_tuple(field("trans_a", &MatmulFusedAttrs::trans_a), field("trans_b", &MatmulFusedAttrs::trans_b),
                           field("has_bias", &MatmulFusedAttrs::has_bias),
                           field("post_kind", &MatmulFusedAttrs::post_kind),
                           field("post_ops", &MatmulFusedAttrs::post_ops), field("post_a", &MatmulFusedAttrs::post_a),
                           field("post_b", &MatmulFusedAttrs::post_b));
  }
  /// The product alone.
  MatmulAttrs matmul() const { return {trans_a, trans_b, 1.0, 1.0}; }
  size_t num_post() const { return post_kind.size(); }
  /// Index of the first Binary operand among the inputs.
  size_t first_operand() const { return has_bias ? 3 : 2; }
  /// The post-op list (a view of this object).
  PostOpList post_list() const;
};

inline constexpr const char* kMatmulFusedOp = "matmul_fused";
const Primitive& matmul_fused_primitive();

}  // namespace spore::prims
