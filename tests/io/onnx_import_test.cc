// SPDX-License-Identifier: Apache-2.0
// ONNX import on small models written by tests/io/onnx/make_test_models.py, whose expected
// outputs come from numpy / PyTorch; and the importer's errors on broken or unsupported files.
#include <gtest/gtest.h>

#include "error_matchers.h"

#include <cstdlib>
#include <limits>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/onnx/importer.h"
#include "spore/io/graph_cell.h"
#include "spore/mode.h"
#include "io/onnx/tensor_proto.h"
#include "ir/printer.h"
#include "spore/ops.h"
#include "transforms/interpreter.h"

namespace spore {
namespace {

namespace fs = std::filesystem;

class OnnxImport : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = (fs::temp_directory_path() / ("spore_onnx_models_" + std::to_string(::getpid()))).string();
    const std::string cmd = "/usr/bin/python3 " + std::string(SPORE_TESTS_DIR) + "/io/onnx/make_test_models.py '" + dir_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static std::string path(const std::string& f) { return dir_ + "/" + f; }

  // Imports `name`.onnx, runs it on its saved inputs, checks every saved output.
  static void run_and_check(const std::string& name, double tol) {
    io::LoadedModel m = io::import_onnx(path(name + ".onnx"));
    std::vector<Tensor> args;
    for (size_t k = 0; k < m.num_data; ++k) args.push_back(io::read_tensor_proto(path(name + ".in" + std::to_string(k) + ".pb")));
    args.insert(args.end(), m.state.begin(), m.state.end());
    auto outs = transforms::interpret(*m.graph, args);
    ASSERT_EQ(outs.size(), m.output_names.size());
    for (size_t k = 0; k < outs.size(); ++k) {
      Tensor want = io::read_tensor_proto(path(name + ".out" + std::to_string(k) + ".pb"));
      ASSERT_EQ(outs[k].shape(), want.shape()) << name;
      auto g = outs[k].to(DType::Float64).to_vector<double>(), w = want.to(DType::Float64).to_vector<double>();
      for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], tol * (1 + std::abs(w[i]))) << name << " element " << i;
    }
  }
  static std::string import_error(const std::string& file) {
    try {
      io::import_onnx(path(file));
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  }
  static inline std::string dir_;
};

TEST_F(OnnxImport, MlpMatchesTorch) {
  run_and_check("mlp", 1e-5);
  io::LoadedModel m = io::import_onnx(path("mlp.onnx"));
  EXPECT_EQ(m.num_data, 1u);
  EXPECT_EQ(m.input_names, std::vector<std::string>{"x"});
  EXPECT_EQ(m.output_names, std::vector<std::string>{"y"});
  EXPECT_EQ(m.state_names, (std::vector<std::string>{"W", "B"}));
  EXPECT_EQ(m.metadata.at("format"), "onnx");
  EXPECT_EQ(m.metadata.at("opset"), "13");
}

TEST_F(OnnxImport, ConvBatchNormPoolGemmMatchesTorch) { run_and_check("conv_bn", 1e-4); }

TEST_F(OnnxImport, ScalarExponentBecomesALiteral) {
  run_and_check("layer_norm_pow", 1e-5);
  io::LoadedModel m = io::import_onnx(path("layer_norm_pow.onnx"));
  const std::string text = ir::print_graph(*m.graph);
  EXPECT_NE(text.find("pow{}"), std::string::npos) << text;
  // The exponent is a literal in the graph (f=2), not a weight the passes cannot read.
  EXPECT_NE(text.find("f=2,"), std::string::npos) << text;
  EXPECT_EQ(m.state_names, std::vector<std::string>{"eps"});
}

TEST_F(OnnxImport, ShapeArithmeticFoldsAtImport) {
  run_and_check("shape_fold", 0);
  // Only the data input and no folded int64 shape tensors reach the graph.
  io::LoadedModel m = io::import_onnx(path("shape_fold.onnx"));
  EXPECT_TRUE(m.state.empty());
}

TEST_F(OnnxImport, SymbolicBatchDimension) {
  io::LoadedModel m = io::import_onnx(path("dynamic.onnx"));
  ASSERT_EQ(m.graph->params().size(), 2u);
  const auto& t = std::get<ir::TensorType>(m.graph->params()[0].type);
  ASSERT_EQ(t.shape.size(), 2u);
  EXPECT_EQ(t.shape[0].kind(), ir::Dim::Kind::Symbol);
  EXPECT_EQ(t.shape[0].name(), "batch");
  EXPECT_EQ(t.shape[1], ir::Dim(4));
  run_and_check("dynamic", 1e-6);
}

TEST_F(OnnxImport, UnsupportedOperatorsListedTogether) {
  const std::string e = import_error("unsupported.onnx");
  EXPECT_NE(e.find("FancyOp (nodes 'f1', 'f2')"), std::string::npos) << e;
  EXPECT_NE(e.find("OtherOp (node 'o1')"), std::string::npos) << e;
  EXPECT_EQ(e.find("Relu"), std::string::npos) << e;
}

TEST_F(OnnxImport, CorruptAndTruncatedFilesFailClearly) {
  std::ifstream f(path("conv_bn.onnx"), std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string bytes = ss.str();
  // Every truncation either fails with a clear error or (cut between fields) imports.
  for (size_t n : {size_t{0}, size_t{1}, size_t{7}, bytes.size() / 3, bytes.size() / 2, bytes.size() - 1}) {
    try {
      io::import_onnx_bytes(std::string_view(bytes).substr(0, n), "truncated");
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("[onnx]"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(io::import_onnx_bytes(std::string(64, '\xff'), "garbage"), Error);
  std::string flipped = bytes;
  for (size_t i = 0; i < flipped.size(); i += 13) flipped[i] = static_cast<char>(flipped[i] ^ 0x5a);
  try {
    io::import_onnx_bytes(flipped, "flipped");
  } catch (const Error&) {
  }
  EXPECT_NE(import_error("no_such_file.onnx").find("cannot open"), std::string::npos);
}

TEST_F(OnnxImport, BadInitializerSizes) {
  std::string e = import_error("bad_init.onnx");
  EXPECT_NE(e.find("initializer 'W' has 20 bytes of raw data"), std::string::npos) << e;
  EXPECT_NE(e.find("need 24 bytes"), std::string::npos) << e;
  e = import_error("huge_init.onnx");
  EXPECT_NE(e.find("more than"), std::string::npos) << e;
  e = import_error("external.onnx");
  EXPECT_NE(e.find("external data is not supported"), std::string::npos) << e;
}

TEST_F(OnnxImport, UndefinedInputNamesTheNode) {
  const std::string e = import_error("undefined.onnx");
  EXPECT_NE(e.find("node 'add_missing' (Add): input 'nowhere' is not produced"), std::string::npos) << e;
}

// Sizes that run-time inputs give become value symbols: one imported graph runs at every batch,
// shape and k; a shape that does not fit fails when the reshape runs, naming it.
TEST_F(OnnxImport, RunTimeSizes) {
  run_and_check("value_dependent", 0);
  io::LoadedModel m = io::import_onnx(path("value_dependent.onnx"));
  const Tensor x = ops::arange(0, 12, 1, {DType::Float32}).reshape({4, 3}) - 5.0;
  const Tensor x46 = ops::concat({x, x * -1.0}, 1);  // batch 4, with zeros for NonZero to skip
  const Tensor shape = ops::from_vector(std::vector<int64_t>{0, 2, 3}, {3}, DType::Int64);
  const Tensor k = ops::from_vector(std::vector<int64_t>{2}, {1}, DType::Int64);
  auto run = [&m](std::vector<Tensor> args) {
    args.insert(args.end(), m.state.begin(), m.state.end());
    return transforms::interpret(*m.graph, args);
  };
  auto outs = run({x46, shape, k});
  ASSERT_EQ(outs.size(), 4u);
  EXPECT_EQ(outs[0].shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(outs[0].to_vector<float>(), x46.to_vector<float>());
  auto [v, i] = ops::topk(x46, 2, 1);
  EXPECT_EQ(outs[1].to_vector<float>(), v.to_vector<float>());
  EXPECT_EQ(outs[2].to_vector<int64_t>(), i.to_vector<int64_t>());
  EXPECT_EQ(outs[3].to_vector<int64_t>(), ops::transpose(ops::nonzero(x46), 0, 1).to_vector<int64_t>());
  const Tensor bad = ops::from_vector(std::vector<int64_t>{0, 4, 2}, {3}, DType::Int64);
  EXPECT_ERROR(run({x46, bad, k}),
               "[reshape] cannot reshape (4, 6) (24 elements) to (4, 4, 2) (32 elements)");
  const Tensor big_k = ops::from_vector(std::vector<int64_t>{7}, {1}, DType::Int64);
  EXPECT_ERROR(run({x46, shape, big_k}), "[topk] k = 7 is out of range for axis 1 of size 6");
}

// Shapes meeting run-time values, in PyNative (the interpreter) and in Graph mode (passes,
// then a plan or the interpreter): a batch's Shape computed with as numbers (a Min, Slice's end,
// Range's limit, a Concat with a run-time size), and Shapes of values whose sizes the data give,
// which must keep the node that binds them (TopK, NonZero).
TEST_F(OnnxImport, ShapesOfTracedValuesMeetRunTimeValues) {
  for (const char* name : {"shape_values_min", "shape_values_slice_end", "shape_values_range", "shape_values_concat",
                           "shape_values_of_value_sizes", "shape_values_output", "shape_values_slice_axis"}) {
    run_and_check(name, 1e-6);
    io::LoadedModel m = io::import_onnx(path(std::string(name) + ".onnx"));
    std::vector<Tensor> args;
    for (size_t k = 0; k < m.num_data; ++k) args.push_back(io::read_tensor_proto(path(std::string(name) + ".in" + std::to_string(k) + ".pb")));
    io::GraphCell cell(m);
    set_context(Mode::Graph);
    std::vector<Tensor> outs;
    try {
      outs = cell(args);
    } catch (...) {
      set_context(Mode::PyNative);
      throw;
    }
    set_context(Mode::PyNative);
    ASSERT_EQ(outs.size(), m.output_names.size()) << name;
    for (size_t k = 0; k < outs.size(); ++k) {
      const Tensor want = io::read_tensor_proto(path(std::string(name) + ".out" + std::to_string(k) + ".pb"));
      ASSERT_EQ(outs[k].shape(), want.shape()) << name << " output " << k << " (graph mode)";
      EXPECT_EQ(outs[k].to(DType::Float64).to_vector<double>(), want.to(DType::Float64).to_vector<double>()) << name << " output " << k;
    }
  }
}

// Run-time inputs that break the operator's rules are refused when the graph runs, naming the
// node and the rule (never a silent empty result or a short split).
TEST_F(OnnxImport, RunTimeInputsAreChecked) {
  for (const char* name : {"run_time_checks_split", "run_time_checks_range", "run_time_checks_slice"}) run_and_check(name, 1e-6);
  auto run = [](const char* name, std::vector<Tensor> args) {
    io::LoadedModel m = io::import_onnx(path(std::string(name) + ".onnx"));
    args.insert(args.end(), m.state.begin(), m.state.end());
    return transforms::interpret(*m.graph, args);
  };
  auto i64s = [](std::vector<int64_t> v) { return ops::from_vector(v, {static_cast<Dim>(v.size())}, DType::Int64); };
  auto f32 = [](float v) { return ops::scalar_tensor(v, DType::Float32); };
  const Tensor x6 = ops::zeros({6});
  EXPECT_ERROR(run("run_time_checks_split", {x6, i64s({2, 2})}),
               "[onnx] node 'dyn_split' (Split): the split sizes must be >= 0 and add up to the size of axis 0 (checked when the graph runs)");
  EXPECT_ERROR(run("run_time_checks_split", {x6, i64s({7, -1})}), "node 'dyn_split' (Split): the split sizes must be >= 0");
  EXPECT_ERROR(run("run_time_checks_range", {f32(0), f32(5), f32(0)}), "node 'dyn_range' (Range): delta must not be 0");
  EXPECT_ERROR(run("run_time_checks_range", {f32(0), f32(std::numeric_limits<float>::infinity()), f32(1)}), "start, limit and delta must be finite");
  EXPECT_ERROR(run("run_time_checks_range", {f32(0), f32(1e30f), f32(1)}), "the count at most 2^40");
  const Tensor x35 = ops::zeros({3, 5});
  EXPECT_ERROR(run("run_time_checks_slice", {x35, i64s({0}), i64s({5}), i64s({1}), i64s({0})}),
               "node 'dyn_slice' (Slice): a step is 0; steps must not be 0");
  EXPECT_ERROR(run("run_time_checks_slice", {x35, i64s({0}), i64s({5}), i64s({2}), i64s({1})}),
               "node 'dyn_slice' (Slice): an axis is outside [-2, 2) for rank 2");
  // Good values at other sizes: a split of 6 as 5 + 1, a longer range, a forward slice.
  auto parts = run("run_time_checks_split", {ops::arange(0, 6, 1, {DType::Float32}), i64s({5, 1})});
  EXPECT_EQ(parts[0].to_vector<float>(), std::vector<float>({0, 1, 2, 3, 4}));
  EXPECT_EQ(parts[1].to_vector<float>(), std::vector<float>({5}));
  EXPECT_EQ(run("run_time_checks_range", {f32(0), f32(2), f32(0.5)})[0].to_vector<float>(), std::vector<float>({0, 0.5, 1, 1.5}));
  EXPECT_EQ(run("run_time_checks_slice", {x35, i64s({1}), i64s({4}), i64s({1}), i64s({2})})[0].shape(), (Shape{3, 2}));
}

TEST_F(OnnxImport, RankSettingRunTimeInputIsAClearError) {
  const std::string e = import_error("run_time_axes.onnx");
  EXPECT_NE(e.find("node 'dyn_unsqueeze' (Unsqueeze): input 1 ('axes') must be known at import time"), std::string::npos) << e;
}

TEST_F(OnnxImport, TensorProtoReader) {
  Tensor t = io::read_tensor_proto(path("mlp.in0.pb"));
  EXPECT_EQ(t.dtype(), DType::Float32);
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_THROW(io::parse_tensor_proto(std::string(5, '\xff'), "junk"), Error);
  EXPECT_THROW(io::read_tensor_proto(path("missing.pb")), Error);
}

}  // namespace
}  // namespace spore
