// SPDX-License-Identifier: Apache-2.0
// Random ops under jit (issue 4, ARCHITECTURE "State, randomness and effects"): the generator
// state is a graph input, so a random function is traced once, runs as a lowered plan, and each
// call draws exactly what the eager call would draw at that point of the generator's stream.
#include <gtest/gtest.h>

#include "error_matchers.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "prims/dropout.h"
#include "prims/random.h"
#include "runtime/dispatch.h"
#include "spore/models/classic.h"
#include "spore/nn/containers.h"
#include "spore/nn/dense.h"
#include "spore/nn/dropout.h"
#include "transforms/jit_compare.h"

namespace spore {
namespace {

using namespace ops;

std::vector<float> values(const Tensor& t) { return t.contiguous().to_vector<float>(); }

TEST(JitRandom, ConsecutiveCallsDrawWhatEagerCallsDrawFromOneTraceAsPlans) {
  auto f = [](const Tensor& x) {
    return x + uniform(x.shape()) + sum(normal({2})) + dropout(ones({5}), 0.5) * 0.25 +
           truncated_normal({5}) + bernoulli({5}, 0.3) + randint(0, 7, {5}).to(DType::Float32) +
           permutation(5).to(DType::Float32) + bernoulli(full({5}, 0.6));
  };
  const Tensor x = zeros({5});
  manual_seed(11);
  std::vector<std::vector<float>> eager;
  for (int i = 0; i < 3; ++i) eager.push_back(values(f(x)));
  const uint64_t eager_offset = default_generator().offset();

  testing::GraphModeScope graph;
  auto jf = jit(f);
  manual_seed(11);
  testing::RunCounter counter;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(values(jf(x)), eager[static_cast<size_t>(i)]) << "call " << i;
  EXPECT_NE(eager[0], eager[1]);
  EXPECT_EQ(jf.core().traces(), 1);
  EXPECT_EQ(counter.plans(), 3) << transforms::last_interpreted_reason();
  // The generator is left where the eager calls left it: later draws agree too.
  EXPECT_EQ(default_generator().offset(), eager_offset);
  // The graph reads the generator state as an input; no key is baked in. Its text round-trips.
  const std::string text = jf.core().last_graph_text();
  EXPECT_NE(text.find("buffer int64[2]"), std::string::npos) << text;
  EXPECT_EQ(ir::print_graph(*ir::parse_graph(text)), text);
}

TEST(JitRandom, InterpreterAgreesWithThePlan) {
  auto f = [](const Tensor& x) { return dropout(x, 0.3) + uniform(x.shape()); };
  const Tensor x = ones({4, 3});
  manual_seed(3);
  const auto e1 = values(f(x)), e2 = values(f(x));
  testing::GraphModeScope graph;
  testing::OptLevelScope o0(0);  // the interpreter (reference) path
  auto jf = jit(f);
  manual_seed(3);
  EXPECT_EQ(values(jf(x)), e1);
  EXPECT_EQ(values(jf(x)), e2);
  EXPECT_EQ(jf.core().traces(), 1);
}

TEST(JitRandom, ReseedingBetweenCallsIsSeen) {
  auto f = [](const Tensor& x) { return x + uniform(x.shape()); };
  const Tensor x = zeros({6});
  manual_seed(5);
  const auto e5 = values(f(x));
  manual_seed(6);
  const auto e6 = values(f(x));
  testing::GraphModeScope graph;
  auto jf = jit(f);
  manual_seed(5);
  EXPECT_EQ(values(jf(x)), e5);
  manual_seed(6);
  EXPECT_EQ(values(jf(x)), e6);  // the seed is an input too
  manual_seed(5);
  EXPECT_EQ(values(jf(x)), e5);
  EXPECT_EQ(jf.core().traces(), 1);
}

// A function that seeds the generator itself: its draws after manual_seed are the same on every
// call (constants of the graph), and each call leaves the generator where the eager call does.
TEST(JitRandom, ManualSeedInsideTheFunction) {
  auto f = [](const Tensor& x) {
    Tensor before = uniform(x.shape());
    manual_seed(9);
    return x + before + normal(x.shape());
  };
  const Tensor x = zeros({4});
  manual_seed(1);
  const auto e1 = values(f(x)), e2 = values(f(x));
  const auto after = values(uniform({4}));
  EXPECT_NE(e1, e2);  // `before` comes from seed 1 first, then from seed 9's stream
  testing::GraphModeScope graph;
  auto jf = jit(f);
  manual_seed(1);
  testing::RunCounter counter;
  EXPECT_EQ(values(jf(x)), e1);
  EXPECT_EQ(values(jf(x)), e2);
  EXPECT_EQ(values(uniform({4})), after);
  EXPECT_EQ(jf.core().traces(), 1);
  EXPECT_EQ(counter.plans(), 2);
}

// An explicit key is a constant: every call draws the same numbers.
TEST(JitRandom, ExplicitKeysStayFixed) {
  auto f = [](const Tensor& x) { return x + uniform(x.shape(), 0.0, 1.0, {}, RandomKey{77, 8}); };
  const Tensor x = zeros({5});
  const auto want = values(f(x));
  testing::GraphModeScope graph;
  auto jf = jit(f);
  EXPECT_EQ(values(jf(x)), want);
  EXPECT_EQ(values(jf(x)), want);
  EXPECT_EQ(jf.core().traces(), 1);
}

TEST(JitRandom, KeyInputIsChecked) {
  // The key input of a random primitive in a graph is an int64 [seed, offset]; anything else is
  // refused by the primitive's type inference, which says what it must be.
  EXPECT_ERROR(runtime::call(prims::dropout_primitive(), prims::DropoutAttrs{0.5, 0, 0}, {full({3}, 0.5), zeros({3})}),
               "int64 tensor of shape (2)");
  EXPECT_ERROR(runtime::call(prims::uniform_primitive(), prims::RandomFillAttrs{}, {zeros({2}), zeros({2})}),
               "plus, in a jit graph, an int64 key");
  // A well-formed key: the draw is the one with that seed at base + delta.
  prims::RandomFillAttrs at;
  at.shape = {6};
  at.offset = 4;
  const Tensor keyed = runtime::call(prims::uniform_primitive(), at, {tensor({int64_t{13}, int64_t{8}})});
  EXPECT_EQ(values(keyed), values(uniform({6}, 0.0, 1.0, {}, RandomKey{13, 12})));
}

// vmap inside jit: the vmap trace draws the key once for all lanes, its dropout rule calls the
// primitive with that key, and the jit graph takes it relative to the state input.
TEST(JitRandom, VmapInsideJitDrawsWhatEagerVmapDraws) {
  auto f = [](const Tensor& xs) { return vmap([](const Tensor& x) { return dropout(x, 0.5) + normal({6}); })(xs); };
  const Tensor xs = ones({3, 6});
  manual_seed(8);
  const auto e1 = values(f(xs)), e2 = values(f(xs));
  testing::GraphModeScope graph;
  auto jf = jit(f);
  manual_seed(8);
  EXPECT_EQ(values(jf(xs)), e1);
  EXPECT_EQ(values(jf(xs)), e2);
  EXPECT_NE(e1, e2);
  EXPECT_EQ(jf.core().traces(), 1);
}

// checkpoint recomputes its function in the backward with the generator rewound: under jit the
// recomputed dropout must take the forward's key (the same delta from the state input).
TEST(JitRandom, CheckpointReplaysTheForwardMaskUnderJit) {
  auto body = checkpoint([](const TensorTree& t) { return TensorTree(dropout(t.tensor() * 2.0, 0.5)); });
  auto f = [&body](const Tensor& x) {
    auto [v, g] = value_and_grad([&body](const Tensor& v) { return sum(body(TensorTree(v)).tensor() * v); })(x);
    return std::vector<Tensor>{v, g};
  };
  const Tensor x = normal({64}) + 2.0;
  manual_seed(4);
  const auto e1 = f(x), e2 = f(x);
  testing::GraphModeScope graph;
  auto jf = jit([&f](const Tensor& v) { return TensorTree(f(v)); });
  manual_seed(4);
  const auto j1 = jf(x).leaves(), j2 = jf(x).leaves();
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(values(j1[i]), values(e1[i])) << i;
    EXPECT_EQ(values(j2[i]), values(e2[i])) << i;
  }
  EXPECT_NE(values(j1[1]), values(j2[1]));
  EXPECT_EQ(jf.core().traces(), 1);
}

// A training step with dropout under jit: forward, value_and_grad through functional_call and
// an SGD update written in place. Three steps match the eager steps bitwise (loss and weights),
// from one trace, each run as a lowered plan.
TEST(JitRandom, DropoutTrainingStepMatchesEagerBitwiseAsAPlan) {
  auto make = [] {
    manual_seed(21);
    return std::make_unique<nn::SequentialCell>(std::make_unique<nn::Dense>(6, 16), std::make_unique<nn::Dropout>(0.4),
                                                std::make_unique<nn::Dense>(16, 3));
  };
  auto eager_net = make(), graph_net = make();
  manual_seed(22);
  const Tensor x = normal({8, 6}), y = normal({8, 3});
  auto step_of = [&x, &y](nn::SequentialCell& net) {
    return [&net, &x, &y](const Tensor& lr) {
      auto loss = [&](const TensorTree& p) {
        return nn::functional_call(net, p, [&] { return mean((net(x) - y) * (net(x) - y)); });
      };
      auto [v, g] = value_and_grad(loss)(net.parameter_tree());
      auto ps = net.parameters();
      const auto gs = g.leaves();
      for (size_t i = 0; i < ps.size(); ++i) copy_(ps[i], ps[i] - lr * gs[i]);
      return v;
    };
  };
  const Tensor lr = full({}, 0.1);
  manual_seed(5);
  std::vector<std::vector<float>> eager_loss;
  auto eager_step = step_of(*eager_net);
  for (int i = 0; i < 3; ++i) eager_loss.push_back(values(eager_step(lr)));

  testing::GraphModeScope graph;
  auto jstep = jit(step_of(*graph_net));
  manual_seed(5);
  testing::RunCounter counter;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(values(jstep(lr)), eager_loss[static_cast<size_t>(i)]) << "step " << i;
  EXPECT_EQ(jstep.core().traces(), 1);
  EXPECT_EQ(counter.plans(), 3) << transforms::last_interpreted_reason();
  const auto pe = eager_net->parameters(), pg = graph_net->parameters();
  ASSERT_EQ(pe.size(), pg.size());
  for (size_t i = 0; i < pe.size(); ++i) EXPECT_EQ(values(pg[i]), values(pe[i])) << "parameter " << i;
  EXPECT_NE(eager_loss[1], eager_loss[2]);
}

}  // namespace
}  // namespace spore
