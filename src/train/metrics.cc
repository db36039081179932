// SPDX-License-Identifier: Apache-2.0
#include "spore/train/metrics.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "spore/error.h"
#include "spore/ops.h"

namespace spore::train {
namespace {

// Scores as contiguous float64 (N, C) and labels as contiguous int64 (N), checked.
struct Batch {
  Tensor scores, labels;
  int64_t n = 0, c = 0;
};

Batch host_batch(const char* metric, const Tensor& output, const Tensor& labels) {
  SPORE_CHECK(output.defined() && labels.defined(), "[", metric, "] needs outputs and labels");
  SPORE_CHECK(output.dim() == 2, "[", metric, "] expects scores of shape (N, C), got ", shape_str(output.shape()),
              "; flatten extra dimensions first");
  SPORE_CHECK(labels.dim() == 1 && labels.shape()[0] == output.shape()[0], "[", metric, "] expects labels of shape (",
              output.shape()[0], ") for scores ", shape_str(output.shape()), ", got ", shape_str(labels.shape()));
  SPORE_CHECK(!is_floating(labels.dtype()) && labels.dtype() != DType::Bool, "[", metric,
              "] expects integer class labels, got ", dtype_name(labels.dtype()));
  Batch b;
  b.scores = output.to(DType::Float64).contiguous();
  b.labels = labels.to(DType::Int64).contiguous();
  b.n = output.shape()[0];
  b.c = output.shape()[1];
  const int64_t* y = b.labels.data<int64_t>();
  for (int64_t i = 0; i < b.n; ++i)
    SPORE_CHECK(y[i] >= 0 && y[i] < b.c, "[", metric, "] label ", y[i], " at row ", i, " is outside [0, ", b.c,
                ") for ", b.c, " classes");
  return b;
}

// The predicted class: the first index of the highest score (NaN scores never win).
int64_t arg_best(const double* row, int64_t c) {
  int64_t best = 0;
  for (int64_t j = 1; j < c; ++j)
    if (row[j] > row[best] || (row[best] != row[best] && row[j] == row[j])) best = j;
  return best;
}

// A state() of the wrong length is from another kind of metric: refuse before writing.
void check_state(const char* metric, const std::vector<double>& s, size_t want) {
  SPORE_CHECK(s.size() == want, "[", metric, ".load_state] expected ", want, " values, got ", s.size(),
              "; the state is from another kind of metric");
}

// A saved count is a whole number in [0, 2^53]: anything else (NaN, negative, fractional)
// is a corrupted file, and casting NaN or a huge value to int64 is undefined behaviour.
int64_t count_from(const char* metric, double v) {
  SPORE_CHECK(v >= 0 && v <= 9007199254740992.0 && v == std::floor(v), "[", metric, ".load_state] a count is ", v,
              "; expected a whole number >= 0, the state is corrupted");
  return static_cast<int64_t>(v);
}

// correct <= total: the accuracy it implies must be a fraction.
void check_counts(const char* metric, const std::vector<double>& s) {
  const int64_t correct = count_from(metric, s[0]), total = count_from(metric, s[1]);
  SPORE_CHECK(correct <= total, "[", metric, ".load_state] ", correct, " correct out of ", total,
              " samples; the state is corrupted");
}

}  // namespace

void Accuracy::update(const Tensor& output, const Tensor& labels, const Tensor&) {
  Batch b = host_batch("Accuracy", output, labels);
  const double* s = b.scores.data<double>();
  const int64_t* y = b.labels.data<int64_t>();
  for (int64_t i = 0; i < b.n; ++i) correct_ += arg_best(s + i * b.c, b.c) == y[i];
  total_ += b.n;
}
double Accuracy::value() const { return total_ ? static_cast<double>(correct_) / static_cast<double>(total_) : 0.0; }
std::vector<double> Accuracy::state() const { return {static_cast<double>(correct_), static_cast<double>(total_)}; }
void Accuracy::load_state(const std::vector<double>& s) {
  check_state("Accuracy", s, 2);
  check_counts("Accuracy", s);
  correct_ = static_cast<int64_t>(s[0]);
  total_ = static_cast<int64_t>(s[1]);
}

TopKAccuracy::TopKAccuracy(int64_t k) : k_(k) {
  SPORE_CHECK(k >= 1, "[TopKAccuracy] k must be at least 1, got ", k);
}
void TopKAccuracy::update(const Tensor& output, const Tensor& labels, const Tensor&) {
  Batch b = host_batch("TopKAccuracy", output, labels);
  SPORE_CHECK(k_ <= b.c, "[TopKAccuracy] k = ", k_, " exceeds the ", b.c, " classes");
  const double* s = b.scores.data<double>();
  const int64_t* y = b.labels.data<int64_t>();
  for (int64_t i = 0; i < b.n; ++i) {
    // The label is in the top k when fewer than k classes beat it (a lower index wins a tie).
    const double* row = s + i * b.c;
    const double target = row[y[i]];
    int64_t better = 0;
    for (int64_t j = 0; j < b.c; ++j) better += row[j] > target || (row[j] == target && j < y[i]);
    correct_ += better < k_;
  }
  total_ += b.n;
}
double TopKAccuracy::value() const {
  return total_ ? static_cast<double>(correct_) / static_cast<double>(total_) : 0.0;
}
std::vector<double> TopKAccuracy::state() const { return {static_cast<double>(correct_), static_cast<double>(total_)}; }
void TopKAccuracy::load_state(const std::vector<double>& s) {
  check_state("TopKAccuracy", s, 2);
  check_counts("TopKAccuracy", s);
  correct_ = static_cast<int64_t>(s[0]);
  total_ = static_cast<int64_t>(s[1]);
}

void LossMetric::update(const Tensor& output, const Tensor&, const Tensor& loss) {
  SPORE_CHECK(loss.defined() && loss.numel() == 1, "[LossMetric] needs the batch's mean loss as one value");
  const int64_t n = output.defined() && output.dim() > 0 ? output.shape()[0] : 1;
  sum_ += loss.to(DType::Float64).item<double>() * static_cast<double>(n);
  count_ += n;
}
double LossMetric::value() const { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }
std::vector<double> LossMetric::state() const { return {sum_, static_cast<double>(count_)}; }
void LossMetric::load_state(const std::vector<double>& s) {
  check_state("LossMetric", s, 2);
  const int64_t count = count_from("LossMetric", s[1]);
  // The sum is not checked: a diverged run's inf or NaN sum is its true state.
  sum_ = s[0];
  count_ = count;
}

ConfusionMatrix::ConfusionMatrix(int64_t num_classes) : n_(num_classes) {
  SPORE_CHECK(num_classes >= 1 && num_classes <= 100000, "[ConfusionMatrix] num_classes must be in [1, 100000], got ",
              num_classes);
  counts_.assign(static_cast<size_t>(n_ * n_), 0);
}
void ConfusionMatrix::reset() { std::fill(counts_.begin(), counts_.end(), 0); }
void ConfusionMatrix::update(const Tensor& output, const Tensor& labels, const Tensor&) {
  Batch b = host_batch("ConfusionMatrix", output, labels);
  SPORE_CHECK(b.c == n_, "[ConfusionMatrix] built for ", n_, " classes, got scores for ", b.c);
  const double* s = b.scores.data<double>();
  const int64_t* y = b.labels.data<int64_t>();
  for (int64_t i = 0; i < b.n; ++i) ++counts_[static_cast<size_t>(y[i] * n_ + arg_best(s + i * b.c, b.c))];
}
double ConfusionMatrix::value() const {
  int64_t diag = 0, total = 0;
  for (int64_t i = 0; i < n_; ++i)
    for (int64_t j = 0; j < n_; ++j) {
      total += counts_[static_cast<size_t>(i * n_ + j)];
      if (i == j) diag += counts_[static_cast<size_t>(i * n_ + j)];
    }
  return total ? static_cast<double>(diag) / static_cast<double>(total) : 0.0;
}
std::vector<double> ConfusionMatrix::state() const { return {counts_.begin(), counts_.end()}; }
void ConfusionMatrix::load_state(const std::vector<double>& s) {
  check_state("ConfusionMatrix", s, counts_.size());
  for (double v : s) count_from("ConfusionMatrix", v);  // all checked before any is written
  for (size_t i = 0; i < s.size(); ++i) counts_[i] = static_cast<int64_t>(s[i]);
}
Tensor ConfusionMatrix::matrix() const { return ops::from_vector(counts_, {n_, n_}); }
std::string ConfusionMatrix::str() const {
  std::ostringstream os;
  os << "true\\pred";
  for (int64_t j = 0; j < n_; ++j) os << '\t' << j;
  for (int64_t i = 0; i < n_; ++i) {
    os << '\n' << i;
    for (int64_t j = 0; j < n_; ++j) os << '\t' << counts_[static_cast<size_t>(i * n_ + j)];
  }
  return os.str();
}

std::unique_ptr<Metric> make_metric(const std::string& name) {
  if (name == "accuracy") return std::make_unique<Accuracy>();
  if (name == "loss") return std::make_unique<LossMetric>();
  if (name.rfind("top", 0) == 0 && name.size() > 12 && name.substr(name.size() - 9) == "_accuracy") {
    const std::string k = name.substr(3, name.size() - 12);
    if (!k.empty() && k.find_first_not_of("0123456789") == std::string::npos && k.size() < 6)
      return std::make_unique<TopKAccuracy>(std::stoll(k));
  }
  throw Error("[make_metric] unknown metric '" + name + "'; known: accuracy, loss, top<k>_accuracy (e.g. top5_accuracy)");
}

}  // namespace spore::train
