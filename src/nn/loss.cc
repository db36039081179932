// SPDX-License-Identifier: Apache-2.0
#include "spore/nn/loss.h"

#include "spore/ops.h"

namespace spore::nn {
namespace {

ops::Reduction to_ops(Reduction r, const char* loss) {
  SPORE_CHECK(r != Reduction::BatchMean, "[", loss, "] reduction BatchMean is for kl_div only; use Mean or Sum");
  return r == Reduction::None ? ops::Reduction::None : r == Reduction::Sum ? ops::Reduction::Sum : ops::Reduction::Mean;
}

Tensor reduce(const Tensor& l, Reduction r, const char* loss) {
  switch (r) {
    case Reduction::None: return l;
    case Reduction::Sum: return ops::sum(l);
    case Reduction::Mean: return ops::mean(l);
    case Reduction::BatchMean:
      SPORE_CHECK(false, "[", loss, "] reduction BatchMean is for kl_div only; use Mean or Sum");
  }
  return l;
}

void check_pair(const Tensor& input, const Tensor& target, const char* loss) {
  SPORE_CHECK(input.defined() && target.defined(), "[", loss, "] input or target is undefined");
  SPORE_CHECK(input.shape() == target.shape(), "[", loss, "] input has shape ", shape_str(input.shape()),
              " but target has shape ", shape_str(target.shape()), "; they must match");
  SPORE_CHECK(is_floating(input.dtype()), "[", loss, "] input must be floating, got ", dtype_name(input.dtype()));
}

}  // namespace

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction r) {
  check_pair(input, target, "mse_loss");
  return reduce(ops::square(input - target), r, "mse_loss");
}

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction r) {
  check_pair(input, target, "l1_loss");
  return reduce(ops::abs(input - target), r, "l1_loss");
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction r, double beta) {
  check_pair(input, target, "smooth_l1_loss");
  SPORE_CHECK(beta >= 0, "[smooth_l1_loss] beta must be >= 0, got ", beta);
  const Tensor d = ops::abs(input - target);
  if (beta == 0) return reduce(d, r, "smooth_l1_loss");
  return reduce(ops::where(d < beta, ops::square(d) * (0.5 / beta), d - 0.5 * beta), r, "smooth_l1_loss");
}

Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction r, double delta) {
  check_pair(input, target, "huber_loss");
  SPORE_CHECK(delta > 0, "[huber_loss] delta must be > 0, got ", delta);
  const Tensor d = ops::abs(input - target);
  return reduce(ops::where(d <= delta, ops::square(d) * 0.5, (d - 0.5 * delta) * delta), r, "huber_loss");
}

Tensor cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                     Reduction r, double label_smoothing) {
  return ops::cross_entropy(logits, target, weight, ignore_index, to_ops(r, "cross_entropy"), label_smoothing);
}

Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const Tensor& weight, int64_t ignore_index, Reduction r) {
  return ops::nll_loss(log_probs, target, weight, ignore_index, to_ops(r, "nll_loss"));
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction r) {
  check_pair(input, target, "binary_cross_entropy");
  // PyTorch clamps each log at -100 so a probability of exactly 0 or 1 gives a finite loss. The
  // log is taken of a safe value where it would be clamped anyway, so the gradient there is 0
  // rather than 0 * inf = NaN (PyTorch's own backward divides by max(p (1 - p), 1e-12) instead).
  auto clamped_log = [](const Tensor& v) {
    const Tensor tiny = ops::full_like(v, 1e-38);
    const Tensor keep = ops::greater(v, tiny);
    const Tensor safe = ops::where(keep, v, ops::ones_like(v));
    return ops::where(keep, ops::maximum(ops::log(safe), ops::full_like(v, -100.0)), ops::full_like(v, -100.0));
  };
  const Tensor log_p = clamped_log(input);
  const Tensor log_q = clamped_log(1.0 - input);
  Tensor l = -(target * log_p + (1.0 - target) * log_q);
  if (weight.defined()) l = l * weight;
  return reduce(l, r, "binary_cross_entropy");
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight,
                                        const Tensor& pos_weight, Reduction r) {
  check_pair(input, target, "binary_cross_entropy_with_logits");
  // log(1 + exp(-|x|)) + max(-x, 0) = softplus(-x), without overflow for large |x|.
  const Tensor sp_neg = ops::log1p(ops::exp(-ops::abs(input))) + ops::relu(-input);
  Tensor l;
  if (pos_weight.defined()) {
    const Tensor log_weight = (pos_weight - 1.0) * target + 1.0;
    l = (1.0 - target) * input + log_weight * sp_neg;
  } else {
    l = (1.0 - target) * input + sp_neg;  // = max(x, 0) - x*y + log1p(exp(-|x|))
  }
  if (weight.defined()) l = l * weight;
  return reduce(l, r, "binary_cross_entropy_with_logits");
}

Tensor kl_div(const Tensor& input, const Tensor& target, Reduction r, bool log_target) {
  check_pair(input, target, "kl_div");
  Tensor l;
  if (log_target) {
    l = ops::exp(target) * (target - input);
  } else {
    // xlogy: 0 * log(0) = 0, and the log never sees a zero (its gradient would be 0 * inf).
    const Tensor pos = target > 0.0;
    const Tensor safe = ops::where(pos, target, ops::ones_like(target));
    l = ops::where(pos, target * ops::log(safe), ops::zeros_like(target)) - target * input;
  }
  if (r == Reduction::BatchMean) {
    const double n = input.dim() == 0 ? 1.0 : static_cast<double>(input.size(0));
    return ops::sum(l) / n;
  }
  return reduce(l, r, "kl_div");
}

LossCell::LossCell(std::string type_name, Reduction r) : Cell(std::move(type_name)), reduction_(r) {
  if (r == Reduction::BatchMean)
    SPORE_CHECK(this->type_name() == "KLDivLoss", "[", this->type_name(),
                "] reduction BatchMean is for KLDivLoss only; use Mean or Sum");
}

Tensor MSELoss::construct(const Tensor& i, const Tensor& t) { return mse_loss(i, t, reduction_); }
Tensor L1Loss::construct(const Tensor& i, const Tensor& t) { return l1_loss(i, t, reduction_); }
Tensor SmoothL1Loss::construct(const Tensor& i, const Tensor& t) { return smooth_l1_loss(i, t, reduction_, beta_); }
Tensor HuberLoss::construct(const Tensor& i, const Tensor& t) { return huber_loss(i, t, reduction_, delta_); }

CrossEntropyLoss::CrossEntropyLoss(CrossEntropyOptions o)
    : LossCell("CrossEntropyLoss", o.reduction),
      weight(std::move(o.weight)),
      ignore_index_(o.ignore_index),
      label_smoothing_(o.label_smoothing) {
  SPORE_CHECK(label_smoothing_ >= 0 && label_smoothing_ <= 1, "[CrossEntropyLoss] label_smoothing must be in [0, 1], got ",
              label_smoothing_);
  if (weight.defined()) register_buffer("weight", &weight);
}
Tensor CrossEntropyLoss::construct(const Tensor& x, const Tensor& t) {
  return cross_entropy(x, t, weight, ignore_index_, reduction_, label_smoothing_);
}

NLLLoss::NLLLoss(Tensor w, int64_t ignore_index, Reduction r)
    : LossCell("NLLLoss", r), weight(std::move(w)), ignore_index_(ignore_index) {
  if (weight.defined()) register_buffer("weight", &weight);
}
Tensor NLLLoss::construct(const Tensor& x, const Tensor& t) { return nll_loss(x, t, weight, ignore_index_, reduction_); }

BCELoss::BCELoss(Tensor w, Reduction r) : LossCell("BCELoss", r), weight(std::move(w)) {
  if (weight.defined()) register_buffer("weight", &weight);
}
Tensor BCELoss::construct(const Tensor& x, const Tensor& t) { return binary_cross_entropy(x, t, weight, reduction_); }

BCEWithLogitsLoss::BCEWithLogitsLoss(Tensor w, Tensor pw, Reduction r)
    : LossCell("BCEWithLogitsLoss", r), weight(std::move(w)), pos_weight(std::move(pw)) {
  if (weight.defined()) register_buffer("weight", &weight);
  if (pos_weight.defined()) register_buffer("pos_weight", &pos_weight);
}
Tensor BCEWithLogitsLoss::construct(const Tensor& x, const Tensor& t) {
  return binary_cross_entropy_with_logits(x, t, weight, pos_weight, reduction_);
}

Tensor KLDivLoss::construct(const Tensor& x, const Tensor& t) { return kl_div(x, t, reduction_, log_target_); }

}  // namespace spore::nn
