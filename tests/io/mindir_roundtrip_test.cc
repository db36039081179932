// SPDX-License-Identifier: Apache-2.0
// MindIR round trip: every primitive (the gradient-check table plus the programs for the
// primitives it leaves out, as in tests/transforms/ir_roundtrip_test.cc) and nested control flow
// is exported, loaded and run; outputs are bitwise equal to the eager run, in this process and
// in a fresh one that loads the files it left.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "autodiff/grad_cases.h"
#include "core/primitive.h"
#include "io/mindir_file.h"
#include "mindir_test_util.h"
#include "roundtrip_programs.h"
#include "spore/io/mindir.h"

namespace spore {
namespace {

using namespace ops;
using Fn = io::ModelFn;

void collect_ops(const std::string& text, std::set<std::string>& ops) {
  // Op names from the IR text: "= name{" or "= name(".
  for (size_t at = text.find(" = "); at != std::string::npos; at = text.find(" = ", at + 3)) {
    size_t b = at + 3, e = b;
    while (e < text.size() && (std::isalnum(static_cast<unsigned char>(text[e])) || text[e] == '_')) ++e;
    ops.insert(text.substr(b, e - b));
  }
}

// Raw tensors for the fresh-process check (every dtype, bfloat16 included, which .npy lacks):
// "dtype rank dims...\n" then the bytes.
void write_raw(const std::string& path, const Tensor& t) {
  const Tensor c = t.contiguous();
  std::ofstream out(path, std::ios::binary);
  out << dtype_name(c.dtype()) << ' ' << c.dim();
  for (int64_t d = 0; d < c.dim(); ++d) out << ' ' << c.size(d);
  out << '\n';
  out.write(static_cast<const char*>(c.data_ptr()), static_cast<std::streamsize>(c.numel() * c.itemsize()));
}

Tensor read_raw(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string dt;
  int64_t rank = 0;
  in >> dt >> rank;
  Shape shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t n = 0;
    in >> n;
    shape.push_back(n);
  }
  in.get();
  DType dtype = DType::Float32;
  for (int i = 0; i < kNumDTypes; ++i)
    if (dt == dtype_name(static_cast<DType>(i))) dtype = static_cast<DType>(i);
  Tensor t = Tensor::empty(shape, dtype);
  in.read(static_cast<char*>(t.data_ptr()), static_cast<std::streamsize>(t.numel() * t.itemsize()));
  EXPECT_TRUE(in.good() || t.numel() == 0) << path;
  return t;
}

// Where check_program leaves each case (file, inputs, eager outputs) for a second process.
std::string fresh_dir() {
  static const std::string dir = testing::temp_model_path("fresh");
  return dir;
}
int fresh_count = 0;

// Export (random draws fixed by the seed at trace time), load, run in both modes; eager with
// the same seed must give the same bits.
void check_program(const std::string& name, const Fn& f, const std::vector<Tensor>& inputs, std::set<std::string>& seen) {
  SCOPED_TRACE(name);
  const std::string case_dir = fresh_dir() + "/" + std::to_string(fresh_count++);
  std::filesystem::create_directories(case_dir);
  const std::string path = case_dir + "/model.mindir";
  manual_seed(11);
  io::export_mindir(f, inputs, path);
  io::GraphCell cell = io::load_mindir(path);
  collect_ops(cell.graph_text(), seen);
  manual_seed(11);
  const auto want = f(inputs);
  for (size_t i = 0; i < inputs.size(); ++i) write_raw(case_dir + "/in_" + std::to_string(i), inputs[i]);
  for (size_t i = 0; i < want.size(); ++i) write_raw(case_dir + "/out_" + std::to_string(i), want[i]);
  std::ofstream(case_dir + "/name") << name;
  for (Mode mode : {Mode::PyNative, Mode::Graph}) {
    set_context(mode);
    const auto got = cell(inputs);
    set_context(Mode::PyNative);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
      testing::expect_bitwise_equal(got[i], want[i], name + (mode == Mode::Graph ? " (graph)" : " (pynative)") +
                                                         " output " + std::to_string(i) + "\n" + cell.graph_text());
  }
}

TEST(MindirRoundTrip, EveryPrimitive) {
  std::set<std::string> seen;
  testing::for_each_roundtrip_program(
      [&](const std::string& name, const Fn& f, const std::vector<Tensor>& in) { check_program(name, f, in, seen); });
  const std::string list = testing::never_seen(seen);
  EXPECT_TRUE(list.empty()) << "primitives never exported:" << list;

  // Every file again in a fresh process (this binary, running only the child test below), which
  // never traced these programs: its outputs must be the same bits.
  const std::string cmd = "SPORE_MINDIR_FRESH_DIR='" + fresh_dir() + "' '" +
                          std::filesystem::read_symlink("/proc/self/exe").string() +
                          "' --gtest_brief=1 --gtest_filter='MindirFreshProcess.*' > '" + fresh_dir() + "/child.log' 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream log(fresh_dir() + "/child.log");
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_EQ(rc, 0) << "the fresh-process check failed:\n" << text.substr(0, 4000);
}

// The child side of EveryPrimitive's fresh-process check; skipped when run on its own.
TEST(MindirFreshProcess, LoadsAndRunsBitwise) {
  const char* dir = std::getenv("SPORE_MINDIR_FRESH_DIR");
  if (dir == nullptr) GTEST_SKIP() << "run by MindirRoundTrip.EveryPrimitive in a child process";
  int cases = 0;
  for (int k = 0; std::filesystem::exists(std::string(dir) + "/" + std::to_string(k) + "/model.mindir"); ++k, ++cases) {
    const std::string c = std::string(dir) + "/" + std::to_string(k);
    std::ifstream name_in(c + "/name");
    std::string name;
    std::getline(name_in, name);
    SCOPED_TRACE(name);
    std::vector<Tensor> in, want;
    for (int i = 0; std::filesystem::exists(c + "/in_" + std::to_string(i)); ++i) in.push_back(read_raw(c + "/in_" + std::to_string(i)));
    for (int i = 0; std::filesystem::exists(c + "/out_" + std::to_string(i)); ++i) want.push_back(read_raw(c + "/out_" + std::to_string(i)));
    io::GraphCell cell = io::load_mindir(c + "/model.mindir");
    const auto got = cell(in);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) testing::expect_bitwise_equal(got[i], want[i], name + " output " + std::to_string(i));
  }
  EXPECT_GT(cases, 50);
}

// A cond inside a while_loop body and a cond inside a scan body, with a captured tensor used in
// the innermost branch (it becomes a state input of the file).
TEST(MindirRoundTrip, NestedControlFlow) {
  const Tensor w = tensor({0.5, -1.25, 2.0});
  Fn f = [&w](const std::vector<Tensor>& x) {
    auto body = [&w](const TensorTree& t) {
      Tensor v = t.tensor();
      Tensor u = cond(sum(v) > 0.0, [&w](const TensorTree& s) { return TensorTree(s.tensor() * w + 1.0); },
                      [](const TensorTree& s) { return TensorTree(s.tensor() * -3.0); }, TensorTree(v)).tensor();
      return TensorTree(u);
    };
    Tensor loop = while_loop([](const TensorTree& t) -> Tensor { return amax(abs(t.tensor())) < 50.0; }, body, x[0]).tensor();
    auto [carry, ys] = scan([&w](const TensorTree& c, const TensorTree& xi) {
                              Tensor n = c.tensor() + xi.tensor();
                              Tensor m = cond(sum(n) > 1.0, [&w](const TensorTree& s) { return TensorTree(s.tensor() - w); },
                                              [](const TensorTree& s) { return TensorTree(exp(s.tensor())); }, TensorTree(n)).tensor();
                              return std::make_pair(TensorTree(m), TensorTree(m * n));
                            }, TensorTree(zeros({3}, {x[1].dtype()})), TensorTree(x[1]));
    return std::vector<Tensor>{loop, carry.tensor(), ys.tensor()};
  };
  const std::vector<Tensor> in{tensor({1.0, 2.0, -0.5}), tensor({{0.25, 0.5, 0.75}, {-1.0, 2.0, 0.0}, {3.0, -2.0, 1.0}})};
  const std::string path = testing::temp_model_path("nested.mindir");
  io::export_mindir(f, in, path);
  // Loaded in a fresh reader: the graph text says while, scan and if nest.
  io::GraphCell cell = io::load_mindir(path);
  const std::string text = cell.graph_text();
  EXPECT_NE(text.find("while"), std::string::npos) << text;
  EXPECT_NE(text.find("scan"), std::string::npos) << text;
  EXPECT_EQ(io::read_mindir(path).state.size(), 1u);
  const auto want = f(in);
  for (Mode mode : {Mode::PyNative, Mode::Graph}) {
    set_context(mode);
    const auto got = cell(in);
    set_context(Mode::PyNative);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) testing::expect_bitwise_equal(got[i], want[i], "output " + std::to_string(i) + "\n" + text);
  }
}

}  // namespace
}  // namespace spore
