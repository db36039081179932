// SPDX-License-Identifier: Apache-2.0
#pragma once
// The elementwise epilogue of a compiler-made library node (conv_fused, matmul_fused): a list
// of post-ops applied in order to the running value v (the conv's or product's result, then
// each post-op's result), which a oneDNN kernel runs inside the primitive
// (src/backends/cpu/onednn_post_ops.h) and the reference kernels run with the very CPU kernels
// of the unfused primitives, so that path computes what the unfused graph computes, bit for bit.
// The attributes hold the list as four parallel fields (post_kind, post_ops, post_a, post_b);
// PostOpList is a view of them that the shared code below reads.
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "backends/cpu/binary_math.h"
#include "backends/cpu/unary_math.h"
#include "core/primitive.h"

namespace spore::prims {

/// What one post-op does to the running value v.
enum class PostKind : int64_t {
  Unary = 0,         // v = op(v; a, b): a unary float primitive and its parameters a and b
  Binary = 1,        // v = op(v, operand) (a == 1: op(operand, v)); the operand is the next extra
                     // input and broadcasts to v's shape without growing it
  BinaryScalar = 2,  // v = op(v, a) (b == 1: op(a, v)): a literal operand
};

/// A node's post-op list, viewing its attributes (which outlive it).
struct PostOpList {
  const char* op = "";               // the node's op, for messages
  std::span<const int64_t> kinds;    // PostKind of each post-op
  std::string_view names;            // their primitives' names, comma-separated
  std::span<const double> a, b;      // their parameters (see PostKind)
  size_t first_operand = 0;          // the input holding the first Binary operand
  size_t size() const { return kinds.size(); }
  PostKind kind(size_t i) const { return static_cast<PostKind>(kinds[i]); }
  /// How many Binary post-ops (extra inputs) the list has.
  size_t num_operands() const;
};

/// A post-op list resolved to its primitives (once per prepared kernel: no lookups per call).
struct Epilogue {
  struct Step {
    PostKind kind;
    int code;         // the cpu::UnaryOp or cpu::BinaryOp
    KernelRunFn run;  // the unfused primitive's CPU kernel
    double a, b;
  };
  std::vector<Step> steps;
};
/// Resolves and checks a post-op list; throws spore::Error naming the node's op and a bad entry.
Epilogue resolve_epilogue(const PostOpList& p);

/// Checks the extra inputs `in[p.first_operand...]` against result shape `y` of dtype `t`: one per
/// Binary post-op, each of dtype `t` and broadcasting to `y` without growing it.
void check_post_operands(const PostOpList& p, std::span<const TensorType> in, const Shape& y, DType t);

/// A fused node's cost: its library op's (`base`) plus one flop per post-op and result element
/// and the bytes of the post-op operands (inputs from p.first_operand on).
Cost epilogue_cost(Cost base, const PostOpList& p, std::span<const TensorType> in, const TensorType& out);

/// The highest result rank an epilogue runs over (its dim-order scratch is fixed-size).
inline constexpr int kMaxEpilogueRank = 8;

/// Runs post-ops [first, end) of `e` over `out` (which holds the value they apply to), each with
/// the CPU kernel of its unfused primitive, in `out`'s memory order; `in` are the node's inputs.
void run_epilogue(const PostOpList& p, const Epilogue& e, size_t first, std::span<const Buffer> in, const Buffer& out,
                  const KernelContext& ctx);

/// The unary / binary float op of that name, if any (the ops a post-op may name).
std::optional<cpu::UnaryOp> unary_op_named(std::string_view name);
std::optional<cpu::BinaryOp> binary_op_named(std::string_view name);

}  // namespace spore::prims
