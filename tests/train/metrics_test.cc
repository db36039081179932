// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>
#include <spore/spore.h>
#include <spore/train/metrics.h>

#include "error_matchers.h"

namespace spore::train {
namespace {

Tensor scores() {
  // Predicted classes 2, 0, 1 (row 3 ties 1 and 2: the lower index wins), 0.
  return ops::from_vector<float>({0.1f, 0.2f, 0.7f,  //
                                  0.9f, 0.05f, 0.05f,  //
                                  0.2f, 0.4f, 0.4f,  //
                                  0.5f, 0.3f, 0.2f},
                                 {4, 3});
}

TEST(Metrics, AccuracyAndTopK) {
  Tensor y = ops::from_vector<int64_t>({2, 1, 2, 0});
  Accuracy acc;
  acc.update(scores(), y, {});
  EXPECT_DOUBLE_EQ(acc.value(), 0.5);  // rows 0 and 3
  acc.update(scores(), ops::from_vector<int64_t>({2, 0, 1, 0}), {});
  EXPECT_DOUBLE_EQ(acc.value(), 6.0 / 8.0);
  acc.reset();
  EXPECT_DOUBLE_EQ(acc.value(), 0.0);

  TopKAccuracy top2(2);
  top2.update(scores(), y, {});
  // Row 1: label 1 (0.05) ties class 2 (0.05) but wins by index: rank 2 -> in the top 2.
  // Row 2: label 2 (0.4) ties class 1 (0.4) which has the lower index: rank 2 -> in.
  EXPECT_DOUBLE_EQ(top2.value(), 1.0);
  TopKAccuracy top1(1);
  top1.update(scores(), y, {});
  EXPECT_DOUBLE_EQ(top1.value(), 0.5);
  EXPECT_EQ(top2.name(), "top2_accuracy");
}

TEST(Metrics, LossIsSampleWeighted) {
  LossMetric m;
  m.update(ops::zeros({4, 3}), ops::zeros({4}, {DType::Int64}), ops::full({}, 1.0));
  m.update(ops::zeros({2, 3}), ops::zeros({2}, {DType::Int64}), ops::full({}, 4.0));
  EXPECT_DOUBLE_EQ(m.value(), (4 * 1.0 + 2 * 4.0) / 6.0);
}

TEST(Metrics, ConfusionMatrix) {
  ConfusionMatrix cm(3);
  cm.update(scores(), ops::from_vector<int64_t>({2, 1, 2, 0}), {});
  Tensor m = cm.matrix();
  std::vector<int64_t> want = {1, 0, 0,   // true 0 -> pred 0
                               1, 0, 0,   // true 1 -> pred 0
                               0, 1, 1};  // true 2 -> pred 2 and pred 1
  ASSERT_EQ(m.shape(), (Shape{3, 3}));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(m.data<int64_t>()[i], want[i]) << i;
  EXPECT_DOUBLE_EQ(cm.value(), 0.5);
  EXPECT_NE(cm.str().find("true\\pred"), std::string::npos);
}

// A checkpoint inside an epoch carries each metric's totals: reloaded into a fresh metric, the
// next batches give what one metric over all batches gives.
TEST(Metrics, StateContinuesTheTotals) {
  const Tensor labels = ops::from_vector<int64_t>({2, 1, 2, 0});
  for (const char* name : {"accuracy", "top2_accuracy", "loss"}) {
    auto whole = make_metric(name), first = make_metric(name), second = make_metric(name);
    whole->update(scores(), labels, ops::full({}, 0.5));
    first->update(scores(), labels, ops::full({}, 0.5));
    second->load_state(first->state());
    whole->update(scores(), ops::from_vector<int64_t>({0, 2, 0, 2}), ops::full({}, 2.0));
    second->update(scores(), ops::from_vector<int64_t>({0, 2, 0, 2}), ops::full({}, 2.0));
    EXPECT_EQ(second->value(), whole->value()) << name;
    EXPECT_NE(second->value(), first->value()) << name;
  }
  ConfusionMatrix a(3), b(3);
  a.update(scores(), labels, {});
  b.load_state(a.state());
  EXPECT_EQ(b.matrix().to_vector<int64_t>(), a.matrix().to_vector<int64_t>());
  EXPECT_ERROR(b.load_state({1, 2}), "[ConfusionMatrix.load_state] expected 9 values, got 2");
  EXPECT_ERROR(Accuracy().load_state({1}), "[Accuracy.load_state] expected 2 values, got 1");
}

TEST(Metrics, Errors) {
  Accuracy acc;
  EXPECT_ERROR(acc.update(ops::zeros({4}), ops::zeros({4}, {DType::Int64}), {}), "shape (N, C)");
  EXPECT_ERROR(acc.update(scores(), ops::zeros({3}, {DType::Int64}), {}), "labels of shape (4)");
  EXPECT_ERROR(acc.update(scores(), ops::zeros({4}), {}), "integer class labels");
  EXPECT_ERROR(acc.update(scores(), ops::from_vector<int64_t>({0, 1, 3, 0}), {}), "label 3 at row 2");
  EXPECT_ERROR(TopKAccuracy(0), "k must be at least 1");
  TopKAccuracy top4(4);
  EXPECT_ERROR(top4.update(scores(), ops::from_vector<int64_t>({0, 1, 2, 0}), {}), "exceeds the 3 classes");
  EXPECT_ERROR(make_metric("f1"), "unknown metric 'f1'");
  EXPECT_EQ(make_metric("top5_accuracy")->name(), "top5_accuracy");
}

}  // namespace
}  // namespace spore::train
