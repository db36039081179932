// SPDX-License-Identifier: Apache-2.0
// In-place state under jit and vmap (shared/ARCHITECTURE.md, "State"): a write is functionalized
// by the trace (later reads see the new value) and a written input or captured tensor becomes
// state, an output marked "updates input j" that the caller writes back, so the traced run
// leaves memory as the eager run does.
#include <gtest/gtest.h>

#include "error_matchers.h"
#include "spore/spore.h"

namespace spore {
namespace {

using namespace ops;

std::vector<float> vec(const Tensor& t) { return t.to_vector<float>(); }

TEST(State, JitWritesCapturedStateBackEveryCall) {
  Tensor counter = zeros({2}, {DType::Float32});
  const Tensor w = tensor({3.0f, -1.0f});
  auto step = jit([&](const Tensor& x) {
    const Tensor before = counter * 1.0;  // read before the write: the old value
    add_(counter, x);
    return before + counter * w;  // read after: the new value
  });
  const Tensor x = tensor({1.0f, 2.0f});
  EXPECT_EQ(vec(step(x)), (std::vector<float>{3.0f, -2.0f}));
  EXPECT_EQ(vec(counter), (std::vector<float>{1.0f, 2.0f}));
  EXPECT_EQ(vec(step(x)), (std::vector<float>{1.0f + 6.0f, 2.0f - 4.0f}));
  EXPECT_EQ(vec(counter), (std::vector<float>{2.0f, 4.0f}));
  EXPECT_EQ(step.core().traces(), 1);
  const std::string text = step.core().last_graph_text();
  EXPECT_NE(text.find(": buffer float32[2]"), std::string::npos) << text;
  EXPECT_NE(text.find(" updates %1"), std::string::npos) << text;
}

TEST(State, JitArgumentsAndIntermediates) {
  // Writing an argument updates the caller's tensor; writing an intermediate changes nothing
  // outside the function and needs no state output.
  auto square_in_place = jit([](const Tensor& x) {
    Tensor y = x;  // the same tensor
    mul_(y, x * 1.0);
    return y + 1.0;
  });
  Tensor x = tensor({2.0f, -3.0f});
  EXPECT_EQ(vec(square_in_place(x)), (std::vector<float>{5.0f, 10.0f}));
  EXPECT_EQ(vec(x), (std::vector<float>{4.0f, 9.0f}));
  auto local = jit([](const Tensor& a) {
    Tensor t = a * 2.0;
    add_(t, a);
    fill_(t, 7.0);
    add_(t, a);
    return t;
  });
  const Tensor a = tensor({1.0f, 2.0f});
  EXPECT_EQ(vec(local(a)), (std::vector<float>{8.0f, 9.0f}));
  EXPECT_EQ(vec(a), (std::vector<float>{1.0f, 2.0f}));
  EXPECT_EQ(local.core().last_graph_text().find("updates"), std::string::npos);
}

// The passes reduce `p * 1.0` to p itself; the result must still be the old value, not the
// caller's tensor that the state write-back then changes. A swap through a temporary likewise.
TEST(State, ResultsNeverAliasStateWrittenBack) {
  Tensor p = ones({3});
  const Tensor old = jit([](const Tensor& x) {
    Tensor y = x;
    const Tensor before = y * 1.0;
    add_(y, ones({3}));
    return before;
  })(p);
  EXPECT_EQ(vec(old), std::vector<float>(3, 1.0f));
  EXPECT_EQ(vec(p), std::vector<float>(3, 2.0f));
  EXPECT_FALSE(old.storage() == p.storage());
  Tensor a = tensor({1.0f, 2.0f}), b = tensor({3.0f, 4.0f});
  jit([](const Tensor& x, const Tensor& y) {
    Tensor xa = x, yb = y;
    const Tensor t = xa * 1.0;
    copy_(xa, yb);
    copy_(yb, t);
    return t;
  })(a, b);
  EXPECT_EQ(vec(a), (std::vector<float>{3.0f, 4.0f}));
  EXPECT_EQ(vec(b), (std::vector<float>{1.0f, 2.0f}));
  // Two results CSE makes one are still two tensors.
  const auto r = jit([](const Tensor& x) { return std::vector<Tensor>{x + 1.0, x + 1.0}; })(a);
  EXPECT_FALSE(r[0].storage() == r[1].storage());
}

TEST(State, BatchNormRunningStatisticsUnderJit) {
  manual_seed(5);
  const Tensor x1 = normal({8, 3}, 1.0, 2.0), x2 = normal({8, 3}, -1.0, 0.5);
  const Tensor g = ones({3}), b = zeros({3});
  Tensor rm_e = zeros({3}), rv_e = ones({3}), rm_j = zeros({3}), rv_j = ones({3});
  const Tensor y1 = batch_norm(x1, g, b, rm_e, rv_e, true, 0.1, 1e-5);
  batch_norm(x2, g, b, rm_e, rv_e, true, 0.1, 1e-5);
  auto step = jit([&](const Tensor& x) { return batch_norm(x, g, b, rm_j, rv_j, true, 0.1, 1e-5); });
  EXPECT_EQ(vec(step(x1)), vec(y1));
  step(x2);
  EXPECT_EQ(step.core().traces(), 1);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_FLOAT_EQ(vec(rm_j)[i], vec(rm_e)[i]) << i;
    EXPECT_FLOAT_EQ(vec(rv_j)[i], vec(rv_e)[i]) << i;
  }
  EXPECT_NE(vec(rm_j)[0], 0.0f);
  // Under jit(grad) the statistics are still written (they carry no gradient).
  Tensor rm_g = zeros({3}), rv_g = ones({3});
  auto loss = [&](const Tensor& x) { return sum(batch_norm(x, g, b, rm_g, rv_g, true, 0.1, 1e-5) * x); };
  jit([&](const Tensor& x) { return grad(loss)(x); })(x1);
  Tensor rm_1 = zeros({3}), rv_1 = ones({3});
  batch_norm(x1, g, b, rm_1, rv_1, true, 0.1, 1e-5);
  for (size_t i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(vec(rm_g)[i], vec(rm_1)[i]) << i;
}

TEST(State, VmapWritesLanesBack) {
  Tensor xs = tensor({{1.0f, 2.0f}, {3.0f, 4.0f}, {5.0f, 6.0f}});
  auto f = [](const Tensor& x) {
    Tensor y = x;
    add_(y, x * 10.0);
    return y * 2.0;
  };
  const Tensor r = vmap(f)(xs);
  EXPECT_EQ(vec(r), (std::vector<float>{22, 44, 66, 88, 110, 132}));
  EXPECT_EQ(vec(xs), (std::vector<float>{11, 22, 33, 44, 55, 66}));
  // Batched along axis 1: each lane is a column.
  Tensor cols = tensor({{1.0f, 2.0f}, {3.0f, 4.0f}});
  vmap(f, 1)(cols);
  EXPECT_EQ(vec(cols), (std::vector<float>{11, 22, 33, 44}));
  // A shared tensor written with a value every lane agrees on.
  Tensor shared = zeros({2});
  vmap([&](const Tensor& x) {
    add_(shared, ones({2}));
    return x + shared;
  })(xs);
  EXPECT_EQ(vec(shared), (std::vector<float>{1, 1}));
}

TEST(State, ClearErrors) {
  Tensor buf = zeros({2, 2});
  EXPECT_ERROR(vmap([&](const Tensor& x) {
                 copy_(buf, x);
                 return x;
               })(ones({3, 2, 2})),
               "writes in place into a captured tensor, which every lane shares, a value that differs between lanes");
  EXPECT_ERROR(jit([&](const Tensor& x) {
                 return cond(x > 0.0, [&](const TensorTree& t) { add_(buf, t.tensor()); return t; },
                             [](const TensorTree& t) { return t; }, x).tensor();
               })(scalar_tensor(1.0f, DType::Float32)),
               "an in-place update inside a control-flow body");
  EXPECT_ERROR(jit([](const Tensor& x) {
                 Tensor t = x * 2.0;
                 Tensor v = reshape(t, {4});
                 return add_(v, ones({4}));
               })(ones({2, 2})),
               "the destination is a view");
  EXPECT_ERROR(jit([](const Tensor& x) {
                 Tensor t = x * 2.0;
                 Tensor v = reshape(t, {4});
                 add_(t, x);
                 return v;
               })(ones({2, 2})),
               "has views taken of it earlier in the function");
  EXPECT_ERROR(jit([](const Tensor& x) {
                 return grad([](const Tensor& a) {
                   Tensor t = a * 2.0;
                   add_(t, a);
                   return sum(t);
                 })(x);
               })(ones({2})),
               "the destination is tracked by an open transform (grad, jvp)");
  Tensor base = zeros({4});
  Tensor view = reshape(base, {2, 2});
  EXPECT_ERROR(jit([&](const Tensor& x) {
                 add_(view, x);
                 return base * 1.0;
               })(ones({2, 2})),
               "shares memory with a tensor the function wrote in place");
  EXPECT_EQ(vec(base), std::vector<float>(4, 0.0f));  // nothing was half-written
}

}  // namespace
}  // namespace spore
