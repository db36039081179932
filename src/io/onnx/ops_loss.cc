// SPDX-License-Identifier: Apache-2.0
// ONNX losses (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss), composed from ops so the
// spec's weighting and ignore_index rules are explicit: "mean" divides by the summed weights
// of the targets that are not ignored.
#include "io/onnx/op_context.h"
#include "spore/ops.h"

namespace spore::io::onnx_detail {

namespace {

using Ts = std::vector<Tensor>;
namespace o = spore::ops;

// input (N, C, d...) log-probabilities; target (N, d...) class indices.
Tensor nll(const OpContext& c, const Tensor& input, const Tensor& target, const Tensor& weight) {
  Tensor t = o::cast(target, DType::Int64);
  Tensor keep;
  if (c.attr("ignore_index")) {
    keep = o::not_equal(t, o::full_like(t, c.i("ignore_index", 0)));
    t = o::where(keep, t, o::zeros_like(t));
  }
  Tensor picked = o::squeeze(o::gather(input, 1, o::unsqueeze(t, 1)), 1);
  Tensor w = weight.defined() ? o::reshape(o::index_select(weight, 0, o::reshape(t, {numel_of(t.shape())})), t.shape())
                              : o::ones_like(picked);
  if (keep.defined()) w = o::mul(w, o::cast(keep, w.dtype()));
  Tensor loss = o::neg(o::mul(picked, w));
  const std::string red = c.s("reduction", "mean");
  if (red == "none") return loss;
  if (red == "sum") return o::sum(loss);
  if (red != "mean") c.fail("reduction '" + red + "' is not one of none, sum, mean");
  return o::div(o::sum(loss), o::sum(w));
}

Ts nll_op(const OpContext& c) { return {nll(c, c.in(0), c.in(1), c.has(2) ? c.in(2) : Tensor())}; }

Ts softmax_cross_entropy_op(const OpContext& c) {
  Tensor log_prob = o::log_softmax(c.in(0), 1);
  return {nll(c, log_prob, c.in(1), c.has(2) ? c.in(2) : Tensor()), log_prob};
}

}  // namespace

void add_loss_ops(OpTable& t) {
  const OpTable rows = {
      {"NegativeLogLikelihoodLoss", 12, 17, nll_op},
      {"SoftmaxCrossEntropyLoss", 12, 17, softmax_cross_entropy_op},
  };
  t.insert(t.end(), rows.begin(), rows.end());
}

}  // namespace spore::io::onnx_detail
