// SPDX-License-Identifier: Apache-2.0
// vmap: against a loop over lanes for every case of the gradient-check table (float inputs
// batched, along axis 0 and along axis 1, and with index inputs batched too); per-example
// gradients vmap(grad) of a small MLP against a loop of grad; vmap inside grad, jit of vmap,
// vmap of vmap; control flow under vmap (batched predicates, per-lane trip counts, scan);
// randomness shared by lanes; clear errors; the registry report.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "autodiff/grad_cases.h"
#include "error_matchers.h"
#include "spore/spore.h"
#include "spore/vmap.h"
#include "transforms/vmap_rules/vmap_rules.h"

namespace spore {
namespace {

using namespace ops;
using gradcheck::all_cases;
using gradcheck::GradCase;

constexpr int64_t kLanes = 3;

Tensor f64(double v) { return scalar_tensor(v, DType::Float64); }

// Max |a - b| within 1e-12 of the reference's scale (exact for most ops; batched kernels may
// sum in another order). NaNs must match.
::testing::AssertionResult close(const Tensor& got, const Tensor& want, double tol = 1e-12) {
  if (got.shape() != want.shape() || got.dtype() != want.dtype())
    return ::testing::AssertionFailure() << "got " << dtype_name(got.dtype()) << shape_str(got.shape()) << ", want "
                                         << dtype_name(want.dtype()) << shape_str(want.shape());
  const auto a = got.to(DType::Float64).to_vector<double>(), b = want.to(DType::Float64).to_vector<double>();
  double scale = 1;
  for (double v : b)
    if (std::isfinite(v)) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    if (a[i] == b[i]) continue;
    if (!(std::abs(a[i] - b[i]) <= tol * scale))
      return ::testing::AssertionFailure() << "element " << i << ": got " << a[i] << ", want " << b[i];
  }
  return ::testing::AssertionSuccess();
}

// ---- vmap against a loop, for every case of the gradient-check table -----------------------

// Axis0: every float input batched along axis 0. Axis1: the first float input of rank >= 1
// along axis 1 instead. AllBatched: index inputs batched too. Single: only input `only` batched
// (the rest shared: a batched x against a shared weight, or the other way round).
enum class Mode { Axis0, Axis1, AllBatched, Single };

// Lane b of a float input: the input scaled by 1 + b/64 (keeps signs, order and ties, so every
// case stays clear of its kinks and inside its domain while the lanes differ).
Tensor lane_input(const Tensor& x, int64_t b) { return is_floating(x.dtype()) ? x * (1.0 + static_cast<double>(b) / 64) : x; }

// Runs case `c` under vmap (the type-erased entry point: one in_axes entry per input) and by a
// loop over lanes; returns a failure message or "".
std::string check_case(const GradCase& c, Mode mode, size_t only = 0) {
  const size_t n = c.inputs.size();
  std::vector<int> in_axes(n, -1);
  bool any = false, used_axis1 = false;
  std::vector<TensorTree> args;
  for (size_t i = 0; i < n; ++i) {
    const Tensor& x = c.inputs[i];
    const bool batch = mode == Mode::AllBatched || (mode == Mode::Single ? i == only : is_floating(x.dtype()));
    if (!batch) {
      args.push_back(x);
      continue;
    }
    int axis = 0;
    if (mode == Mode::Axis1 && !used_axis1 && x.dim() >= 1) axis = 1, used_axis1 = true;
    std::vector<Tensor> lanes;
    for (int64_t b = 0; b < kLanes; ++b) lanes.push_back(lane_input(x, b));
    in_axes[i] = axis;
    args.push_back(stack(lanes, axis));
    any = true;
  }
  if (!any || (mode == Mode::Axis1 && !used_axis1)) return "";
  std::vector<Tensor> want;
  for (int64_t b = 0; b < kLanes; ++b) {
    std::vector<Tensor> lane;
    for (size_t i = 0; i < n; ++i) lane.push_back(in_axes[i] >= 0 ? lane_input(c.inputs[i], b) : c.inputs[i]);
    want.push_back(c.fn(lane));
  }
  autodiff::TreeFn f = [&c](const std::vector<TensorTree>& t) {
    std::vector<Tensor> xs;
    for (const auto& a : t) xs.push_back(a.tensor());
    return TensorTree(c.fn(xs));
  };
  Tensor got;
  try {
    got = transforms::vmap_call(f, args, VmapAxes(in_axes), 0).tensor();
  } catch (const std::exception& e) {
    return detail::cat(c.name, ": vmap threw: ", e.what());
  }
  auto r = close(got, stack(want, 0));
  return r ? "" : detail::cat(c.name, mode == Mode::Single ? detail::cat(" (only input ", only, " batched)") : "", ": ",
                              r.message());
}

// Cases whose loop reference and batched run differ for a reason outside vmap.
const std::map<std::string, std::string>& known_issues() {
  // Empty: pow(0, 0) used to depend on the tensor's length (vector path 0, scalar tail 1); the
  // kernel now gives 1 on both, and pow/zero_zero runs.
  static const std::map<std::string, std::string> m = {};
  return m;
}

class VmapCase : public testing::TestWithParam<size_t> {
 protected:
  void SetUp() override {
    if (auto it = known_issues().find(c().name); it != known_issues().end()) GTEST_SKIP() << it->second;
  }
  const GradCase& c() const { return all_cases()[GetParam()]; }
};

TEST_P(VmapCase, AgainstLoop) {
  if (auto m = check_case(c(), Mode::Axis0); !m.empty()) ADD_FAILURE() << m;
}
TEST_P(VmapCase, AgainstLoopInAxis1) {
  if (auto m = check_case(c(), Mode::Axis1); !m.empty()) ADD_FAILURE() << m;
}
TEST_P(VmapCase, AgainstLoopIndicesBatched) {
  if (auto m = check_case(c(), Mode::AllBatched); !m.empty()) ADD_FAILURE() << m;
}

TEST_P(VmapCase, AgainstLoopOneInputBatched) {
  if (c().inputs.size() < 2) return;
  for (size_t i = 0; i < c().inputs.size(); ++i)
    if (is_floating(c().inputs[i].dtype()))
      if (auto m = check_case(c(), Mode::Single, i); !m.empty()) ADD_FAILURE() << m;
}

std::string case_name(const testing::TestParamInfo<size_t>& info) { return gradcheck::case_test_names()[info.param]; }

INSTANTIATE_TEST_SUITE_P(Vmap, VmapCase, testing::Range<size_t>(0, all_cases().size()), case_name);

// ---- primitives the gradient table does not reach (integer and bool results, extra outputs) --

using LaneFn = std::function<Tensor(const std::vector<Tensor>&)>;

// vmap(fn) on `args` (batched along `axes`, -1 shared) against fn lane by lane, exactly.
void expect_like_loop(const char* what, const LaneFn& fn, const std::vector<Tensor>& args, const std::vector<int>& axes) {
  int64_t lanes = -1;
  std::vector<TensorTree> targs;
  for (size_t i = 0; i < args.size(); ++i) {
    if (axes[i] >= 0) lanes = args[i].shape()[axes[i]];
    targs.push_back(args[i]);
  }
  std::vector<Tensor> want;
  for (int64_t b = 0; b < lanes; ++b) {
    std::vector<Tensor> lane;
    for (size_t i = 0; i < args.size(); ++i) lane.push_back(axes[i] >= 0 ? select(args[i], axes[i], b) : args[i]);
    want.push_back(fn(lane));
  }
  autodiff::TreeFn f = [&fn](const std::vector<TensorTree>& t) {
    std::vector<Tensor> xs;
    for (const auto& a : t) xs.push_back(a.tensor());
    return TensorTree(fn(xs));
  };
  Tensor got;
  try {
    got = transforms::vmap_call(f, targs, VmapAxes(axes), 0).tensor();
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": vmap threw: " << e.what();
    return;
  }
  EXPECT_TRUE(close(got, stack(want, 0), 0)) << what;
}

TEST(Vmap, IntegerAndBoolResults) {
  Tensor a = oracle::rand_tensor({3, 4, 5}, DType::Float64, 91), b = oracle::rand_tensor({4, 5}, DType::Float64, 92);
  Tensor ia = from_vector(std::vector<int64_t>{5, -3, 7, 12, 9, 0, -8, 4, 6, 1, 2, 3}, {3, 4});
  Tensor ib = from_vector(std::vector<int64_t>{3, 2, -5, 7}, {4});
  const std::vector<int> both{0, -1};
  expect_like_loop("equal", [](auto& v) { return equal(v[0], v[1]); }, {a, b}, both);
  expect_like_loop("less", [](auto& v) { return less(v[0], v[1]); }, {a, b}, both);
  expect_like_loop("greater_equal", [](auto& v) { return v[0] >= v[1]; }, {a, b}, {0, -1});
  expect_like_loop("logical", [](auto& v) { return logical_xor(v[0] > 0.0, logical_not(v[1] < 0.5)); }, {a, b}, both);
  expect_like_loop("bitwise", [](auto& v) { return bitwise_xor(bitwise_and(v[0], v[1]), bitwise_or(v[0], v[1])); },
                   {ia, ib}, both);
  expect_like_loop("floor_divide int", [](auto& v) { return floor_divide(v[0], v[1]); }, {ia, ib}, both);
  expect_like_loop("predicates", [](auto& v) { return logical_and(isfinite(v[0]), logical_not(isnan(v[0] / v[0]))); },
                   {a}, {0});
  expect_like_loop("argmax", [](auto& v) { return argmax(v[0], 1); }, {a}, {0});
  expect_like_loop("argmin keepdims", [](auto& v) { return argmin(v[0], 0, true); }, {a}, {1});
  expect_like_loop("argmax flat", [](auto& v) { return argmax(v[0]); }, {a}, {2});
  expect_like_loop("argmax of a 0-d lane", [](auto& v) { return argmax(v[0], 0); }, {ib}, {0});
  expect_like_loop("all/any", [](auto& v) { return logical_or(all(v[0] > -1.0, {1}), any(v[0] > 1.5, {1})); }, {a},
                   {0});
  expect_like_loop("one_hot", [](auto& v) { return one_hot(abs(v[0]), 13); }, {ia}, {0});
  expect_like_loop("sort indices", [](auto& v) { return sort(v[0], 0).second; }, {a}, {0});
  expect_like_loop("topk indices", [](auto& v) { return topk(v[0], 2, -1, false).second; }, {a}, {1});
  expect_like_loop("cast", [](auto& v) { return cast(v[0] * 10.0, DType::Int32); }, {a}, {0});
  expect_like_loop("where, batched condition", [](auto& v) { return where(v[0] > 0.0, v[1], v[1] * 2.0); }, {a, b},
                   both);
  expect_like_loop("cumsum of a 0-d lane", [](auto& v) { return cumsum(v[0], 0); }, {b[0]}, {0});
  expect_like_loop("softmax of a 0-d lane", [](auto& v) { return softmax(v[0], -1); }, {b[0]}, {0});
  expect_like_loop("stop_gradient", [](auto& v) { return stop_gradient(v[0]) * v[1]; }, {a, b}, both);
  // Index inputs batched, data shared (and the other way round).
  Tensor idx = from_vector(std::vector<int64_t>{1, 0, 3, 3, 2, 1}, {3, 2});
  expect_like_loop("gather, batched index", [](auto& v) { return gather(v[0], 0, v[1]); },
                   {b[0], idx}, {-1, 0});
  expect_like_loop("embedding, batched indices", [](auto& v) { return embedding(v[0], v[1]); }, {b, idx}, {-1, 0});
  expect_like_loop("embedding, batched table", [](auto& v) { return embedding(v[0], v[1]); }, {a, idx[0]}, {0, -1});
  expect_like_loop("embedding, both batched", [](auto& v) { return embedding(v[0], v[1]); }, {a, idx}, {0, 0});
  expect_like_loop("nll_loss, batched targets", [](auto& v) { return nll_loss(log_softmax(v[0], 1), v[1]); },
                   {b.slice(1, 0, 4), from_vector(std::vector<int64_t>{0, 3, 1, 2, -100, 3, 1, 1}, {2, 4})}, {-1, 0});
  // Extra outputs of multi-output primitives.
  Tensor img = oracle::rand_tensor({2, 1, 2, 4, 4}, DType::Float64, 93);
  expect_like_loop("max_pool2d indices", [](auto& v) { return max_pool2d_with_indices(v[0], {{2}, {1}}).second; },
                   {img}, {0});
}

// ---- per-example gradients ------------------------------------------------------------------

TensorTree mlp_params(DType dt) {
  const int64_t D = 5, H = 7, C = 4;
  return TensorTree::dict({{"w1", oracle::rand_tensor({D, H}, dt, 11) * 0.5},
                           {"b1", oracle::rand_tensor({H}, dt, 12) * 0.1},
                           {"w2", oracle::rand_tensor({H, C}, dt, 13) * 0.5},
                           {"b2", oracle::rand_tensor({C}, dt, 14) * 0.1}});
}

// One example: x (D), label y (); the loss of the MLP on it.
Tensor mlp_loss(const TensorTree& p, const Tensor& x, const Tensor& y) {
  Tensor h = relu(matmul(x, p["w1"].tensor()) + p["b1"].tensor());
  Tensor logits = matmul(h, p["w2"].tensor()) + p["b2"].tensor();
  return cross_entropy(logits, y);
}

TEST(Vmap, PerExampleGradientsOfAnMlp) {
  const TensorTree params = mlp_params(DType::Float64);
  const int64_t B = 6;
  Tensor xs = oracle::rand_tensor({B, 5}, DType::Float64, 21);
  Tensor ys = from_vector(std::vector<int64_t>{0, 3, 1, 2, 3, 0}, {B});
  auto per_example = vmap(grad(mlp_loss), {-1, 0, 0});
  TensorTree g = per_example(params, xs, ys);
  for (const char* k : {"w1", "b1", "w2", "b2"}) {
    std::vector<Tensor> lanes;
    for (int64_t b = 0; b < B; ++b) lanes.push_back(grad(mlp_loss)(params, xs[b], ys[b])[k].tensor());
    EXPECT_TRUE(close(g[k].tensor(), stack(lanes, 0))) << k;
  }
  // Float32 too, and with the batch of x on axis 1.
  const TensorTree p32 = mlp_params(DType::Float32);
  TensorTree g32 = vmap(grad(mlp_loss), {-1, 1, 0})(p32, transpose(xs.to(DType::Float32), 0, 1), ys);
  Tensor lane3 = grad(mlp_loss)(p32, xs[3].to(DType::Float32), ys[3])["w1"].tensor();
  EXPECT_TRUE(close(g32["w1"].tensor()[3], lane3, 1e-6));
}

TEST(Vmap, JitOfPerExampleGradients) {
  const TensorTree params = mlp_params(DType::Float64);
  Tensor xs = oracle::rand_tensor({5, 5}, DType::Float64, 23);
  Tensor ys = from_vector(std::vector<int64_t>{2, 0, 1, 3, 3}, {5});
  auto per_example = vmap(grad(mlp_loss), {-1, 0, 0});
  auto fast = jit([&](const TensorTree& p, const Tensor& x, const Tensor& y) { return per_example(p, x, y); });
  TensorTree want = per_example(params, xs, ys), got = fast(params, xs, ys);
  for (const char* k : {"w1", "b1", "w2", "b2"}) EXPECT_TRUE(close(got[k].tensor(), want[k].tensor())) << k;
  EXPECT_NE(fast.core().last_graph_text().find("matmul"), std::string::npos);
}

TEST(Vmap, PerExampleGradientsWithABatchDimension) {
  // Each example as a batch of one: (1, D) inputs, the mean loss over it.
  const TensorTree params = mlp_params(DType::Float64);
  auto loss = [](const TensorTree& p, const Tensor& x, const Tensor& y) {
    Tensor h = tanh(addmm(p["b1"].tensor(), x, p["w1"].tensor()));
    return cross_entropy(addmm(p["b2"].tensor(), h, p["w2"].tensor()), y);
  };
  Tensor xs = oracle::rand_tensor({4, 1, 5}, DType::Float64, 22);
  Tensor ys = from_vector(std::vector<int64_t>{1, 0, 2, 3}, {4, 1});
  TensorTree g = vmap(grad(loss), {-1, 0, 0})(params, xs, ys);
  for (int64_t b = 0; b < 4; ++b)
    EXPECT_TRUE(close(g["w2"].tensor()[b], grad(loss)(params, xs[b], ys[b])["w2"].tensor())) << b;
}

// ---- composition ------------------------------------------------------------------------------

Tensor lane_fn(const Tensor& x) { return sin(x) * sum(x * x) + exp(-x); }

TEST(Vmap, EmptyBatch) {
  Tensor none = zeros({0, 3}, {DType::Float64});
  EXPECT_EQ(vmap(lane_fn)(none).shape(), Shape({0, 3}));
  EXPECT_EQ(vmap(lane_fn, 1, 1)(transpose(none, 0, 1)).shape(), Shape({3, 0}));
  TensorTree g = vmap(grad(mlp_loss), {-1, 0, 0})(mlp_params(DType::Float64), zeros({0, 5}, {DType::Float64}),
                                                  zeros({0}, {DType::Int64}));
  EXPECT_EQ(g["w1"].tensor().shape(), Shape({0, 5, 7}));
}

TEST(Vmap, InsideGrad) {
  Tensor xs = oracle::rand_tensor({4, 3}, DType::Float64, 31);
  Tensor g = grad([](const Tensor& x) { return sum(vmap(lane_fn)(x)); })(xs);
  std::vector<Tensor> lanes;
  for (int64_t b = 0; b < 4; ++b) lanes.push_back(grad([](const Tensor& x) { return sum(lane_fn(x)); })(xs[b]));
  EXPECT_TRUE(close(g, stack(lanes, 0)));
  // A captured tensor the outer grad differentiates: shared by the lanes, gradient summed.
  Tensor w = oracle::rand_tensor({3}, DType::Float64, 32);
  Tensor gw = grad([&xs](const Tensor& w) { return sum(vmap([&w](const Tensor& x) { return x * w; })(xs)); })(w);
  EXPECT_TRUE(close(gw, sum(xs, {0})));
}

TEST(Vmap, JitOfVmapAndVmapOfJit) {
  Tensor xs = oracle::rand_tensor({5, 3}, DType::Float64, 41);
  Tensor want = vmap(lane_fn)(xs);
  auto jf = jit([](const Tensor& x) { return vmap(lane_fn)(x); });
  EXPECT_TRUE(close(jf(xs), want));
  EXPECT_TRUE(close(jf(xs * 2.0), vmap(lane_fn)(xs * 2.0)));
  EXPECT_EQ(jf.core().traces(), 1);
  EXPECT_NE(jf.core().last_graph_text().find("reduce_sum"), std::string::npos);
  EXPECT_TRUE(close(vmap(jit(lane_fn))(xs), want));
}

TEST(Vmap, VmapOfVmap) {
  Tensor xs = oracle::rand_tensor({2, 4, 3}, DType::Float64, 51);
  Tensor w = oracle::rand_tensor({3, 2}, DType::Float64, 52);
  auto f = [&w](const Tensor& x) { return softmax(matmul(x, w) * sum(x), 0); };
  Tensor got = vmap(vmap(f))(xs);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 4; ++j) EXPECT_TRUE(close(got[i][j], f(xs[i][j])));
  // The outer batch stacked on axis 1; the inner batch taken from axis 1.
  Tensor got2 = vmap(vmap(f), 0, 1)(transpose(xs, 1, 0));
  EXPECT_TRUE(close(got2, got));
  Tensor got3 = vmap(vmap(f, 1))(transpose(xs, 1, 2));
  EXPECT_TRUE(close(got3, got));
}

TEST(Vmap, InnerFunctionsCaptureOuterLanes) {
  Tensor xs = tensor({1.0, 2.0, 3.0}).to(DType::Float64), ys = tensor({10.0, 20.0}).to(DType::Float64);
  // An inner vmap over a value of the outer lane: the outer product.
  Tensor outer = vmap([&ys](const Tensor& x) { return vmap([&x](const Tensor& y) { return x * y; })(ys); })(xs);
  EXPECT_TRUE(close(outer, matmul(xs.reshape({3, 1}), ys.reshape({1, 2}))));
  // grad inside vmap with respect to a shared tensor, per lane.
  Tensor w = tensor({0.5, -1.5}).to(DType::Float64);
  Tensor gw = vmap([&w](const Tensor& x) { return grad([&x](const Tensor& w) { return sum(w * w * x); })(w); })(xs);
  EXPECT_TRUE(close(gw, matmul(xs.reshape({3, 1}), (w * 2.0).reshape({1, 2}))));
}

TEST(Vmap, ForwardModeBothWays) {
  Tensor xs = oracle::rand_tensor({4, 3}, DType::Float64, 45), ts = oracle::rand_tensor({4, 3}, DType::Float64, 46);
  auto [y, ty] = jvp(vmap(lane_fn), xs, ts);
  Tensor ty2 = vmap([](const Tensor& x, const Tensor& t) { return jvp(lane_fn, x, t).second; })(xs, ts);
  EXPECT_TRUE(close(y, vmap(lane_fn)(xs)));
  EXPECT_TRUE(close(ty, ty2));
  for (int64_t b = 0; b < 4; ++b) EXPECT_TRUE(close(ty[b], jvp(lane_fn, xs[b], ts[b]).second));
}

TEST(Vmap, GradOfGradPerExample) {
  // vmap of a second derivative: d2/dx2 (x^3 sin x) per lane.
  auto f = [](const Tensor& x) { return x * x * x * sin(x); };
  Tensor xs = tensor({0.3, -1.2, 2.0}).to(DType::Float64);
  Tensor got = vmap(grad(grad(f)))(xs);
  for (int64_t b = 0; b < 3; ++b) EXPECT_TRUE(close(got[b], grad(grad(f))(xs[b])));
}

TEST(Vmap, TreesAndSharedArguments) {
  Tensor a = oracle::rand_tensor({3, 2}, DType::Float64, 61), b = oracle::rand_tensor({2}, DType::Float64, 62);
  auto f = [](const TensorTree& t, const Tensor& s) {
    return TensorTree::dict({{"sum", TensorTree(t[0].tensor() + t[1].tensor() * s)}, {"s", TensorTree(s * 2.0)}});
  };
  TensorTree out = vmap(f, {0, -1}, {0, -1})(TensorTree{a, a * 3.0}, b);
  EXPECT_TRUE(close(out["sum"].tensor(), a + a * 3.0 * b));
  EXPECT_TRUE(close(out["s"].tensor(), b * 2.0));  // not batched, as out_axes asked
  // An output no lane changes is broadcast to the batch.
  Tensor c = vmap([&b](const Tensor&) { return b; })(a);
  EXPECT_EQ(c.shape(), Shape({3, 2}));
}

// Per-leaf axes as TensorTrees: a parameter dict whose weight is shared and whose bias is
// batched along axis 1, and a per-leaf out_axes tree.
TEST(Vmap, PerLeafAxesAsTrees) {
  auto ax = [](int64_t v) { return TensorTree::leaf(v); };
  const Tensor w = oracle::rand_tensor({2, 2}, DType::Float64, 71), bias = oracle::rand_tensor({2, 3}, DType::Float64, 72);
  const Tensor xs = oracle::rand_tensor({3, 2}, DType::Float64, 73);
  const TensorTree params = TensorTree::dict({{"w", TensorTree(w)}, {"b", TensorTree(bias)}});
  auto f = [](const TensorTree& p, const Tensor& x) {
    Tensor y = matmul(x.reshape({1, 2}), p["w"].tensor()).reshape({2}) + p["b"].tensor();
    return TensorTree(std::vector<TensorTree>{TensorTree(y), TensorTree(p["w"].tensor() * 2.0)});
  };
  const VmapAxes in{TensorTree::dict({{"w", ax(-1)}, {"b", ax(1)}}), ax(0)};
  const VmapAxes out{TensorTree(std::vector<TensorTree>{ax(1), ax(-1)})};
  const TensorTree r = vmap(f, in, out)(params, xs);
  ASSERT_EQ(r[0].tensor().shape(), Shape({2, 3}));  // lanes along axis 1, as out_axes asked
  ASSERT_EQ(r[1].tensor().shape(), Shape({2, 2}));  // shared
  for (int64_t k = 0; k < 3; ++k) {
    const Tensor want = matmul(xs[k].reshape({1, 2}), w).reshape({2}) + select(bias, 1, k);
    EXPECT_TRUE(close(select(r[0].tensor(), 1, k), want)) << k;
  }
  EXPECT_TRUE(close(r[1].tensor(), w * 2.0));
  // A tree that does not fit the value says where.
  const VmapAxes bad{TensorTree::dict({{"w", ax(-1)}}), ax(0)};
  EXPECT_ERROR(vmap(f, bad)(params, xs), "[vmap] in_axes[0] has no entry for key 'b'");
  const VmapAxes bad_kind{TensorTree(std::vector<TensorTree>{ax(0), ax(0)}), ax(0)};
  EXPECT_ERROR(vmap(f, bad_kind)(params, xs), "in_axes[0] has structure");
}

// ---- control flow -------------------------------------------------------------------------------

Tensor signed_scale(const Tensor& x) {
  return cond(
             sum(x) > 0.0, [](const TensorTree& t) { return TensorTree(t.tensor() * 2.0); },
             [](const TensorTree& t) { return TensorTree(-t.tensor()); }, x)
      .tensor();
}

TEST(Vmap, CondWithBatchedAndSharedPredicate) {
  Tensor xs = tensor({{1.0, 2.0}, {-3.0, 1.0}, {0.5, -0.25}}).to(DType::Float64);
  Tensor got = vmap(signed_scale)(xs);
  for (int64_t b = 0; b < 3; ++b) EXPECT_TRUE(close(got[b], signed_scale(xs[b])));
  // The predicate depends only on a shared argument: one branch for all lanes.
  auto g = [](const Tensor& x, const Tensor& flag) {
    return cond(flag > 0.0, [&](const TensorTree& t) { return TensorTree(t.tensor() + 1.0); },
                [&](const TensorTree& t) { return TensorTree(t.tensor() * 0.0); }, x)
        .tensor();
  };
  EXPECT_TRUE(close(vmap(g, {0, -1})(xs, f64(1.0)), xs + 1.0));
  EXPECT_TRUE(close(vmap(g, {0, -1})(xs, f64(-1.0)), xs * 0.0));
  // Under jit: the select and the shared-predicate If node are traced.
  EXPECT_TRUE(close(jit([](const Tensor& x) { return vmap(signed_scale)(x); })(xs), got));
  auto jg = jit([&](const Tensor& x, const Tensor& flag) { return vmap(g, {0, -1})(x, flag); });
  EXPECT_TRUE(close(jg(xs, f64(-1.0)), xs * 0.0));
  EXPECT_TRUE(close(jg(xs, f64(1.0)), xs + 1.0));
  EXPECT_NE(jg.core().last_graph_text().find("if"), std::string::npos);
  // Gradients through the per-lane select.
  Tensor gx = grad([](const Tensor& x) { return sum(vmap(signed_scale)(x)); })(xs);
  EXPECT_TRUE(close(gx, tensor({{2.0, 2.0}, {-1.0, -1.0}, {2.0, 2.0}}).to(DType::Float64)));
  // switch_case with per-lane indices (clamped).
  std::vector<TreeFunction> br = {[](const TensorTree& t) { return TensorTree(t.tensor() + 1.0); },
                                  [](const TensorTree& t) { return TensorTree(t.tensor() * 10.0); },
                                  [](const TensorTree& t) { return TensorTree(-t.tensor()); }};
  auto sw = [&](const Tensor& i, const Tensor& x) { return switch_case(i, br, x).tensor(); };
  Tensor idx = from_vector(std::vector<int64_t>{-4, 1, 9}, {3});
  Tensor s = vmap(sw)(idx, xs);
  for (int64_t b = 0; b < 3; ++b) EXPECT_TRUE(close(s[b], sw(idx[b], xs[b])));
}

// Newton's iteration for sqrt(a): the trip count depends on a.
Tensor newton_sqrt(const Tensor& a) {
  return while_loop([&](const TensorTree& x) -> Tensor { return abs(x.tensor() * x.tensor() - a) > 1e-12; },
                    [&](const TensorTree& x) { return TensorTree((x.tensor() + a / x.tensor()) * 0.5); },
                    TensorTree(a + 1.0))
      .tensor();
}

TEST(Vmap, WhileLoopWithPerLaneTripCounts) {
  Tensor as = tensor({1.0, 4.0, 9.0, 2.0, 1e4}).to(DType::Float64);
  Tensor got = vmap(newton_sqrt)(as);
  for (int64_t b = 0; b < 5; ++b) EXPECT_EQ(got[b].item<double>(), newton_sqrt(as[b]).item<double>()) << b;
  // Under jit: a While node whose condition is "any lane still running".
  auto jf = jit([](const Tensor& a) { return vmap(newton_sqrt)(a); });
  EXPECT_TRUE(close(jf(as), got));
  EXPECT_NE(jf.core().last_graph_text().find("while"), std::string::npos);
  // Per-lane derivative 1 / (2 sqrt(a)) through the loop (PyNative tape of the iterations).
  Tensor g = grad([](const Tensor& a) { return sum(vmap(newton_sqrt)(a)); })(as);
  for (int64_t b = 0; b < 5; ++b)
    EXPECT_NEAR(g[b].item<double>(), 0.5 / std::sqrt(as[b].item<double>()), 1e-9 / std::sqrt(as[b].item<double>()));
  // A shared trip count with a batched carry: x * 2 while the shared counter runs.
  auto doubling = [](const Tensor& x, const Tensor& n) {
    auto r = while_loop([](const TensorTree& c) -> Tensor { return c[1].tensor() < 3.0; },
                        [](const TensorTree& c) { return TensorTree{c[0].tensor() * 2.0, c[1].tensor() + 1.0}; },
                        TensorTree{x, n});
    return r[0].tensor();
  };
  EXPECT_TRUE(close(vmap(doubling, {0, -1})(as, f64(0.0)), as * 8.0));
}

TEST(Vmap, PerExampleGradientsThroughLoops) {
  // Reverse mode through a while loop with a per-lane trip count: the loop's forward pass stacks
  // the carries of the longest lane, and the reverse scan skips each lane's padding.
  Tensor as = tensor({1.0, 4.0, 9.0, 2.0, 1e4}).to(DType::Float64);
  Tensor g = vmap(grad(newton_sqrt))(as);
  for (int64_t b = 0; b < 5; ++b) EXPECT_TRUE(close(g[b], grad(newton_sqrt)(as[b]), 1e-10)) << b;
  EXPECT_TRUE(close(jit([](const Tensor& a) { return vmap(grad(newton_sqrt))(a); })(as), g, 1e-12));
  // Second order, per lane: d2/da2 sqrt(a) = -1/4 a^-3/2.
  Tensor gg = vmap(grad(grad(newton_sqrt)))(as);
  for (int64_t b = 0; b < 5; ++b) EXPECT_TRUE(close(gg[b], grad(grad(newton_sqrt))(as[b]), 1e-8)) << b;
  // Steps that are not contractions: each lane's gradient is 1.5^(its own trip count), so a
  // padding step run on a finished lane would show.
  auto grow = [](const Tensor& x) {
    return while_loop([](const TensorTree& c) -> Tensor { return c.tensor() < 10.0; },
                      [](const TensorTree& c) { return TensorTree(c.tensor() * 1.5 + 0.1); }, TensorTree(x))
        .tensor();
  };
  Tensor starts = tensor({0.5, 9.0, 3.0, 12.0}).to(DType::Float64);
  Tensor gg2 = vmap(grad(grow))(starts);
  for (int64_t b = 0; b < 4; ++b) EXPECT_TRUE(close(gg2[b], grad(grow)(starts[b]))) << b;
  EXPECT_EQ(gg2.to_vector<double>()[3], 1.0);  // no trips
  // A shared trip count (a counted while) and a scan.
  auto shared_trips = [](const Tensor& x) {
    auto r = while_loop([](const TensorTree& c) -> Tensor { return c[1].tensor() < 3.0; },
                        [](const TensorTree& c) { return TensorTree{sin(c[0].tensor()) * 1.5, c[1].tensor() + 1.0}; },
                        TensorTree{x, zeros_like(x)});
    return r[0].tensor();
  };
  Tensor xs = tensor({0.3, -1.1, 2.0}).to(DType::Float64);
  Tensor gs = vmap(grad(shared_trips))(xs);
  for (int64_t b = 0; b < 3; ++b) EXPECT_TRUE(close(gs[b], grad(shared_trips)(xs[b]))) << b;
}

TEST(Vmap, Scan) {
  // Running sums per lane: carry batched, xs batched (scanned along each lane's own axis).
  auto cumulative = [](const Tensor& xs, const Tensor& c0) {
    auto [c, ys] = scan([](const TensorTree& c, const TensorTree& x) {
                          Tensor n = c.tensor() * 0.5 + x.tensor();
                          return std::make_pair(TensorTree(n), TensorTree(n * n));
                        },
                        TensorTree(c0), TensorTree(xs));
    return TensorTree{c, ys};
  };
  Tensor xs = oracle::rand_tensor({3, 4, 2}, DType::Float64, 71);
  Tensor c0 = oracle::rand_tensor({2}, DType::Float64, 72);
  TensorTree got = vmap(cumulative, {0, -1})(xs, c0);
  for (int64_t b = 0; b < 3; ++b) {
    TensorTree want = cumulative(xs[b], c0);
    EXPECT_TRUE(close(got[0].tensor()[b], want[0].tensor()));
    EXPECT_TRUE(close(got[1].tensor()[b], want[1].tensor()));
  }
  // xs shared, the initial carry batched; and under jit.
  Tensor cs = oracle::rand_tensor({3, 2}, DType::Float64, 73);
  TensorTree got2 = vmap(cumulative, {-1, 0})(xs[0], cs);
  EXPECT_TRUE(close(got2[1].tensor()[2], cumulative(xs[0], cs[2])[1].tensor()));
  auto jf = jit([&](const Tensor& x, const Tensor& c) { return vmap(cumulative, {0, -1})(x, c); });
  EXPECT_TRUE(close(jf(xs, c0)[1].tensor(), got[1].tensor()));
  // A batched carry that the body resets to a shared value.
  auto reset = [](const Tensor& xs, const Tensor& c0) {
    auto [c, ys] = scan([](const TensorTree& c, const TensorTree& x) {
                          return std::make_pair(TensorTree(x.tensor() * 0.0 + 1.0), TensorTree(c.tensor()));
                        },
                        TensorTree(c0), TensorTree(xs));
    return TensorTree{c, ys};
  };
  Tensor shared = oracle::rand_tensor({4, 2}, DType::Float64, 74);
  TensorTree got3 = vmap(reset, {-1, 0})(shared, cs);
  for (int64_t b = 0; b < 3; ++b) EXPECT_TRUE(close(got3[1].tensor()[b], reset(shared, cs[b])[1].tensor())) << b;
  // fori_loop: a counted scan with a batched carry.
  auto pow3 = [](const Tensor& x) {
    return fori_loop(0, 3, [&](const Tensor&, const TensorTree& c) { return TensorTree(c.tensor() * x); },
                     TensorTree(ones_like(x)))
        .tensor();
  };
  Tensor v = tensor({1.5, -2.0, 0.5}).to(DType::Float64);
  EXPECT_TRUE(close(vmap(pow3)(v), v * v * v));
  EXPECT_TRUE(close(vmap(grad(pow3))(v), v * v * 3.0));
}

// ---- randomness -------------------------------------------------------------------------------

TEST(Vmap, RandomOpsShareNumbersAcrossLanes) {
  Tensor xs = oracle::rand_tensor({4, 6}, DType::Float32, 81);
  Tensor noisy = vmap([](const Tensor& x) { return x + normal({6}); })(xs);
  Tensor noise = noisy - xs;
  for (int64_t b = 1; b < 4; ++b) EXPECT_TRUE(close(noise[b], noise[0], 1e-6));
  Tensor dropped = vmap([](const Tensor& x) { return dropout(x, 0.5); })(ones({4, 64}));
  for (int64_t b = 1; b < 4; ++b) EXPECT_TRUE(close(dropped[b], dropped[0])) << b;
  EXPECT_TRUE(any(not_equal(dropped[0], dropped[0] * 0.0)).item<bool>());
}

TEST(Vmap, BernoulliLanesShareDraws) {
  // Lanes with the same probabilities draw the same values; p = 0 and p = 1 are exact.
  Tensor p = full({4, 32}, 0.5).to(DType::Float64);
  Tensor got = vmap([](const Tensor& q) { return bernoulli(q); })(p);
  for (int64_t b = 1; b < 4; ++b) EXPECT_TRUE(close(got[b], got[0])) << b;
  Tensor ends = stack({zeros({8}, {DType::Float64}), ones({8}, {DType::Float64})}, 0);
  EXPECT_TRUE(close(vmap([](const Tensor& q) { return bernoulli(q); })(ends), ends));
}

// Removes a primitive's vmap rule for one scope, so it runs by the loop fallback.
class WithoutRule {
 public:
  explicit WithoutRule(const char* name) : p_(find_primitive(name)) {
    transforms::vmap_rules::install_vmap_rules();
    rule_ = p_->vmap;
    transforms::vmap_rules::def_vmap(*p_, nullptr);
  }
  ~WithoutRule() { transforms::vmap_rules::def_vmap(*p_, rule_); }
  WithoutRule(const WithoutRule&) = delete;
  WithoutRule& operator=(const WithoutRule&) = delete;

 private:
  Primitive* p_;
  VmapRule rule_;
};

TEST(Vmap, LoopFallbackMatchesTheRules) {
  Tensor xs = oracle::rand_tensor({3, 2, 4}, DType::Float64, 95), w = oracle::rand_tensor({4, 3}, DType::Float64, 96);
  auto f = [&w](const Tensor& x) { return softmax(matmul(x, w), 1) * 2.0; };
  const Tensor want = vmap(f)(xs);
  for (const char* name : {"matmul", "softmax", "mul"}) {
    WithoutRule off(name);
    EXPECT_TRUE(close(vmap(f)(xs), want)) << name;
    EXPECT_NE(transforms::vmap_rules::registry_report().find(name), std::string::npos);
  }
  Tensor ys = tensor({{1.0, 2.0}, {-3.0, 1.0}, {0.5, -0.25}}).to(DType::Float64);
  const Tensor want_if = vmap(signed_scale)(ys);
  {
    WithoutRule off("if");
    EXPECT_TRUE(close(vmap(signed_scale)(ys), want_if));
  }
  const Tensor want_while = vmap(newton_sqrt)(abs(select(ys, 1, 0)) + 1.0);
  {
    WithoutRule off("while");
    EXPECT_TRUE(close(vmap(newton_sqrt)(abs(select(ys, 1, 0)) + 1.0), want_while));
  }
}

// ---- errors and the registry ---------------------------------------------------------------

TEST(Vmap, ClearErrors) {
  Tensor x = ones({3, 2}), y = ones({4, 2});
  auto add2 = [](const Tensor& a, const Tensor& b) { return a + b; };
  EXPECT_ERROR(vmap(add2)(x, y), "[vmap] batch sizes differ: argument 0 has 3 along axis 0 but argument 1 has 4");
  EXPECT_ERROR(vmap(add2, {0})(x, x), "[vmap] in_axes has 1 entries but the function was called with 2 arguments");
  EXPECT_ERROR(vmap(add2, {0, 2})(x, x), "in_axes[1] = 2 is out of range for argument 1 of shape (3, 2)");
  EXPECT_ERROR(vmap(add2, {-1, -1})(x, x), "[vmap] no argument is batched");
  EXPECT_ERROR(vmap(add2, {0, -1})(x, ones({3})), "cannot broadcast");
  EXPECT_ERROR(vmap(lane_fn, 0, 2)(x), "out_axes[0] = 2 is out of range for output 0 of per-example shape (2,)");
  EXPECT_ERROR(vmap(lane_fn, 0, -1)(x), "out_axes[0] is -1 (not batched) but output 0 depends on a batched argument");
  EXPECT_ERROR(vmap([](const Tensor& a) { return sum(a).item<float>() > 0 ? a : -a; })(x), "traced value inside jit or vmap");
}

TEST(Vmap, RegistryReport) {
  const std::string report = transforms::vmap_rules::registry_report();
  std::printf("%s\n", report.c_str());
  // Only primitives whose rule is the loop by design: per-lane draws against shared numbers
  // (bernoulli), and primitives that never reach a traced graph (custom_vjp: a tape-only node;
  // compiler-made nodes: made by passes in compiled graphs, which never meet a transform).
  const std::set<std::string> by_design = {"bernoulli", "custom_vjp"};
  for (const auto& name : transforms::vmap_rules::primitives_using_loop())
    EXPECT_TRUE(by_design.count(name) || find_primitive(name)->compiler_made) << "primitive '" << name << "' has no vmap rule and runs by the loop fallback; "
                                       << "add a rule in src/transforms/vmap_rules/";
}

}  // namespace
}  // namespace spore
