// SPDX-License-Identifier: Apache-2.0
// ONNX reductions, arg-reductions, softmax-family and CumSum. Reductions keep the input dtype
// (ONNX does; our integer sums widen to int64, so the result is cast back).
#include <algorithm>

#include "io/onnx/op_context.h"
#include "spore/ops.h"

namespace spore::io::onnx_detail {

namespace {

using Ts = std::vector<Tensor>;
namespace o = spore::ops;

// The axes of a reduction: the `axes` input from opset 13 (ReduceSum) / 18 (others), else the
// attribute; nullopt means "reduce nothing" (noop_with_empty_axes).
std::optional<o::Axes> reduce_axes(const OpContext& c, bool axes_input) {
  std::vector<int64_t> axes;
  if (axes_input && c.has(1)) {
    axes = c.ints_of(1);
  } else if (auto a = c.ints("axes")) {
    axes = *a;
  }
  if (axes.empty() && c.i("noop_with_empty_axes", 0)) return std::nullopt;
  const int64_t rank = c.in(0).dim();
  for (auto& a : axes) a = axis_of(c, a, rank);
  if (axes.empty())
    for (int64_t k = 0; k < rank; ++k) axes.push_back(k);
  return axes;
}

template <Tensor (*F)(const Tensor&, const o::Axes&, bool)>
Ts reduce(const OpContext& c) {
  const Tensor& x = c.in(0);
  const bool sum_input = std::string(c.node().op_type()) == "ReduceSum" && c.opset() >= 13;
  auto axes = reduce_axes(c, sum_input);
  if (!axes) return {x};
  return {o::cast(F(x, *axes, c.i("keepdims", 1) != 0), x.dtype())};
}

Tensor l1(const Tensor& x, const o::Axes& a, bool k) { return o::sum(o::abs(x), a, k); }
Tensor l2(const Tensor& x, const o::Axes& a, bool k) { return o::sqrt(o::sum(o::square(x), a, k)); }
Tensor log_sum(const Tensor& x, const o::Axes& a, bool k) { return o::log(o::sum(x, a, k)); }
Tensor sum_square(const Tensor& x, const o::Axes& a, bool k) { return o::sum(o::mul(x, x), a, k); }
Tensor log_sum_exp(const Tensor& x, const o::Axes& a, bool k) { return o::logsumexp(x, a, k); }

template <bool kMax>
Ts arg_reduce(const OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t axis = axis_of(c, c.i("axis", 0), x.dim());
  const bool keep = c.i("keepdims", 1) != 0;
  auto f = kMax ? static_cast<Tensor (*)(const Tensor&, int64_t, bool)>(o::argmax)
                : static_cast<Tensor (*)(const Tensor&, int64_t, bool)>(o::argmin);
  if (!c.i("select_last_index", 0)) return {f(x, axis, keep)};
  // The last extreme: search the reversed axis, then map the index back.
  Tensor idx = f(o::flip(x, {axis}), axis, keep);
  return {o::sub(o::full_like(idx, x.size(axis) - 1), idx)};
}

// Before opset 13 the softmax family flattens to 2-D at `axis` and normalizes the rows.
template <Tensor (*F)(const Tensor&, int64_t)>
Ts softmax_like(const OpContext& c) {
  const Tensor& x = c.in(0);
  if (c.opset() >= 13) return {F(x, axis_of(c, c.i("axis", -1), x.dim()))};
  const int64_t axis = axis_of(c, c.i("axis", 1), x.dim());
  Shape flat{1, 1};
  for (int64_t k = 0; k < x.dim(); ++k) flat[k < axis ? 0 : 1] *= x.size(k);
  return {o::reshape(F(o::reshape(x, flat), 1), x.shape())};
}
Tensor hardmax(const Tensor& x, int64_t axis) {
  Tensor idx = o::argmax(x, axis, true);
  Tensor pos = o::arange(0, x.size(axis), 1, o::TensorOptions{DType::Int64, kCPU});
  Shape s(static_cast<size_t>(x.dim()), 1);
  s[static_cast<size_t>(axis)] = x.size(axis);
  return o::cast(o::equal(o::reshape(pos, s), idx), x.dtype());
}

Ts cumsum_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  const auto ax = c.ints_of(1);
  if (ax.size() != 1) c.fail("axis must hold one value");
  const int64_t axis = axis_of(c, ax[0], x.dim());
  const bool reverse = c.i("reverse", 0) != 0;
  Tensor v = reverse ? o::flip(x, {axis}) : x;
  Tensor s = o::cumsum(v, axis);
  if (c.i("exclusive", 0)) {
    // Shift by one along the axis: a zero first, the last partial sum dropped.
    std::vector<int64_t> pads(static_cast<size_t>(2 * x.dim()), 0);
    pads[static_cast<size_t>(2 * (x.dim() - 1 - axis))] = 1;
    s = o::slice(o::pad(s, pads), axis, 0, x.size(axis));
  }
  if (reverse) s = o::flip(s, {axis});
  return {o::cast(s, x.dtype())};
}

}  // namespace

void add_reduce_ops(OpTable& t) {
  const OpTable rows = {
      {"ReduceSum", 1, 17, reduce<o::sum>},          {"ReduceMean", 1, 17, reduce<o::mean>},
      {"ReduceMax", 1, 17, reduce<o::amax>},         {"ReduceMin", 1, 17, reduce<o::amin>},
      {"ReduceProd", 1, 17, reduce<o::prod>},        {"ReduceL1", 1, 17, reduce<l1>},
      {"ReduceL2", 1, 17, reduce<l2>},               {"ReduceLogSum", 1, 17, reduce<log_sum>},
      {"ReduceLogSumExp", 1, 17, reduce<log_sum_exp>}, {"ReduceSumSquare", 1, 17, reduce<sum_square>},
      {"ArgMax", 1, 17, arg_reduce<true>},           {"ArgMin", 1, 17, arg_reduce<false>},
      {"Softmax", 1, 17, softmax_like<o::softmax>},  {"LogSoftmax", 1, 17, softmax_like<o::log_softmax>},
      {"Hardmax", 1, 17, softmax_like<hardmax>},     {"CumSum", 11, 17, cumsum_op},
  };
  t.insert(t.end(), rows.begin(), rows.end());
}

}  // namespace spore::io::onnx_detail
