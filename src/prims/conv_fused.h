// SPDX-License-Identifier: Apache-2.0
#pragma once
// "conv_fused": a convolution followed by an epilogue of elementwise post-ops, made only by the
// conv_epilogue pass (src/passes/conv_epilogue.h) from a conv and the chain of elementwise ops
// that alone reads it (bias, inference BatchNorm as a per-channel scale and shift, ReLU/ReLU6,
// a residual add). Like the compiler's `fused` node it never meets a transform: it is made after
// autodiff, so it has no jvp, vjp or vmap rule. The oneDNN kernel runs the epilogue as post-ops
// (the conv writes its result once, already activated); the reference kernel, and the oneDNN one
// when oneDNN refuses a post-op list, run the conv and then each post-op with the very kernel of
// the unfused primitive, so that path computes what the unfused graph computes, bit for bit.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/cpu/binary_math.h"
#include "backends/cpu/unary_math.h"
#include "prims/conv.h"

namespace spore::prims {

/// What one post-op does to the running value v (the conv result, then each post-op's result).
enum class ConvPostKind : int64_t {
  Unary = 0,         // v = op(v; a, b): a unary float primitive and its parameters a and b
  Binary = 1,        // v = op(v, operand) (a == 1: op(operand, v)); the operand is the next extra
                     // input and broadcasts to v's shape without growing it
  BinaryScalar = 2,  // v = op(v, a) (b == 1: op(a, v)): a literal operand
};

/// Attributes of "conv_fused". Inputs: x, w, the bias when `has_bias`, then one operand per
/// Binary post-op, in order. The conv fields mean what ConvAttrs' do. Post-ops name their
/// primitive ("relu", "add", ...), so a saved graph does not depend on enum order.
struct ConvFusedAttrs {
  IntList stride, pad_l, pad_r, dilation;
  int64_t groups = 1;
  bool has_bias = false;
  IntList post_kind;                    // ConvPostKind of each post-op, applied in order
  std::string post_ops;                 // their primitives' names, comma-separated
  SmallVec<double, 6> post_a, post_b;   // their parameters (see ConvPostKind)
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
  ConvPostKind kind(size_t i) const { return static_cast<ConvPostKind>(post_kind[i]); }
  /// Index of the first Binary operand among the inputs.
  size_t first_operand() const { return has_bias ? 3 : 2; }
};

/// A post-op list resolved to its primitives (once per prepared kernel: no lookups per call).
struct ConvEpilogue {
  struct Step {
    ConvPostKind kind;
    int code;        // the cpu::UnaryOp or cpu::BinaryOp
    KernelRunFn run; // the unfused primitive's CPU kernel
    double a, b;
  };
  std::vector<Step> steps;
};
/// Resolves and checks `a`'s post-ops; throws spore::Error naming a bad entry.
ConvEpilogue resolve_epilogue(const ConvFusedAttrs& a);

/// The unary / binary float op of that name, if any (the ops a post-op may name).
std::optional<cpu::UnaryOp> unary_op_named(std::string_view name);
std::optional<cpu::BinaryOp> binary_op_named(std::string_view name);

inline constexpr const char* kConvFusedOp = "conv_fused";
const Primitive& conv_fused_primitive();

/// Runs post-ops [first, end) of `e` over `out` (which holds the value they apply to), each with
/// the CPU kernel of its unfused primitive; `in` are the node's inputs (x, w, bias, operands).
void conv_fused_epilogue(const ConvFusedAttrs& a, const ConvEpilogue& e, size_t first, std::span<const Buffer> in,
                         const Buffer& out, const KernelContext& ctx);

}  // namespace spore::prims
