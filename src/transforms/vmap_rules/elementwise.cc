// SPDX-License-Identifier: Apache-2.0
// vmap rules of the elementwise primitives: one rule for all of them. Operands broadcast from the
// right, so an unbatched operand already lines up with the per-example dims; a batched operand
// gets 1s inserted after its batch axis up to the highest per-example rank, so its batch axis
// lands in front of everything. The primitive then runs once on the whole batch.
#include "transforms/vmap_rules/vmap_rules.h"

namespace spore::transforms::vmap_rules {
namespace {

void elementwise(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int> in_axes,
                 std::vector<Tensor>& out, std::vector<int>& out_axes) {
  int64_t rank = 0;
  for (size_t i = 0; i < in.size(); ++i) rank = std::max(rank, example_rank(in[i], in_axes[i]));
  std::vector<Tensor> args(in.begin(), in.end());
  for (size_t i = 0; i < in.size(); ++i)
    if (in_axes[i] >= 0) args[i] = lift(in[i], rank);
  out = call(p, attrs, args);
  all_batched(out, out_axes);
}

// masked_fill(x, mask): the output has x's shape and the mask broadcasts to it, never the other
// way, so x is batched whenever the mask is.
void masked_fill(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int> in_axes,
                 std::vector<Tensor>& out, std::vector<int>& out_axes) {
  const int64_t batch = batch_size(in, in_axes);
  const Tensor x = batched(in[0], in_axes[0], batch);
  const Tensor mask = in_axes[1] >= 0 ? lift(in[1], x.dim() - 1) : in[1];
  out = call(p, attrs, std::vector<Tensor>{x, mask});
  all_batched(out, out_axes);
}

}  // namespace

void install_elementwise_vmap_rules() {
  static const char* const kNames[] = {
      // unary
      "neg", "abs", "sign", "exp", "expm1", "log", "log1p", "log2", "sqrt", "rsqrt", "reciprocal", "square", "sin",
      "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "relu", "relu6", "leaky_relu", "elu",
      "selu", "gelu", "gelu_tanh", "silu", "mish", "softplus", "hardswish", "hardsigmoid", "erf", "floor", "ceil",
      "round", "trunc", "erfinv", "isnan", "isinf", "isfinite", "logical_not", "cast", "copy", "stop_gradient",
      // binary
      "add", "sub", "mul", "div", "maximum", "minimum", "pow", "atan2", "floor_divide", "remainder", "equal",
      "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_xor",
      "bitwise_and", "bitwise_or", "bitwise_xor",
      // ternary
      "where", "clamp", "lerp"};
  for (const char* name : kNames) def_vmap(name, &elementwise);
  def_vmap("masked_fill", &masked_fill);
}

}  // namespace spore::transforms::vmap_rules
