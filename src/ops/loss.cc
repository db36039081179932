// SPDX-License-Identifier: Apache-2.0
// Public loss ops: nll_loss (a primitive) and cross_entropy (log_softmax over the class axis,
// then nll_loss for class indices or soft_nll_loss for class probabilities).
#include "ops/nn_checks.h"
#include "prims/loss.h"
#include "runtime/dispatch.h"
#include "spore/ops/nn.h"

namespace spore::ops {
namespace {

prims::LossReduction to_prim(Reduction r) {
  return r == Reduction::None ? prims::LossReduction::None
         : r == Reduction::Sum ? prims::LossReduction::Sum
                               : prims::LossReduction::Mean;
}

// The target's expected shape: the input without its class axis (axis 1, or 0 for (C)).
Shape batch_shape(const Tensor& x) {
  Shape s;
  for (int64_t i = 0; i < x.dim(); ++i)
    if (i != (x.dim() == 1 ? 0 : 1)) s.push_back(x.shape()[i]);
  return s;
}

Tensor class_weight(const char* op, const Tensor& weight, const Tensor& x) {
  if (!weight.defined()) return weight;
  const Dim C = x.shape()[x.dim() == 1 ? 0 : 1];
  SPORE_CHECK(weight.dim() == 1 && weight.shape()[0] == C, "[", op, "] weight has shape ", shape_str(weight.shape()),
              " but input shape ", shape_str(x.shape()), " has ", C, " classes; pass a weight of shape (", C, ",)");
  SPORE_CHECK(is_floating(weight.dtype()), "[", op, "] weight must be floating, got ", dtype_name(weight.dtype()));
  return to_dtype(weight, x.dtype());
}

// Shared by nll_loss and cross_entropy (`ce`); errors, the kernel's too, name the op called.
Tensor nll(bool ce, const Tensor& lp, const Tensor& target, const Tensor& weight, int64_t ignore_index,
           Reduction reduction, double label_smoothing) {
  const char* op = ce ? "cross_entropy" : "nll_loss";
  SPORE_CHECK(target.defined(), "[", op, "] target is an undefined tensor");
  SPORE_CHECK(is_integral(target.dtype()), "[", op, "] class-index targets must be an integer tensor, got ",
              dtype_name(target.dtype()), "; cast to int64 (or pass float class probabilities to cross_entropy)");
  const Shape want = batch_shape(lp);
  SPORE_CHECK(target.shape() == want, "[", op, "] target shape ", shape_str(target.shape()),
              " does not match input shape ", shape_str(lp.shape()), ": expected ", shape_str(want));
  const Tensor w = class_weight(op, weight, lp);
  prims::NllLossAttrs a{ignore_index, to_prim(reduction), label_smoothing, w.defined(), ce};
  return std::move(
      runtime::dispatch(prims::nll_loss_primitive(), &a, nn_detail::inputs(lp, to_dtype(target, DType::Int64), w)).t[0]);
}

}  // namespace

Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                Reduction reduction) {
  nn_detail::check_float("nll_loss", log_probs);
  SPORE_CHECK(log_probs.dim() >= 1, "[nll_loss] needs log-probabilities (N, C, ...) or (C), got a 0-d tensor");
  return nll(false, log_probs, target, weight, ignore_index, reduction, 0.0);
}

Tensor cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                     Reduction reduction, double label_smoothing) {
  nn_detail::check_float("cross_entropy", logits);
  SPORE_CHECK(logits.dim() >= 1, "[cross_entropy] needs logits (N, C, ...) or (C), got a 0-d tensor");
  SPORE_CHECK(label_smoothing >= 0 && label_smoothing <= 1, "[cross_entropy] label_smoothing must be in [0, 1], got ",
              label_smoothing);
  SPORE_CHECK(target.defined(), "[cross_entropy] target is an undefined tensor");
  const Tensor lp = log_softmax(logits, logits.dim() == 1 ? 0 : 1);
  if (!is_floating(target.dtype())) return nll(true, lp, target, weight, ignore_index, reduction, label_smoothing);
  SPORE_CHECK(ignore_index == -100, "[cross_entropy] ignore_index (", ignore_index,
              ") is not supported with class-probability (floating) targets; leave it at -100");
  SPORE_CHECK(target.shape() == logits.shape(), "[cross_entropy] class-probability target shape ",
              shape_str(target.shape()), " does not match logits shape ", shape_str(logits.shape()),
              "; pass probabilities of the same shape, or int64 class indices of shape ", shape_str(batch_shape(logits)));
  const Tensor w = class_weight("cross_entropy", weight, logits);
  prims::SoftNllLossAttrs a{to_prim(reduction), label_smoothing, w.defined()};
  return std::move(
      runtime::dispatch(prims::soft_nll_loss_primitive(), &a, nn_detail::inputs(lp, to_dtype(target, lp.dtype()), w)).t[0]);
}

}  // namespace spore::ops
