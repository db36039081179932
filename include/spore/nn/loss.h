// SPDX-License-Identifier: Apache-2.0
#pragma once
// Losses, as functions and as Cells (PyTorch's semantics and defaults). Each is written to stay
// finite where the naive formula overflows: log-sum-exp for cross-entropy, the
// max(x, 0) - x*y + log1p(exp(-|x|)) form for BCE with logits, clamped logs for BCE.
#include "spore/nn/cell.h"
#include "spore/ops/nn.h"

namespace spore::nn {

/// How per-element losses are combined. BatchMean (sum / batch size) is KLDivLoss's only.
enum class Reduction { None, Mean, Sum, BatchMean };

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction r = Reduction::Mean);
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction r = Reduction::Mean);
/// 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (beta = 0: L1).
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction r = Reduction::Mean, double beta = 1.0);
/// 0.5 d^2 where |d| <= delta, else delta (|d| - 0.5 delta).
Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction r = Reduction::Mean, double delta = 1.0);
/// Logits (N, C, ...) against class indices (N, ...) or class probabilities (N, C, ...).
Tensor cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight = {}, int64_t ignore_index = -100,
                     Reduction r = Reduction::Mean, double label_smoothing = 0.0);
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const Tensor& weight = {}, int64_t ignore_index = -100,
                Reduction r = Reduction::Mean);
/// Probabilities in [0, 1] against targets; logs are clamped at -100 as PyTorch does.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                            Reduction r = Reduction::Mean);
/// Logits against targets; pos_weight (broadcast over the last axis) weighs the positive term.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                                        const Tensor& pos_weight = {}, Reduction r = Reduction::Mean);
/// KL(target || exp(input)) with input log-probabilities; target probabilities or, with
/// log_target, log-probabilities. Use Reduction::BatchMean for the true KL divergence.
Tensor kl_div(const Tensor& input, const Tensor& target, Reduction r = Reduction::Mean, bool log_target = false);

/// A cell of (input, target) -> loss.
class LossCell : public Cell {
 public:
  LossCell(std::string type_name, Reduction r);
  virtual Tensor construct(const Tensor& input, const Tensor& target) = 0;
  Tensor operator()(const Tensor& input, const Tensor& target) { return construct(input, target); }
  Reduction reduction() const { return reduction_; }

 protected:
  /// Class weights are the caller's data, not drawn state: a reset keeps them.
  void reset_own() override {}
  Reduction reduction_;
};

class MSELoss : public LossCell {
 public:
  explicit MSELoss(Reduction r = Reduction::Mean) : LossCell("MSELoss", r) {}
  Tensor construct(const Tensor& input, const Tensor& target) override;
};

class L1Loss : public LossCell {
 public:
  explicit L1Loss(Reduction r = Reduction::Mean) : LossCell("L1Loss", r) {}
  Tensor construct(const Tensor& input, const Tensor& target) override;
};

class SmoothL1Loss : public LossCell {
 public:
  explicit SmoothL1Loss(Reduction r = Reduction::Mean, double beta = 1.0) : LossCell("SmoothL1Loss", r), beta_(beta) {}
  Tensor construct(const Tensor& input, const Tensor& target) override;

 private:
  double beta_;
};

class HuberLoss : public LossCell {
 public:
  explicit HuberLoss(Reduction r = Reduction::Mean, double delta = 1.0) : LossCell("HuberLoss", r), delta_(delta) {}
  Tensor construct(const Tensor& input, const Tensor& target) override;

 private:
  double delta_;
};

struct CrossEntropyOptions {
  Tensor weight;  // per-class weights (C), a buffer of the cell
  int64_t ignore_index = -100;
  Reduction reduction = Reduction::Mean;
  double label_smoothing = 0.0;
};

class CrossEntropyLoss : public LossCell {
 public:
  explicit CrossEntropyLoss(CrossEntropyOptions o = {});
  Tensor construct(const Tensor& logits, const Tensor& target) override;
  Tensor weight;

 private:
  int64_t ignore_index_;
  double label_smoothing_;
};

class NLLLoss : public LossCell {
 public:
  explicit NLLLoss(Tensor weight = {}, int64_t ignore_index = -100, Reduction r = Reduction::Mean);
  Tensor construct(const Tensor& log_probs, const Tensor& target) override;
  Tensor weight;

 private:
  int64_t ignore_index_;
};

class BCELoss : public LossCell {
 public:
  explicit BCELoss(Tensor weight = {}, Reduction r = Reduction::Mean);
  Tensor construct(const Tensor& input, const Tensor& target) override;
  Tensor weight;
};

class BCEWithLogitsLoss : public LossCell {
 public:
  explicit BCEWithLogitsLoss(Tensor weight = {}, Tensor pos_weight = {}, Reduction r = Reduction::Mean);
  Tensor construct(const Tensor& input, const Tensor& target) override;
  Tensor weight;
  Tensor pos_weight;
};

class KLDivLoss : public LossCell {
 public:
  explicit KLDivLoss(Reduction r = Reduction::Mean, bool log_target = false)
      : LossCell("KLDivLoss", r), log_target_(log_target) {}
  Tensor construct(const Tensor& input, const Tensor& target) override;

 private:
  bool log_target_;
};

}  // namespace spore::nn
