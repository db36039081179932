// SPDX-License-Identifier: Apache-2.0
// ONNX export of control flow: cond -> If, switch_case -> nested Ifs, while_loop -> Loop, scan -> Scan (and the recurrent
// layers built on scan), nested. Each model is exported, validated by python3-onnx's checker,
// imported back and run on inputs that take different paths / trip counts than the example the
// trace saw, matching the eager results.
#include <gtest/gtest.h>

#include "io/onnx_export_util.h"
#include "spore/control_flow.h"
#include "spore/nn/rnn.h"

namespace spore {
namespace {

using namespace ops;
using onnx_export_test::export_error;
using onnx_export_test::Fn;
using onnx_export_test::round_trip;
using onnx_export_test::trace;

// The branch taken depends on the data: y = sum(x) > 0 ? x * w + 1 : exp(x) - w (w is state,
// captured by both branches from the outer scope).
TEST(OnnxExportControlFlow, CondBecomesIfAndTakesEitherBranch) {
  manual_seed(1);
  const Tensor w = uniform({3}, 0.5, 1.5);
  auto f = [&](const Tensor& x) {
    return cond(
               greater(sum(x), scalar_tensor(0.0, DType::Float32)),
               [&](const TensorTree& o) { return TensorTree(o.tensor() * w + 1.0); },
               [&](const TensorTree& o) { return TensorTree(exp(o.tensor()) - w); }, TensorTree(x))
        .tensor();
  };
  const io::LoadedModel m = trace([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{f(in[0])}; },
                                  {uniform({2, 3})});
  const Tensor pos = uniform({2, 3}, 0.1, 1.0), neg = uniform({2, 3}, -1.0, -0.1);
  auto [check, back] = round_trip(m, {pos}, {f(pos)}, 1e-6, "cond_pos");
  EXPECT_TRUE(check.has("If")) << check.ops;
  round_trip(m, {neg}, {f(neg)}, 1e-6, "cond_neg");
}

// switch_case over three branches: indices below and above the range clamp to the ends.
TEST(OnnxExportControlFlow, SwitchBecomesNestedIfsThatClampTheIndex) {
  auto f = [](const Tensor& i, const Tensor& x) {
    return switch_case(i,
                       {[](const TensorTree& o) { return TensorTree(o.tensor() * 2.0); },
                        [](const TensorTree& o) { return TensorTree(o.tensor() - 1.0); },
                        [](const TensorTree& o) { return TensorTree(exp(o.tensor())); }},
                       TensorTree(x))
        .tensor();
  };
  const io::LoadedModel m =
      trace([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{f(in[0], in[1])}; },
            {scalar_tensor(int64_t{0}, DType::Int64), ones({3})});
  const Tensor x = uniform({3});
  for (int64_t i : {-2, 0, 1, 2, 7}) {
    const Tensor idx = scalar_tensor(i, DType::Int64);
    auto [check, back] = round_trip(m, {idx, x}, {f(idx, x)}, 1e-6, "switch_" + std::to_string(i + 2));
    EXPECT_TRUE(check.has("If")) << check.ops;
  }
}

// A data-dependent trip count: x = x * 1.5 + 0.25 while sum(x) < 50, with a step counter.
TEST(OnnxExportControlFlow, WhileLoopBecomesLoopWithItsTripCountFromTheData) {
  auto f = [](const Tensor& x) {
    const TensorTree r = while_loop(
        [](const TensorTree& c) { return less(sum(c[0].tensor()), scalar_tensor(50.0, DType::Float32)); },
        [](const TensorTree& c) {
          return TensorTree{TensorTree(c[0].tensor() * 1.5 + 0.25), TensorTree(c[1].tensor() + int64_t{1})};
        },
        TensorTree{TensorTree(x), TensorTree(scalar_tensor(int64_t{0}, DType::Int64))});
    return std::vector<Tensor>{r[0].tensor(), r[1].tensor()};
  };
  const io::LoadedModel m = trace([&](const std::vector<Tensor>& in) { return f(in[0]); }, {ones({4})});
  const Tensor small = full({4}, 0.1), big = full({4}, 10.0), done = full({4}, 20.0);
  EXPECT_GT(f(small)[1].item<int64_t>(), 3);
  EXPECT_EQ(f(done)[1].item<int64_t>(), 0);  // the first test fails: no trip at all
  auto [check, back] = round_trip(m, {small}, f(small), 1e-6, "while_small");
  round_trip(m, {big}, f(big), 1e-6, "while_big");
  round_trip(m, {done}, f(done), 1e-6, "while_none");
}

// h = tanh(h * w + x_t), y_t = 2 h, forward and reversed; the reversed ys stay indexed by position.
TEST(OnnxExportControlFlow, ScanBecomesScanInBothDirections) {
  manual_seed(2);
  const Tensor w = uniform({3}, -1.0, 1.0);
  for (bool reverse : {false, true}) {
    auto f = [&](const Tensor& h0, const Tensor& xs) {
      auto [h, ys] = scan(
          [&](const TensorTree& h, const TensorTree& x) {
            const Tensor hn = tanh(h.tensor() * w + x.tensor());
            return std::make_pair(TensorTree(hn), TensorTree(hn * 2.0));
          },
          TensorTree(h0), TensorTree(xs), reverse);
      return std::vector<Tensor>{h.tensor(), ys.tensor()};
    };
    const io::LoadedModel m = trace([&](const std::vector<Tensor>& in) { return f(in[0], in[1]); },
                                    {uniform({3}), uniform({5, 3})});
    const Tensor h0 = uniform({3}), xs = uniform({5, 3}, -2.0, 2.0);
    auto [check, back] = round_trip(m, {h0, xs}, f(h0, xs), 1e-6, reverse ? "scan_reverse" : "scan");
    EXPECT_TRUE(check.has("Scan")) << check.ops;
  }
}

// The recurrent layers are scans: a two-layer bidirectional LSTM and a GRU export whole.
TEST(OnnxExportControlFlow, RecurrentLayersExport) {
  manual_seed(3);
  nn::LSTM lstm(3, 4, {.num_layers = 2, .batch_first = true, .bidirectional = true});
  nn::GRU gru(3, 4);
  const Tensor x = uniform({2, 5, 3}), xt = uniform({5, 2, 3});
  auto lf = [&](const Tensor& v) {
    auto r = lstm(v);
    return std::vector<Tensor>{r.output, r.h_n, r.c_n};
  };
  auto gf = [&](const Tensor& v) {
    auto r = gru(v);
    return std::vector<Tensor>{r.output, r.h_n};
  };
  const io::LoadedModel ml = trace([&](const std::vector<Tensor>& in) { return lf(in[0]); }, {x}, &lstm);
  auto [check, back] = round_trip(ml, {x}, lf(x), 1e-5, "lstm");
  EXPECT_TRUE(check.has("Scan")) << check.ops;
  const io::LoadedModel mg = trace([&](const std::vector<Tensor>& in) { return gf(in[0]); }, {xt}, &gru);
  round_trip(mg, {xt}, gf(xt), 1e-5, "gru");
}

// A cond inside a scan body: clip each step's state from above only when it grows past 1.
TEST(OnnxExportControlFlow, NestedControlFlowExports) {
  auto f = [](const Tensor& xs) {
    auto [h, ys] = scan(
        [](const TensorTree& h, const TensorTree& x) {
          const Tensor s = h.tensor() + x.tensor();
          const Tensor hn = cond(
                                greater(amax(s), scalar_tensor(1.0, DType::Float32)),
                                [](const TensorTree& o) { return TensorTree(o.tensor() * 0.5); },
                                [](const TensorTree& o) { return TensorTree(o.tensor() + 0.0); }, TensorTree(s))
                                .tensor();
          return std::make_pair(TensorTree(hn), TensorTree(hn));
        },
        TensorTree(zeros({2})), TensorTree(xs));
    return std::vector<Tensor>{h.tensor(), ys.tensor()};
  };
  const io::LoadedModel m = trace([&](const std::vector<Tensor>& in) { return f(in[0]); }, {ones({6, 2})});
  const Tensor xs = uniform({6, 2}, 0.0, 0.8);
  auto [check, back] = round_trip(m, {xs}, f(xs), 1e-6, "nested");
  EXPECT_TRUE(check.has("Scan")) << check.ops;
}

// A while inside an If branch (control flow nested three deep with captures: the Loop's body
// holds an If): exported, valid, imported back and run, on both branches and trip counts 0, 1
// and several. (The importer used to fail here: each trace of the branch made its constants
// anew, so the branch's traces captured different operands.)
TEST(OnnxExportControlFlow, LoopInsideABranchRoundTrips) {
  auto f = [&](const Tensor& x) {
    return cond(
               greater(amax(x), scalar_tensor(0.0, DType::Float32)),
               [&](const TensorTree& o) {
                 return while_loop([&](const TensorTree& c) { return less(sum(c.tensor()), scalar_tensor(40.0, DType::Float32)); },
                                   [](const TensorTree& c) { return TensorTree(c.tensor() * 3.0); }, o);
               },
               [](const TensorTree& o) { return TensorTree(-o.tensor()); }, TensorTree(x))
        .tensor();
  };
  const io::LoadedModel m = trace([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{f(in[0])}; }, {ones({3})});
  auto [check, back] = round_trip(m, {ones({3})}, {f(ones({3}))}, 1e-6, "loop_in_branch");
  EXPECT_TRUE(check.has("If")) << check.ops;
  for (const Tensor& x : {tensor({20.f, 30.f, 1.f}), tensor({14.f, 0.5f, -1.f}), tensor({-1.f, -2.f, -3.f}),
                          tensor({0.01f, 0.02f, 0.f})}) {
    const auto got = onnx_export_test::run_model(back, {x});
    ASSERT_EQ(got.size(), 1u);
    onnx_export_test::expect_close(got[0], f(x), 1e-6, "x = " + x.str());
  }
}

// A loop built for reverse mode stacks residuals for its backward: a training graph, refused
// with what to do instead; an unsupported op inside a branch is named with the others.
TEST(OnnxExportControlFlow, TrainingLoopsAndUnsupportedOpsInsideAreRefused) {
  Fn grad_of_loop = [](const std::vector<Tensor>& in) {
    auto g = grad([](const Tensor& x) {
      const TensorTree r = while_loop([](const TensorTree& c) { return less(sum(c.tensor()), scalar_tensor(9.0, DType::Float32)); },
                                      [](const TensorTree& c) { return TensorTree(c.tensor() * 1.5); }, TensorTree(x));
      return sum(r.tensor());
    });
    return std::vector<Tensor>{g(in[0])};
  };
  const std::string msg = export_error(trace(grad_of_loop, {ones({2})}));
  EXPECT_NE(msg.find("reverse mode"), std::string::npos) << msg;
  Fn branch_with_erfinv = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{cond(
                                   greater(sum(in[0]), scalar_tensor(0.0, DType::Float32)),
                                   [](const TensorTree& o) { return TensorTree(erfinv(o.tensor() * 0.5)); },
                                   [](const TensorTree& o) { return TensorTree(o.tensor()); }, TensorTree(in[0]))
                                   .tensor()};
  };
  const std::string msg2 = export_error(trace(branch_with_erfinv, {ones({2})}));
  EXPECT_NE(msg2.find("erfinv (at 'node 3 (if, sub-graph 0) > node 2')"), std::string::npos) << msg2;
}

}  // namespace
}  // namespace spore
