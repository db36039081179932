// SPDX-License-Identifier: Apache-2.0
// Cell mechanics: registration and dotted names, train/eval propagation, state_dict round trips,
// load errors (all bad keys at once, never half-loaded), functional_call, to(dtype).
#include <gtest/gtest.h>

#include "error_matchers.h"
#include "nn/nn_test_util.h"

namespace spore::nn {
namespace {

using testing::max_abs_diff;

// A small nested model: features (SequentialCell of Dense, ReLU, BatchNorm1d) then head.
class Net : public UnaryCell {
 public:
  Net() : UnaryCell("Net") {
    features = std::make_unique<SequentialCell>(std::make_unique<Dense>(4, 6), std::make_unique<ReLU>(),
                                                std::make_unique<BatchNorm1d>(6));
    head = std::make_unique<Dense>(6, 3, false);
    scale = init::ones({3});
    register_cell("features", features.get());
    register_cell("head", head.get());
    register_parameter("scale", &scale);
  }
  Tensor construct(const Tensor& x) override { return (*head)((*features)(x)) * scale; }
  std::unique_ptr<SequentialCell> features;
  std::unique_ptr<Dense> head;
  Tensor scale;
};

std::vector<std::string> names_of(const std::vector<std::pair<std::string, Tensor>>& v) {
  std::vector<std::string> out;
  for (auto& [n, t] : v) out.push_back(n);
  return out;
}

TEST(Cell, DottedNamesDepthFirst) {
  Net net;
  EXPECT_EQ(names_of(net.named_parameters()),
            (std::vector<std::string>{"scale", "features.0.weight", "features.0.bias", "features.2.weight",
                                      "features.2.bias", "head.weight"}));
  EXPECT_EQ(names_of(net.named_buffers()), (std::vector<std::string>{"features.2.running_mean", "features.2.running_var",
                                                                     "features.2.num_batches_tracked"}));
  EXPECT_EQ(net.num_parameters(), 3 + 24 + 6 + 6 + 6 + 18);
  ASSERT_EQ(net.named_cells().size(), 2u);
  EXPECT_EQ(net.named_cells()[0].first, "features");
  EXPECT_EQ(net.state_dict().size(), 9u);
  // The parameter is the member itself (same storage), so in-place updates reach the cell.
  EXPECT_TRUE(net.parameters()[5].is_same(net.head->weight));
  auto slots = net.parameter_slots();
  EXPECT_EQ(slots[5].second, &net.head->weight);
}

TEST(Cell, RegistrationErrors) {
  Dense d(2, 2);
  Tensor t = init::zeros({2});
  EXPECT_ERROR(d.register_parameter("weight", &t), "already registered");
  EXPECT_ERROR(d.register_parameter("a.b", &t), "contains '.'");
  Tensor undefined;
  EXPECT_ERROR(d.register_parameter("u", &undefined), "undefined");
  Tensor ints = ops::zeros({2}, {DType::Int64});
  EXPECT_ERROR(d.register_parameter("i", &ints), "must be floating");
}

TEST(Cell, TrainEvalPropagates) {
  Net net;
  EXPECT_TRUE(net.is_training());
  net.eval();
  EXPECT_FALSE(net.is_training());
  EXPECT_FALSE((*net.features)[2].is_training());
  net.train();
  EXPECT_TRUE(net.head->is_training());
}

TEST(Cell, StateDictRoundTrip) {
  manual_seed(1);
  Net a;
  manual_seed(2);
  Net b;
  const Tensor x = ops::normal({5, 4});
  a(x);  // a training step updates a's running statistics
  a.eval();
  b.eval();
  EXPECT_GT(max_abs_diff(a(x), b(x)), 1e-3);
  std::vector<std::pair<std::string, Tensor>> sd;
  for (auto& [n, t] : a.state_dict()) sd.emplace_back(n, t.clone());
  const Tensor b_weight = b.head->weight;
  b.load_state_dict(sd);
  EXPECT_EQ(max_abs_diff(a(x), b(x)), 0.0);
  EXPECT_TRUE(b.head->weight.is_same(b_weight)) << "loading copies in place; it must not replace the tensor";
  EXPECT_EQ(b.features->named_buffers()[2].second.item<int64_t>(), 1);
}

TEST(Cell, LoadErrorsListEveryBadKeyAndNeverHalfLoad) {
  Net net;
  auto sd = net.state_dict();
  for (auto& [n, t] : sd) t = ops::zeros_like(t);
  sd.erase(sd.begin() + 1);                                 // missing features.0.weight
  sd.emplace_back("head.bias", init::zeros({3}));          // unexpected
  sd[0].second = init::zeros({4});                         // scale: wrong shape
  sd[4].second = sd[4].second.to(DType::Float64);          // head.weight: wrong dtype
  const Tensor before = net.head->weight.clone();
  const Tensor bias_before = net.features->named_parameters()[1].second.clone();
  try {
    net.load_state_dict(sd);
    FAIL() << "load_state_dict accepted a bad state dict";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("missing key 'features.0.weight'"), std::string::npos) << m;
    EXPECT_NE(m.find("unexpected key 'head.bias'"), std::string::npos) << m;
    EXPECT_NE(m.find("'scale' has shape (4,)"), std::string::npos) << m;
    EXPECT_NE(m.find("'head.weight' has dtype float64"), std::string::npos) << m;
    EXPECT_NE(m.find("4 problem(s)"), std::string::npos) << m;
  }
  // Nothing was written, not even the good keys.
  EXPECT_EQ(max_abs_diff(net.head->weight, before), 0.0);
  EXPECT_EQ(max_abs_diff(net.features->named_parameters()[1].second, bias_before), 0.0);
  // Non-strict ignores missing and unexpected keys but still refuses mismatches.
  auto sd2 = net.state_dict();
  std::vector<std::pair<std::string, Tensor>> partial{{"head.weight", ops::zeros_like(sd2[5].second)},
                                                      {"nope", init::zeros({1})}};
  net.load_state_dict(partial, false);
  EXPECT_EQ(ops::sum(ops::abs(net.head->weight)).item<float>(), 0.f);
}

TEST(Cell, FunctionalCallSwapsAndRestoresOnException) {
  Dense d(3, 2);
  const Tensor w0 = d.weight;
  const Tensor x = ops::ones({1, 3});
  std::vector<TensorTree::Item> items{{"weight", TensorTree(ops::zeros({2, 3}))}, {"bias", TensorTree(ops::ones({2}))}};
  const TensorTree p = TensorTree::dict(items);
  const Tensor y = functional_call(d, p, [&] { return d(x); });
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1.f, 1.f}));
  EXPECT_TRUE(d.weight.is_same(w0));
  EXPECT_THROW(functional_call(d, p, [&]() -> Tensor { throw Error("boom"); }), Error);
  EXPECT_TRUE(d.weight.is_same(w0));
  // Wrong structure: named clearly.
  const TensorTree bad = TensorTree::dict({{"weight", TensorTree(ops::zeros({2, 2}))}});
  EXPECT_ERROR(functional_call(d, bad, [&] { return d(x); }), "missing 'bias'");
  EXPECT_TRUE(d.weight.is_same(w0));
}

TEST(Cell, ToDtypeConvertsFloatingOnly) {
  Net net;
  net.to(DType::Float64);
  for (auto& [n, t] : net.named_parameters()) EXPECT_EQ(t.dtype(), DType::Float64) << n;
  const auto buffers = net.named_buffers();
  EXPECT_EQ(buffers[0].second.dtype(), DType::Float64);
  EXPECT_EQ(buffers[2].second.dtype(), DType::Int64);
  EXPECT_EQ(net(ops::ones({2, 4}, {DType::Float64})).dtype(), DType::Float64);
}

TEST(Cell, Containers) {
  CellList list;
  list.append(std::make_unique<Dense>(2, 2)).append(std::make_unique<Dropout>(0.1));
  EXPECT_EQ(list.size(), 2u);
  EXPECT_EQ(list.at<Dense>(0).out_features, 2);
  EXPECT_ERROR(list.at<Dense>(1), "is a Dropout");
  CellDict dict;
  dict.insert("enc", std::make_unique<Dense>(2, 3));
  EXPECT_TRUE(dict.contains("enc"));
  EXPECT_EQ(names_of(dict.named_parameters()), (std::vector<std::string>{"enc.weight", "enc.bias"}));
  EXPECT_ERROR(dict["dec"], "keys are: enc");
  EXPECT_ERROR(dict.insert("enc", std::make_unique<ReLU>()), "already registered");
}

TEST(Init, SeededAndPyTorchBounds) {
  manual_seed(7);
  Dense a(50, 40);
  manual_seed(7);
  Dense b(50, 40);
  EXPECT_EQ(max_abs_diff(a.weight, b.weight), 0.0);
  const double bound = 1.0 / std::sqrt(50.0);
  EXPECT_LE(ops::amax(ops::abs(a.weight)).item<float>(), bound);
  EXPECT_GT(ops::amax(ops::abs(a.weight)).item<float>(), 0.9 * bound);
  EXPECT_LE(ops::amax(ops::abs(a.bias)).item<float>(), bound);
  const Tensor k = init::kaiming_normal({400, 300}, 0, init::FanMode::FanIn, init::Nonlinearity::ReLU);
  EXPECT_NEAR(ops::std(k).item<float>(), std::sqrt(2.0 / 300), 2e-3);
  const Tensor xu = init::xavier_uniform({200, 100});
  EXPECT_LE(ops::amax(ops::abs(xu)).item<float>(), std::sqrt(6.0 / 300));
  const Tensor tn = init::trunc_normal({1000}, 1.0, 1.0, 0.5, 1.5);
  EXPECT_GE(ops::amin(tn).item<float>(), 0.5f);
  EXPECT_LE(ops::amax(tn).item<float>(), 1.5f);
  EXPECT_ERROR(init::xavier_uniform({5}), "at least 2 dimensions");
}

}  // namespace
}  // namespace spore::nn
