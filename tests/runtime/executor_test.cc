// SPDX-License-Identifier: Apache-2.0
// The compiled-plan executor (runtime/plan.h, passes/lower_plan.h): a lowered plan gives the
// interpreter's results bitwise (same kernels, same order), writes state into its inputs when
// that is safe, and a jitted training step makes no system allocation after warm-up.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "passes/lower_plan.h"
#include "passes/pipeline.h"
#include "runtime/plan.h"
#include "spore/spore.h"
#include "transforms/interpreter.h"
#include "trace_program.h"

namespace spore {
namespace {

using namespace ops;
using Fn = spore::testing::ProgramFn;

Tensor r(const Shape& s, uint64_t seed) {
  manual_seed(seed);
  return normal(s, 0, 0.5);
}

std::vector<Tensor> clones(const std::vector<Tensor>& xs) {
  std::vector<Tensor> c;
  for (const Tensor& x : xs) c.push_back(x.clone());
  return c;
}

void expect_bitwise(const Tensor& got, const Tensor& want, size_t i) {
  ASSERT_EQ(got.dtype(), want.dtype()) << i;
  ASSERT_EQ(got.shape(), want.shape()) << i;
  const Tensor a = got.contiguous(), b = want.contiguous();
  EXPECT_EQ(std::memcmp(a.data_ptr(), b.data_ptr(), static_cast<size_t>(a.numel()) * a.itemsize()), 0)
      << "output " << i << ": plan " << got << " vs interpreter " << want;
}

int count_kind(const runtime::Plan& p, runtime::SlotKind k) {
  int n = 0;
  for (const auto& s : p.slots) n += s.kind == k;
  return n;
}

bool has_step(const runtime::Plan& p, const std::string& prim) {
  for (const auto& st : p.steps)
    if (st.prim->name == prim) return true;
  return false;
}

// Runs the graph of `fn` at `level` through the interpreter and, twice (the arena reused), a
// plan, each on its own copy of the inputs (a plan writes state into its inputs); compares
// outputs and the inputs left behind bitwise. Returns the plan.
std::shared_ptr<runtime::Plan> check_plan(const Fn& fn, const std::vector<Tensor>& inputs, int level) {
  const auto traced = spore::testing::trace_program(fn, inputs);
  const ir::GraphPtr g = passes::optimize(traced.graph, level);
  auto interp_in = clones(traced.inputs);
  const auto want = transforms::interpret(*g, interp_in);
  auto plan = passes::lower_plan(*g, traced.inputs);
  for (int call = 0; call < 2; ++call) {
    SCOPED_TRACE(call);
    auto plan_in = clones(traced.inputs);
    const auto got = runtime::run(*plan, plan_in);
    EXPECT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size() && i < want.size(); ++i) expect_bitwise(got[i], want[i], i);
  }
  return plan;
}

TEST(Executor, MlpValueAndGradMatchesTheInterpreterBitwise) {
  auto plan = check_plan(
      [](const std::vector<Tensor>& x) {
        auto loss = [&](const Tensor& w1, const Tensor& b1, const Tensor& w2) {
          return cross_entropy(matmul(relu(addmm(b1, x[0], w1)), w2), x[1]);
        };
        auto [v, g] = value_and_grad(loss, {0, 1, 2})(x[2], x[3], x[4]);
        return std::vector<Tensor>{v, g[0], g[1], g[2]};
      },
      {r({16, 32}, 1), tensor(std::initializer_list<int64_t>{0, 2, 1, 2, 0, 1, 1, 0, 2, 2, 0, 1, 0, 0, 1, 2}), r({32, 64}, 2),
       r({64}, 3), r({64, 3}, 4)},
      1);
  EXPECT_GT(plan->steps.size(), 8u);
  EXPECT_EQ(count_kind(*plan, runtime::SlotKind::Output), 4);
}

TEST(Executor, ConvBatchNormTrainingWritesTheStatisticsInPlace) {
  auto plan = check_plan(
      [](const std::vector<Tensor>& x) {
        Tensor rm = x[3], rv = x[4];
        Tensor y = batch_norm(conv2d(x[0], x[1], x[2]), {}, {}, rm, rv, true, 0.1);
        return std::vector<Tensor>{max_pool2d(relu(y), PoolOptions{.kernel = {2, 2}, .stride = {}})};
      },
      {r({2, 3, 8, 8}, 5), r({4, 3, 3, 3}, 6), r({4}, 7), zeros({4}), ones({4})}, 1);
  // Both running statistics are state outputs; each is written straight into its input.
  EXPECT_EQ(count_kind(*plan, runtime::SlotKind::Donated), 2) << runtime::plan_str(*plan);
  Tensor rm = zeros({4}), rv = ones({4});
  const void* rm_at = rm.data_ptr();
  const auto traced = spore::testing::trace_program(
      [](const std::vector<Tensor>& x) {
        Tensor m = x[3], v = x[4];
        return std::vector<Tensor>{batch_norm(conv2d(x[0], x[1], x[2]), {}, {}, m, v, true, 0.1)};
      },
      {r({2, 3, 8, 8}, 5), r({4, 3, 3, 3}, 6), r({4}, 7), rm, rv});
  const auto p = passes::lower_plan(*passes::optimize(traced.graph, 1), traced.inputs);
  const auto out = runtime::run(*p, traced.inputs);
  EXPECT_TRUE(out[1].is_same(traced.inputs[3]));  // the state output is the input, written
  EXPECT_EQ(rm.data_ptr(), rm_at);
  EXPECT_NE(rm.to_vector<float>(), std::vector<float>(4, 0.0f));
}

TEST(Executor, AttentionBlockMatchesTheInterpreterBitwise) {
  check_plan(
      [](const std::vector<Tensor>& x) {
        const Tensor h = layer_norm(x[0], {8});
        const Tensor q = matmul(h, x[1]), k = matmul(h, x[2]), v = matmul(h, x[3]);
        const Tensor a = matmul(softmax(matmul(q, transpose(k, 0, 1)) * 0.35355339059327373, -1), v);
        const Tensor y = x[0] + a;
        return std::vector<Tensor>{y + matmul(gelu(matmul(layer_norm(y, {8}), x[4])), x[5])};
      },
      {r({5, 8}, 8), r({8, 8}, 9), r({8, 8}, 10), r({8, 8}, 11), r({8, 16}, 12), r({16, 8}, 13)}, 1);
}

TEST(Executor, ViewsBecomeStridesAndOffsets) {
  auto plan = check_plan(
      [](const std::vector<Tensor>& x) {
        const Tensor t = transpose(x[0], 0, 1);                       // (6, 4) strided view of an input
        const Tensor s = slice(matmul(t, x[1]), 0, 1, 5, 2);          // (2, 3) view of an intermediate
        const Tensor m = reshape(exp(x[0]), {2, 12});                 // view of an intermediate, returned
        return std::vector<Tensor>{s * 2.0, m, t, slice(m, 1, 3, 9)};  // t: an input's view, returned
      },
      {r({4, 6}, 14), r({4, 3}, 15)}, 1);
  EXPECT_GE(count_kind(*plan, runtime::SlotKind::View), 4) << runtime::plan_str(*plan);
  EXPECT_FALSE(has_step(*plan, "transpose"));
}

TEST(Executor, ScanAndWhileRunTheirSubGraphs) {
  auto plan = check_plan(
      [](const std::vector<Tensor>& x) {
        auto [carry, ys] = scan([](const TensorTree& c, const TensorTree& xi) {
          const Tensor n = tanh(c.tensor() + xi.tensor());
          return std::pair<TensorTree, TensorTree>{TensorTree(n), TensorTree(n * 2.0)};
        }, TensorTree(x[1]), TensorTree(x[0]));
        const Tensor w = while_loop([](const TensorTree& c) { return sum(c.tensor()) < 100.0; },
                                    [](const TensorTree& c) { return TensorTree(c.tensor() * 2.0 + 1.0); },
                                    TensorTree(abs(carry.tensor())))
                             .tensor();
        return std::vector<Tensor>{carry.tensor(), ys.tensor(), w};
      },
      {r({5, 3}, 16), r({3}, 17)}, 1);
  EXPECT_TRUE(has_step(*plan, "scan"));
  EXPECT_TRUE(has_step(*plan, "while"));
}

TEST(Executor, FusedNodesRunTheirKernel) {
  auto plan = check_plan(
      [](const std::vector<Tensor>& x) { return std::vector<Tensor>{sum(gelu(x[0] * x[1] + 0.5) * sigmoid(x[1]))}; },
      {r({64, 33}, 18), r({64, 33}, 19)}, 2);
  EXPECT_TRUE(has_step(*plan, "fused")) << runtime::plan_str(*plan);
}

TEST(Executor, StridedInputsAreMadeContiguousAndWrongTypesFailClearly) {
  const auto traced = spore::testing::trace_program(
      [](const std::vector<Tensor>& x) { return std::vector<Tensor>{x[0] * 3.0}; }, {zeros({3, 2})});
  const auto p = passes::lower_plan(*traced.graph, traced.inputs);
  const Tensor strided = transpose(tensor({{1.0f, 2.0f, 3.0f}, {4.0f, 5.0f, 6.0f}}), 0, 1);
  EXPECT_EQ(runtime::run(*p, std::vector<Tensor>{strided})[0].to_vector<float>(), (std::vector<float>{3, 12, 6, 15, 9, 18}));
  try {
    runtime::run(*p, std::vector<Tensor>{zeros({2, 3})});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("lowered for float32(3, 2)"), std::string::npos) << e.what();
  }
}

TEST(Executor, ConcurrentCallsOfOnePlanUseTheirOwnArenas) {
  const auto traced = spore::testing::trace_program(
      [](const std::vector<Tensor>& x) { return std::vector<Tensor>{sum(relu(matmul(x[0], x[1]) + 1.0) * sum(x[0]))}; },
      {r({32, 48}, 23), r({48, 40}, 24)});
  const auto want = transforms::interpret(*traced.graph, traced.inputs)[0];
  const auto p = passes::lower_plan(*traced.graph, traced.inputs);
  std::vector<int> bad(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) bad[size_t(t)] += runtime::run(*p, traced.inputs)[0].item<float>() != want.item<float>();
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad, std::vector<int>(4, 0));
}

// An SGD step with momentum on captured parameters, written with ops. The loss reads copies of
// the parameters: a trace refuses to write a tensor that views were taken of (the backward
// transposes the weights), since a later read of such a view would miss the write.
struct Mlp {
  Tensor w1 = r({20, 32}, 20), b1 = zeros({32}), w2 = r({32, 5}, 21), b2 = zeros({5});
  Tensor m1 = zeros({20, 32}), mb1 = zeros({32}), m2 = zeros({32, 5}), mb2 = zeros({5});
  Tensor step(const Tensor& x, const Tensor& y) {
    auto loss = [&](const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& d) {
      return cross_entropy(addmm(d, relu(addmm(b, x, a)), c), y);
    };
    auto [v, g] = value_and_grad(loss, {0, 1, 2, 3})(w1.clone(), b1.clone(), w2.clone(), b2.clone());
    Tensor* ps[] = {&w1, &b1, &w2, &b2};
    Tensor* ms[] = {&m1, &mb1, &m2, &mb2};
    for (size_t i = 0; i < 4; ++i) {
      copy_(*ms[i], *ms[i] * 0.9 + g[i]);
      copy_(*ps[i], *ps[i] - *ms[i] * 0.05);
    }
    return v;
  }
  std::vector<Tensor> all() const { return {w1, b1, w2, b2, m1, mb1, m2, mb2}; }
};

TEST(Executor, JittedTrainingStepMakesNoSystemAllocationsAndUpdatesInPlace) {
  const Tensor x = r({16, 20}, 22);
  const Tensor y = tensor(std::initializer_list<int64_t>{0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0});
  Mlp eager, graph;
  auto step = jit([&](const Tensor& a, const Tensor& b) { return graph.step(a, b); });
  std::vector<const void*> at;
  for (const Tensor& t : graph.all()) at.push_back(t.data_ptr());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(step(x, y).item<float>(), eager.step(x, y).item<float>());  // warm-up
  const uint64_t before = memory_stats().system_allocations;
  for (int i = 0; i < 10; ++i) EXPECT_EQ(step(x, y).item<float>(), eager.step(x, y).item<float>());
  EXPECT_EQ(memory_stats().system_allocations, before);
  EXPECT_EQ(step.core().traces(), 1);
  const auto e = eager.all(), g = graph.all();
  for (size_t i = 0; i < g.size(); ++i) {
    EXPECT_EQ(g[i].data_ptr(), at[i]) << i;
    expect_bitwise(g[i], e[i], i);
  }
}

TEST(Executor, TrainingStepStateIsDonated) {
  Mlp m;
  const Tensor x = r({16, 20}, 22);
  const Tensor y = tensor(std::initializer_list<int64_t>{0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0});
  const auto traced = spore::testing::trace_program(
      [&](const std::vector<Tensor>& a) { return std::vector<Tensor>{m.step(a[0], a[1])}; }, {x, y});
  const auto p = passes::lower_plan(*passes::optimize(traced.graph, 1), traced.inputs);
  // Every parameter and momentum buffer takes its update in place.
  EXPECT_EQ(count_kind(*p, runtime::SlotKind::Donated), 8) << runtime::plan_str(*p);
}

TEST(Executor, DonatedStateUpdatesBumpTheInputsVersion) {
  Mlp m;
  const Tensor x = r({16, 20}, 22);
  const Tensor y = tensor(std::initializer_list<int64_t>{0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0});
  auto step = jit([&](const Tensor& a, const Tensor& b) { return m.step(a, b); });
  step(x, y);
  const uint64_t v = m.w1.version();
  step(x, y);
  EXPECT_NE(m.w1.version(), v) << "a kernel caching work made from w1 would not see the update";
}

// Steps that read only captured tensors the graph never writes (here w * 2) run on the first
// call and again only after such a tensor changes (pointer or version).
TEST(Executor, InvariantStepsRunOnlyWhenTheirInputsChange) {
  const Tensor x = r({8, 16}, 50);
  Tensor w = r({16, 4}, 51);
  auto f = jit([&](const Tensor& a) { return matmul(a, w * 2.0); });
  expect_bitwise(f(x), matmul(x, w * 2.0), 0);
  const auto traced = spore::testing::trace_program([&](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{matmul(a[0], w * 2.0)};
  }, {x});
  const auto plan = passes::lower_plan(*passes::optimize(traced.graph, 1), traced.inputs);
  int invariant = 0;
  for (const auto& st : plan->steps) invariant += st.invariant;
  EXPECT_EQ(invariant, 1) << runtime::plan_str(*plan);
  EXPECT_EQ(plan->invariant_inputs.size(), 1u);
  const Tensor before = f(x);
  w.data<float>()[0] += 1.f;  // a raw write without bump_version(): not seen, the proof of the skip
  expect_bitwise(f(x), before, 1);
  w.storage()->bump_version();
  expect_bitwise(f(x), matmul(x, w * 2.0), 2);
  copy_(w, w * 0.5);
  expect_bitwise(f(x), matmul(x, w * 2.0), 3);
  const Tensor x2 = r({8, 16}, 52);  // new data: the invariant part is still reused, correctly
  expect_bitwise(f(x2), matmul(x2, w * 2.0), 4);
}

// A result made from literals alone is kept across calls when small; a large one (a zero fill
// the size of an activation, as max pooling's gradient scatters into) is remade each call, so
// its bytes are live only around its reader instead of through the whole call.
TEST(Executor, LargeLiteralResultsAreRemadeEachCall) {
  const Tensor idx = tensor(std::initializer_list<int64_t>{0, 5, 7});
  auto program = [&](int64_t n) {
    return spore::testing::trace_program([&, n](const std::vector<Tensor>& a) {
      return std::vector<Tensor>{scatter(zeros({n}), 0, idx, a[0])};
    }, {r({3}, 60)});
  };
  for (const int64_t n : {int64_t{1024}, int64_t{1} << 19}) {
    const auto traced = program(n);
    const auto plan = passes::lower_plan(*passes::optimize(traced.graph, 1), traced.inputs);
    int invariant = 0;
    for (const auto& st : plan->steps) invariant += st.invariant;
    EXPECT_EQ(invariant, n == 1024 ? 1 : 0) << n << "\n" << runtime::plan_str(*plan);
    for (int call = 0; call < 2; ++call) {
      const auto out = runtime::run(*plan, traced.inputs)[0].to_vector<float>();
      const auto src = traced.inputs[0].to_vector<float>();
      ASSERT_EQ(out.size(), static_cast<size_t>(n));
      EXPECT_EQ(out[5], src[1]);
      EXPECT_EQ(out[1], 0.f);
      EXPECT_EQ(out[static_cast<size_t>(n) - 1], 0.f);
    }
  }
}

// An inference conv keeps its reordered weights while the weight tensor's pointer and version
// stay the same (KernelContext::input_stamps), and reorders again after an in-place write.
TEST(Executor, ConvReusesReorderedWeightsUntilTheyChange) {
  ConvOptions o;
  o.padding = {1};
  const Tensor x = r({1, 32, 10, 10}, 30);
  Tensor w = r({32, 32, 3, 3}, 31) * 0.4;
  auto f = jit([&](const Tensor& a) { return relu(conv2d(a, w, {}, o)); });
  for (int i = 0; i < 4; ++i) expect_bitwise(f(x), relu(conv2d(x, w, {}, o)), static_cast<size_t>(i));
  copy_(w, w * 0.5);  // an in-place write: a new version
  expect_bitwise(f(x), relu(conv2d(x, w, {}, o)), 10);
  for (int i = 0; i < 3; ++i) expect_bitwise(f(x), relu(conv2d(x, w, {}, o)), static_cast<size_t>(11 + i));
  // A write through the raw pointer without bump_version() is not seen: the proof that the kept
  // copy is used (and the rule tensor.h states for such writes).
  const Tensor before = f(x);
  w.data<float>()[0] += 1.f;
  expect_bitwise(f(x), before, 15);
  w.storage()->bump_version();
  expect_bitwise(f(x), relu(conv2d(x, w, {}, o)), 16);
  Tensor w2 = w.clone();  // another tensor: another pointer and version
  auto g = jit([&](const Tensor& a, const Tensor& k) { return conv2d(a, k, {}, o); });
  for (int i = 0; i < 3; ++i) {
    expect_bitwise(g(x, w), conv2d(x, w, {}, o), static_cast<size_t>(20 + i));
    expect_bitwise(g(x, w2 * 2.0), conv2d(x, w2 * 2.0, {}, o), static_cast<size_t>(30 + i));
  }
}

}  // namespace
}  // namespace spore
