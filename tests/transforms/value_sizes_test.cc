// SPDX-License-Identifier: Apache-2.0
// Sizes that a tensor's values give when a graph runs (value symbols, include/spore/shape.h):
// nonzero's count, topk with k from a tensor, a reshape to a shape held in a tensor. One traced
// graph serves every value: the interpreter binds the symbols as the nodes run (bind_sizes,
// Primitive::value_sizes), kernels check them then, and gradients, vmap and the IR text carry
// them through.
#include <gtest/gtest.h>

#include "error_matchers.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "spore/spore.h"
#include "transforms/interpreter.h"
#include "transforms/ir_bridge.h"
#include "trace_program.h"
#include "transforms/jit_stats.h"

namespace spore {
namespace {

using namespace ops;

Tensor k_of(int64_t k) { return scalar_tensor(k, DType::Int64); }

TEST(ValueSizes, EagerSizesAreTheValues) {
  const Tensor x = arange(0, 12).reshape({3, 4});
  auto [same, sizes] = with_sizes(x, tensor({2, 6}).to(DType::Int64));
  EXPECT_TRUE(same.is_same(x));
  EXPECT_EQ(sizes, (Shape{2, 6}));
  EXPECT_ERROR(with_sizes(x, tensor({2, -6}).to(DType::Int64)), "[with_sizes] size -6 is negative");
  EXPECT_ERROR(with_sizes(x, tensor({2.0, 6.0})), "sizes must be a 0-d or 1-D integer tensor, got float64(2,)");
  EXPECT_FALSE(is_value_size(7));
  EXPECT_TRUE(is_value_size(new_value_symbol()));
  EXPECT_TRUE(is_value_size(dim_mul(new_value_symbol(), 3)));
  EXPECT_FALSE(is_value_size(symbol_named("batch")));
}

// One trace serves every k: the graph is interpreted, binding k when bind_sizes runs.
TEST(ValueSizes, TopkWithTensorKTracesOnce) {
  const Tensor x = tensor({{0.5, -1.0, 3.0, 2.0}, {1.0, 4.0, -2.0, 0.0}});
  auto f = [](const Tensor& a, const Tensor& k) {
    auto [v, i] = topk(a, k, 1);
    return concat({v, i.to(DType::Float32)}, 0);
  };
  auto jf = jit(f);
  const auto before = transforms::jit_run_stats();
  for (int64_t k : {1, 3, 0, 4}) {
    const Tensor got = jf(x, k_of(k)), want = f(x, k_of(k));
    ASSERT_EQ(got.shape(), (Shape{4, k})) << k;
    EXPECT_EQ(got.to_vector<float>(), want.to_vector<float>()) << k;
  }
  EXPECT_EQ(jf.core().traces(), 1);
  EXPECT_EQ(transforms::jit_run_stats().interpreted_runs - before.interpreted_runs, 4);
  EXPECT_NE(transforms::last_interpreted_reason().find("bind_sizes gives sizes that its input values hold"), std::string::npos)
      << transforms::last_interpreted_reason();
  const std::string text = jf.core().last_graph_text();
  EXPECT_NE(text.find("bind_sizes{sizes=[vsize"), std::string::npos) << text;
  // A k the axis cannot give fails when the kernel sees it, naming the op and the sizes.
  EXPECT_ERROR(jf(x, k_of(5)), "[topk] k = 5 is out of range for axis 1 of size 4");
  EXPECT_ERROR(jf(x, k_of(-1)), "[bind_sizes] size 0 (vsize");
}

// The gradient of a jitted topk with a tensor k equals the eager one, at each k, in reverse
// and forward mode (bind_sizes passes the tangent and the cotangent through).
TEST(ValueSizes, GradientsPassThroughBindSizes) {
  const Tensor x = tensor({{0.5, -1.0, 3.0, 2.0}, {1.0, 4.0, -2.0, 0.0}});
  const Tensor t = tensor({{1.0, 2.0, 3.0, 4.0}, {-1.0, 0.5, 2.0, 1.0}});
  auto loss = [](const Tensor& a, const Tensor& k) {
    const Tensor v = topk(a * a, k, 1).first;
    return sum(v * v + v * 3.0);
  };
  auto jg = jit([loss](const Tensor& a, const Tensor& k) { return grad(loss)(a, k); });
  auto jt = jit([loss](const Tensor& a, const Tensor& k, const Tensor& ta) {
    return jvp([&](const Tensor& b) { return loss(b, k); }, a, ta).second;
  });
  for (int64_t k : {2, 4}) {
    const Tensor got = jg(x, k_of(k)), want = grad(loss)(x, k_of(k));
    EXPECT_EQ(got.to_vector<float>(), want.to_vector<float>()) << k;
    EXPECT_GT(sum(abs(got)).item<float>(), 0.0f);
    const Tensor tj = jt(x, k_of(k), t);
    EXPECT_NEAR(tj.item<float>(), sum(want * t).item<float>(), 1e-4) << k;
  }
  EXPECT_EQ(jg.core().traces(), 1);
}

// nonzero under jit: the count is bound by counting when the node runs; one trace serves every
// count, and what follows it (an index_select by the indices) runs at that count.
TEST(ValueSizes, NonzeroUnderJit) {
  auto f = [](const Tensor& a) {
    const Tensor idx = nonzero(a > 0.0);
    return index_select(a.reshape({-1}), 0, idx.reshape({-1}));
  };
  auto jf = jit(f);
  for (const Tensor& a : {tensor({1.0, -2.0, 3.0, 0.0}), tensor({-1.0, -2.0, -3.0, 0.0}), tensor({4.0, 5.0, 6.0, 7.0})}) {
    const Tensor got = jf(a), want = f(a);
    EXPECT_EQ(got.shape(), want.shape());
    EXPECT_EQ(got.to_vector<float>(), want.to_vector<float>());
  }
  EXPECT_EQ(jf.core().traces(), 1);
  auto jn = jit([](const Tensor& a) { return nonzero(a); });
  const Tensor m = tensor({{0.0, 1.0}, {2.0, 0.0}});
  EXPECT_EQ(jn(m).to_vector<int64_t>(), nonzero(m).to_vector<int64_t>());
  EXPECT_EQ(jn(zeros({2, 2})).shape(), (Shape{0, 2}));
}

// A reshape to a shape a tensor holds: one graph for every shape of the same rank; a shape
// that does not fit the input fails when the reshape runs, naming both.
TEST(ValueSizes, ReshapeToAShapeTensor) {
  auto f = [](const Tensor& a, const Tensor& shape) {
    auto [b, sizes] = with_sizes(a, shape);
    return reshape(b, sizes) * 2.0;
  };
  auto jf = jit(f);
  const Tensor x = arange(0, 12, 1, {DType::Float32});
  for (std::vector<int64_t> s : {std::vector<int64_t>{3, 4}, {2, 6}, {12, 1}}) {
    const Tensor shape = from_vector(s, {2}, DType::Int64);
    const Tensor got = jf(x, shape);
    EXPECT_EQ(got.shape(), (Shape{s[0], s[1]}));
    EXPECT_EQ(got.to_vector<float>(), f(x, shape).to_vector<float>());
  }
  EXPECT_EQ(jf.core().traces(), 1);
  EXPECT_ERROR(jf(x, tensor({5, 5}).to(DType::Int64)), "[reshape] cannot reshape (12,) (12 elements) to (5, 5) (25 elements)");
  EXPECT_ERROR(jf(x, tensor({-1, 12}).to(DType::Int64)), "is -1 when the graph runs; a size must be >= 0");
}

// The IR text names value symbols, and a graph parsed back binds them as the traced one does.
TEST(ValueSizes, IrTextRoundTrip) {
  const Tensor x = tensor({{0.5, -1.0, 3.0}, {1.0, 4.0, -2.0}});
  auto f = [](const std::vector<Tensor>& in) {
    auto [v, i] = topk(in[0], in[1], 1);
    return std::vector<Tensor>{v, nonzero(in[0] > 1.0)};
  };
  auto traced = testing::trace_program(f, {x, k_of(2)});
  const std::string text = ir::print_graph(*traced.graph);
  ir::GraphPtr back = ir::parse_graph(text);
  EXPECT_EQ(ir::print_graph(*back), text);
  for (int64_t k : {1, 3}) {
    std::vector<Tensor> in = traced.inputs;
    in[1] = k_of(k);
    auto got = transforms::interpret(*back, in);
    auto want = f({x, k_of(k)});
    EXPECT_EQ(got[0].to_vector<float>(), want[0].to_vector<float>());
    EXPECT_EQ(got[1].to_vector<int64_t>(), want[1].to_vector<int64_t>());
  }
}

// Sizes cross control flow: bound outside and used inside a branch (through a size expression
// that the branch's inputs do not bind by themselves), bound inside a scan body and used after it.
TEST(ValueSizes, CrossControlFlow) {
  const Tensor x = tensor({{0.5, -1.0, 3.0, 2.0}, {1.0, 4.0, -2.0, 0.0}});
  auto inside = [](const Tensor& a, const Tensor& k) {
    const Tensor flat = topk(a, k, 1).first.reshape({-1});  // (2 * k,)
    return cond(sum(a) > 0.0, [](const TensorTree& t) { return TensorTree(t.tensor().reshape({1, -1}) * 2.0); },
                [](const TensorTree& t) { return TensorTree(t.tensor().reshape({1, -1})); }, flat).tensor();
  };
  auto outside = [](const Tensor& a, const Tensor& k) {
    auto [carry, ys] = scan([&k](const TensorTree& c, const TensorTree& row) {
                              const Tensor v = topk(row.tensor(), k, 0).first;
                              return std::make_pair(TensorTree(c.tensor() + sum(v)), TensorTree(v));
                            }, TensorTree(zeros({}, {a.dtype()})), TensorTree(a));
    return concat({ys.tensor().reshape({-1}), carry.tensor().reshape({1})}, 0);
  };
  auto ji = jit(inside);
  auto jo = jit(outside);
  for (int64_t k : {1, 3}) {
    EXPECT_EQ(ji(x, k_of(k)).to_vector<float>(), inside(x, k_of(k)).to_vector<float>()) << k;
    EXPECT_EQ(ji(x, k_of(k)).shape(), (Shape{1, 2 * k}));
    EXPECT_EQ(jo(x, k_of(k)).to_vector<float>(), outside(x, k_of(k)).to_vector<float>()) << k;
  }
  EXPECT_EQ(ji.core().traces(), 1);
  EXPECT_EQ(jo.core().traces(), 1);
  // Branches that each bind their own size: one result type, bound from whichever ran.
  auto branches = [](const Tensor& a, const Tensor& k, const Tensor& p) {
    const Tensor r = cond(p, [&k](const TensorTree& t) { return TensorTree(topk(t.tensor(), k, 1).first); },
                          [&k](const TensorTree& t) { return TensorTree(topk(t.tensor() * -1.0, k, 1).first); }, a).tensor();
    return r.reshape({-1});
  };
  // A branch returning a value sized outside it (v's k) and one sizing its own: the sizes may
  // differ, so the branches' types do.
  auto mixed = [](const Tensor& a, const Tensor& k, const Tensor& p) {
    const Tensor v = topk(a, k, 1).first;
    return cond(p, [&v](const TensorTree&) { return TensorTree(v * 1.0); },
                [&k](const TensorTree& t) { return TensorTree(topk(t.tensor(), k + 1, 1).first); }, a).tensor();
  };
  EXPECT_ERROR(jit(mixed)(x, k_of(2), scalar_tensor(false)), "[cond] the branches return different types");
  auto jb = jit(branches);
  for (bool p : {true, false})
    EXPECT_EQ(jb(x, k_of(3), scalar_tensor(p)).to_vector<float>(), branches(x, k_of(3), scalar_tensor(p)).to_vector<float>()) << p;
  // No trip: a stacked size only the body's values give is unknown, and said so.
  EXPECT_ERROR(jo(zeros({0, 4}), k_of(2)), "[scan] runs no iteration, so the size");
}

// vmap: sizes shared by every lane bind once; sizes or counts that differ per lane are refused.
TEST(ValueSizes, Vmap) {
  const Tensor xs = tensor({{0.5, -1.0, 3.0, 2.0}, {1.0, 4.0, -2.0, 0.0}, {2.0, 2.5, -1.0, 7.0}});
  auto lane = [](const Tensor& a, const Tensor& k) { return topk(a, k, 0).first; };
  const Tensor got = jit([lane](const Tensor& a, const Tensor& k) { return vmap(lane, {0, -1})(a, k); })(xs, k_of(2));
  ASSERT_EQ(got.shape(), (Shape{3, 2}));
  for (int64_t r = 0; r < 3; ++r)
    EXPECT_EQ(select(got, 0, r).to_vector<float>(), topk(select(xs, 0, r), 2).first.to_vector<float>());
  // Eager vmap with a shared k tensor that the lanes trace as an input.
  EXPECT_EQ(vmap(lane, {0, -1})(xs, k_of(3)).shape(), (Shape{3, 3}));
  const Tensor ks = tensor({1, 2, 3}).to(DType::Int64);
  EXPECT_ERROR(vmap(lane, {0, 0})(xs, ks), "the sizes differ per lane");
  EXPECT_ERROR(vmap([](const Tensor& a) { return nonzero(a); })(xs), "may differ per lane");
}

}  // namespace
}  // namespace spore
