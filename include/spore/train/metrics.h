// SPDX-License-Identifier: Apache-2.0
#pragma once
// Evaluation metrics, accumulated batch by batch (MindSpore's nn.Metric): reset(), update() per
// batch, value() at the end. Classification metrics take logits or probabilities (N, C) and
// integer labels (N); they read the tensors on the host, so they never enter a compiled graph.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "spore/tensor.h"

namespace spore::train {

class Metric {
 public:
  virtual ~Metric() = default;
  /// The key under which fit/evaluate report the value ("accuracy", "top5_accuracy", "loss").
  virtual std::string name() const = 0;
  virtual void reset() = 0;
  /// One batch: `output` (N, C) scores, `labels` (N) class indices; `loss` is the batch's mean
  /// loss (undefined when not computed).
  virtual void update(const Tensor& output, const Tensor& labels, const Tensor& loss) = 0;
  virtual double value() const = 0;
  /// What has been accumulated (counts, sums), so a checkpoint taken inside an epoch resumes
  /// the epoch's metrics where they were; counts are exact below 2^53. The default (empty)
  /// suits a metric without resumable state: on a mid-epoch resume it restarts from reset().
  virtual std::vector<double> state() const { return {}; }
  /// Reloads a state() of a metric of the same kind; throws spore::Error on a size mismatch or
  /// values no run could have accumulated. The default resets the metric.
  virtual void load_state(const std::vector<double>& /*s*/) { reset(); }
};

/// Fraction of samples whose highest score is the label (ties go to the lower class index).
class Accuracy : public Metric {
 public:
  std::string name() const override { return "accuracy"; }
  void reset() override { correct_ = total_ = 0; }
  void update(const Tensor& output, const Tensor& labels, const Tensor& loss) override;
  double value() const override;
  std::vector<double> state() const override;
  void load_state(const std::vector<double>& s) override;

 private:
  int64_t correct_ = 0, total_ = 0;
};

/// Fraction of samples whose label is among the k highest scores.
class TopKAccuracy : public Metric {
 public:
  explicit TopKAccuracy(int64_t k);
  std::string name() const override { return "top" + std::to_string(k_) + "_accuracy"; }
  void reset() override { correct_ = total_ = 0; }
  void update(const Tensor& output, const Tensor& labels, const Tensor& loss) override;
  double value() const override;
  std::vector<double> state() const override;
  void load_state(const std::vector<double>& s) override;

 private:
  int64_t k_;
  int64_t correct_ = 0, total_ = 0;
};

/// The sample-weighted mean of the batches' mean losses.
class LossMetric : public Metric {
 public:
  std::string name() const override { return "loss"; }
  void reset() override { sum_ = 0, count_ = 0; }
  void update(const Tensor& output, const Tensor& labels, const Tensor& loss) override;
  double value() const override;
  std::vector<double> state() const override;
  void load_state(const std::vector<double>& s) override;

 private:
  double sum_ = 0;
  int64_t count_ = 0;
};

/// Counts (true class, predicted class) pairs; value() is the accuracy it implies.
class ConfusionMatrix : public Metric {
 public:
  explicit ConfusionMatrix(int64_t num_classes);
  std::string name() const override { return "confusion_accuracy"; }
  void reset() override;
  void update(const Tensor& output, const Tensor& labels, const Tensor& loss) override;
  double value() const override;
  std::vector<double> state() const override;
  void load_state(const std::vector<double>& s) override;
  /// (num_classes, num_classes) int64: row = true class, column = predicted class.
  Tensor matrix() const;
  /// Text table for logs.
  std::string str() const;

 private:
  int64_t n_;
  std::vector<int64_t> counts_;
};

/// Builds a metric by name: "accuracy", "top<k>_accuracy" (e.g. top5_accuracy), "loss".
std::unique_ptr<Metric> make_metric(const std::string& name);

}  // namespace spore::train
