// SPDX-License-Identifier: Apache-2.0
// ONNX export: zoo models and op mixes traced to a LoadedModel, written as ONNX, then (a) read
// back by our importer and run, matching the original outputs, and (b) validated by Debian's
// python3-onnx (checker with full_check, strict shape inference; tests/io/onnx/check_export.py).
// Plus the errors: unsupported primitives listed at once, training graphs refused.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "autodiff/frames.h"
#include "io/onnx/exporter.h"
#include "io/onnx/importer.h"
#include "runtime/dispatch.h"
#include "spore/models/classic.h"
#include "spore/models/mobilenet.h"
#include "spore/models/resnet.h"
#include "spore/nn/transformer.h"
#include "spore/spore.h"
#include "io/onnx_export_util.h"
#include "transforms/interpreter.h"
#include "transforms/trace.h"

namespace spore {
namespace {

using namespace ops;
using onnx_export_test::Fn;
using onnx_export_test::temp_path;
using onnx_export_test::trace;
using onnx_export_test::onnx_check;
using onnx_export_test::Check;
using onnx_export_test::run_model;
using onnx_export_test::round_trip;
using onnx_export_test::export_error;
using onnx_export_test::expect_close;
namespace fs = std::filesystem;

// Non-trivial BatchNorm statistics so eval outputs depend on them.
void randomize_buffers(nn::Cell& cell) {
  for (auto& [name, t] : cell.named_buffers()) {
    if (name.find("running_mean") != std::string::npos) copy_(t, uniform(t.shape(), -0.3, 0.3));
    if (name.find("running_var") != std::string::npos) copy_(t, uniform(t.shape(), 0.5, 1.5));
  }
}

// A zoo image model in eval mode, exported and checked against its own outputs.
Check check_cell(nn::UnaryCell& net, const Shape& input, const std::string& name, double tol) {
  randomize_buffers(net);
  net.eval();
  const Tensor x = uniform(input, -1.0, 1.0);
  const Tensor want = net(x);
  io::LoadedModel m = trace([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{net(in[0])}; }, {x}, &net);
  return round_trip(m, {x}, {want}, tol, name).first;
}

TEST(OnnxExport, MlpNamesAndStructure) {
  manual_seed(1);
  auto net = models::mlp({16, 32, 10});
  const Tensor x = uniform({4, 16});
  const Tensor want = (*net)(x);
  io::LoadedModel m = trace([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{(*net)(in[0])}; }, {x}, net.get());
  m.metadata["producer"] = "spore-test";
  m.metadata["preprocessing"] = "none";
  auto [check, back] = round_trip(m, {x}, {want}, 1e-6, "mlp");
  EXPECT_TRUE(check.has("Gemm")) << check.ops;
  EXPECT_EQ(back.metadata.at("opset"), "17");
  EXPECT_EQ(back.metadata.at("ir_version"), "8");
  EXPECT_EQ(back.metadata.at("producer"), "spore-test");
  // Parameters are initializers under their Cell names.
  if (!check.ops.empty()) {
    for (const auto& [n, t] : net->named_parameters())
      EXPECT_NE(check.inits.find(" " + n + " "), std::string::npos) << n << ": " << check.inits;
  }
  // ONNX node names carry the IR scopes (the importer makes them scopes again).
  bool scoped = false;
  for (const auto& n : back.graph->nodes()) scoped = scoped || (n->op() == "matmul" && n->scope().find('/') != std::string::npos);
  EXPECT_TRUE(scoped) << "Gemm nodes should be named after their Cell scope";
}

TEST(OnnxExport, SymbolicBatchBecomesDimParam) {
  manual_seed(2);
  // Dense layers only: the zoo MLP's Flatten needs a static size.
  auto net = std::make_unique<nn::SequentialCell>(std::make_unique<nn::Dense>(12, 8), std::make_unique<nn::ReLU>(),
                                                  std::make_unique<nn::Dense>(8, 3));
  TensorType t;
  t.dtype = DType::Float32;
  t.shape = {symbol_named("batch"), 12};
  io::LoadedModel m = trace([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{(*net)(in[0])}; }, {t}, net.get());
  const std::string path = temp_path("dynamic.onnx");
  io::export_onnx(m, path);
  EXPECT_TRUE(onnx_check(path).ok);
  io::LoadedModel back = io::import_onnx(path);
  const auto& in_t = std::get<ir::TensorType>(back.graph->params()[0].type);
  EXPECT_EQ(in_t.shape[0].str(), "batch");
  EXPECT_EQ(std::get<ir::TensorType>(back.graph->type_of(back.graph->outputs()[0].value)).shape[0].str(), "batch");
  for (int64_t n : {1, 5}) {
    const Tensor x = uniform({n, 12});
    expect_close(run_model(back, {x})[0], (*net)(x), 1e-6, "batch " + std::to_string(n));
  }
}

TEST(OnnxExport, LeNet5) {
  manual_seed(3);
  auto net = models::lenet5(10, 1);
  const Check c = check_cell(*net, {2, 1, 28, 28}, "lenet5", 1e-5);
  EXPECT_TRUE(c.has("Conv") && c.has("MaxPool")) << c.ops;
}

TEST(OnnxExport, ResNet18SmallInput) {
  manual_seed(4);
  auto net = models::resnet18(10, 3);
  const Check c = check_cell(*net, {1, 3, 32, 32}, "resnet18", 1e-4);
  EXPECT_TRUE(c.has("BatchNormalization") && c.has("GlobalAveragePool")) << c.ops;
}

TEST(OnnxExport, MobileNetV2SmallInput) {
  manual_seed(5);
  auto net = models::mobilenet_v2(10, 0.5, 3);
  const Check c = check_cell(*net, {1, 3, 32, 32}, "mobilenet_v2", 1e-4);
  EXPECT_TRUE(c.has("Conv") && c.has("Clip")) << c.ops;  // ReLU6 is Clip
}

TEST(OnnxExport, TransformerEncoderLayer) {
  manual_seed(6);
  nn::TransformerOptions o;
  o.dim_feedforward = 64;
  o.activation = nn::Activation::GELU;
  o.batch_first = true;
  nn::TransformerEncoderLayer layer(32, 4, o);
  layer.eval();
  const Tensor x = uniform({2, 5, 32}, -1.0, 1.0);
  const Tensor want = layer(x);
  io::LoadedModel m = trace([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{layer(in[0])}; }, {x}, &layer);
  const Check c = round_trip(m, {x}, {want}, 1e-5, "transformer_layer").first;
  EXPECT_TRUE(c.has("Softmax") && c.has("Erf") && c.has("LayerNormalization")) << c.ops;
}

TEST(OnnxExport, ElementwiseReductionAndShapeOps) {
  manual_seed(7);
  const Tensor a = uniform({3, 4, 5}, -2.0, 2.0), b = uniform({4, 5}, 0.5, 2.0);
  Fn fn = [](const std::vector<Tensor>& in) {
    const Tensor &x = in[0], &y = in[1];
    std::vector<Tensor> o;
    o.push_back(gelu(x) + silu(x) * softplus(x, 2.0, 3.0) - gelu(x, true));
    o.push_back(clamp(x, -0.5, 0.7) + where(x > y, x, y) + pow(y, 1.5) + sqrt(y) + erf(x) + log1p(abs(x)) + expm1(x * 0.1));
    o.push_back(floor_divide(x, y) + remainder(x, y) + trunc(x * 3.0) + rsqrt(y) + sigmoid(x) * tanh(x) + elu(x) + leaky_relu(x, 0.2));
    o.push_back(cast(logical_and(x > 0.0, y < 1.0), DType::Float32) + cast(isfinite(x), DType::Float32) + cast(not_equal(x, y), DType::Float32));
    o.push_back(sum(x, {1}) + mean(x, {1}) * amax(x, {1}) - amin(x, {1}) + var(x, {1}) + std(x, {1}, 0));
    o.push_back(cast(argmax(x, 2), DType::Float32) + cast(argmin(x, 2, true), DType::Float32).squeeze(2) + logsumexp(x, {2}));
    o.push_back(softmax(x, 1) + log_softmax(x, 2) + cumsum(x, 2));
    o.push_back(pad(x, {1, 2, 0, 1}, PadMode::Reflect) + 1.0);
    o.push_back(flip(x, {0, 2}) + roll(x, {2}, {2}) + tril(x, 1) + masked_fill(x, x < 0.0, 0.25));
    o.push_back(concat({x.slice(2, 0, 5, 2), x.slice(2, 1, 4).permute({0, 2, 1}).reshape({3, 3, 4, 1}).squeeze(3).permute({0, 2, 1})}, 1));
    auto parts = split(x, {2, 3}, 2);
    o.push_back(parts[1] + broadcast_to(y.slice(1, 0, 1), {3, 4, 1}).expand({3, 4, 3}));
    o.push_back(topk(x, 2, 2, true).first + sort(x, 2, true).first.slice(2, 0, 2));
    o.push_back(gather(x, 2, clamp(cast(floor(abs(x) * 2.0), DType::Int64), 0, 4)));
    o.push_back(cast(sum(cast(x > 0.0, DType::Int32), {2}), DType::Float32) + cast(all(x > -3.0, {2}), DType::Float32));
    return o;
  };
  std::vector<Tensor> want = fn({a, b});
  io::LoadedModel m = trace(fn, {a, b});
  round_trip(m, {a, b}, want, 1e-5, "op_mix");
}

TEST(OnnxExport, ConvPoolNormVariants) {
  manual_seed(8);
  const Tensor x = uniform({2, 4, 9, 9}, -1.0, 1.0);
  const Tensor wt = uniform({4, 3, 3, 3}, -0.3, 0.3), bt = uniform({3}), g = uniform({4}, 0.5, 1.5), bias = uniform({4});
  Fn fn = [&](const std::vector<Tensor>& in) {
    const Tensor& v = in[0];
    std::vector<Tensor> o;
    ConvOptions ct;
    ct.stride = {2};
    ct.padding = {1};
    o.push_back(conv_transpose2d(v, wt, bt, ct, {1}));
    PoolOptions avg;
    avg.kernel = {3};
    avg.stride = {2};
    avg.padding = {1};
    avg.ceil_mode = true;
    avg.count_include_pad = false;
    o.push_back(avg_pool2d(v, avg));
    PoolOptions mx = avg;
    mx.kernel = {2};
    mx.padding = {0};
    o.push_back(max_pool2d(v, mx));
    o.push_back(adaptive_avg_pool2d(v.slice(2, 0, 8).slice(3, 0, 8), {2, 4}));
    o.push_back(group_norm(v, 2, g, bias));
    o.push_back(layer_norm(v, {9, 9}));
    o.push_back(conv2d(v, wt.permute({1, 0, 2, 3}).contiguous(), {}, ConvOptions{.stride = {1}, .padding = {0}, .dilation = {2}, .groups = 1, .same = true}));
    return o;
  };
  std::vector<Tensor> want = fn({x});
  io::LoadedModel m = trace(fn, {x});
  round_trip(m, {x}, want, 1e-5, "conv_pool_norm");
}

TEST(OnnxExport, InterpolateWritesResize) {
  // Our importer does not read Resize yet: the checker validates the file.
  const Tensor x = uniform({1, 2, 4, 6});
  Fn fn = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{interpolate(in[0], {8, 9}, InterpolateMode::Bilinear, false),
                               interpolate(in[0], {8, 12}, InterpolateMode::Nearest)};
  };
  io::LoadedModel m = trace(fn, {x});
  const std::string path = temp_path("resize.onnx");
  io::export_onnx(m, path);
  const Check c = onnx_check(path);
  EXPECT_TRUE(c.ok) << c.out;
  EXPECT_TRUE(c.has("Resize")) << c.ops;
}

TEST(OnnxExport, UnsupportedPrimitivesListedAtOnce) {
  Fn fn = [](const std::vector<Tensor>& in) {
    Tensor a, b;
    {
      NameScope s("head");
      a = erfinv(in[0] * 0.5);
    }
    {
      NameScope s("tail");
      b = atan2(in[0], in[0] + 1.0);
    }
    return std::vector<Tensor>{a + b};
  };
  const std::string path = temp_path("unsupported.onnx");
  io::LoadedModel m = trace(fn, {uniform({3})});
  const std::string msg = export_error(m);
  EXPECT_NE(msg.find("erfinv"), std::string::npos) << msg;
  EXPECT_NE(msg.find("atan2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'head'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'tail'"), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(temp_path("error.onnx")));
}

TEST(OnnxExport, TrainingGraphRefused) {
  manual_seed(9);
  nn::BatchNorm2d bn(3);
  bn.train();
  io::LoadedModel m = trace([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{bn(in[0])}; },
                            {runtime::type_of(uniform({2, 3, 4, 4}))}, &bn, /*allow_state=*/true);
  const std::string msg = export_error(m);
  EXPECT_NE(msg.find("inference graph"), std::string::npos) << msg;
  EXPECT_NE(msg.find("running_mean"), std::string::npos) << msg;
}

TEST(OnnxExport, AtomicWriteKeepsOldFileOnError) {
  const std::string path = temp_path("keep.onnx");
  { std::ofstream(path) << "old"; }
  io::LoadedModel m = trace([](const std::vector<Tensor>& in) { return std::vector<Tensor>{erfinv(in[0])}; }, {uniform({2})});
  EXPECT_THROW(io::export_onnx(m, path), Error);
  std::ifstream f(path);
  std::string s;
  f >> s;
  EXPECT_EQ(s, "old");
}

TEST(OnnxExport, ExportableOpsListed) {
  const auto ops = io::onnx_exportable_ops();
  for (const char* op : {"conv", "matmul", "batch_norm", "layer_norm", "softmax", "reshape", "constant"})
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
}

}  // namespace
}  // namespace spore
