// SPDX-License-Identifier: Apache-2.0
#pragma once
// "conv_fused": a convolution followed by an epilogue of elementwise post-ops (prims/epilogue.h),
// made only by the conv_epilogue pass (src/passes/conv_epilogue.h) from a conv and the chain of
// elementwise ops that alone reads it (bias, inference BatchNorm as a per-channel scale and
// shift, ReLU/ReLU6, a residual add). Like the compiler's `fused` node it never meets a
// transform: it is made after autodiff, so it has no jvp, vjp or vmap rule. The oneDNN kernel
// runs the epilogue as post-ops (the conv writes its result once, already activated); the
// reference kernel, and the oneDNN one when oneDNN refuses a post-op list, run the conv and then
// each post-op with the very kernel of the unfused primitive.
#include <string>

#include "prims/conv.h"
#include "prims/epilogue.h"

namespace spore::prims {

/// Attributes of "conv_fused". Inputs: x, w, the bias when `has_bias`, then one operand per
/// Binary post-op, in order. The conv fields mean what ConvAttrs' do. Post-ops name their
/// primitive ("relu", "add", ...), so a saved graph does not depend on enum order.
struct ConvFusedAttrs {
  IntList stride, pad_l, pad_r, dilation;
  int64_t groups = 1;
  bool has_bias = false;
  IntList post_kind;                    // PostKind of each post-op, applied in order
  std::string post_ops;                 // their primitives' names, comma-separated
  SmallVec<double, 6> post_a, post_b;   // their parameters (see PostKind)
  static constexpr auto fields() {
    return std::make_tuple(field("stride", &ConvFusedAttrs::stride), field("pad_l", &ConvFusedAttrs::pad_l),
                           field("pad_r", &ConvFusedAttrs::pad_r), field("dilation", &ConvFusedAttrs::dilation),
                           field("groups", &ConvFusedAttrs::groups), field("has_bias", &ConvFusedAttrs::has_bias),
                           field("post_kind", &ConvFusedAttrs::post_kind), field("post_ops", &ConvFusedAttrs::post_ops),
                           field("post_a", &ConvFusedAttrs::post_a), field("post_b", &ConvFusedAttrs::post_b));
  }
  /// The convolution alone.
  ConvAttrs conv() const { return {stride, pad_l, pad_r, dilation, groups}; }
  size_t num_post() const { return post_kind.size(); }
  PostKind kind(size_t i) const { return static_cast<PostKind>(post_kind[i]); }
  /// Index of the first Binary operand among the inputs.
  size_t first_operand() const { return has_bias ? 3 : 2; }
  /// The post-op list (a view of this object).
  PostOpList post_list() const;
};

inline constexpr const char* kConvFusedOp = "conv_fused";
const Primitive& conv_fused_primitive();

}  // namespace spore::prims
