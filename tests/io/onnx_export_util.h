// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared by the ONNX export tests: trace a function to a LoadedModel, export it, validate the
// file with Debian's python3-onnx (tests/io/onnx/check_export.py), import it back and compare.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "autodiff/frames.h"
#include "io/onnx/exporter.h"
#include "io/onnx/importer.h"
#include "runtime/dispatch.h"
#include "spore/spore.h"
#include "transforms/interpreter.h"
#include "transforms/trace.h"

namespace spore::onnx_export_test {

namespace fs = std::filesystem;
using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

inline std::string temp_path(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("spore_onnx_export_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return (dir / name).string();
}

// Traces `fn` on inputs of `types` (captured tensors become state; named after the cell's
// parameters and buffers when given), as export_mindir does.
inline io::LoadedModel trace(const Fn& fn, const std::vector<TensorType>& types, nn::Cell* cell = nullptr,
                      bool allow_state = false) {
  transforms::SymbolicTrace t("main");
  if (allow_state) t.allow_state();
  std::vector<Tensor> outs;
  {
    autodiff::FrameGuard open(&t);
    std::vector<Tensor> sym;
    for (const auto& ty : types) sym.push_back(t.input(ty));
    outs = fn(sym);
  }
  io::LoadedModel m;
  m.graph = t.finish(outs);
  m.num_data = types.size();
  m.state = t.captured();
  std::vector<std::pair<std::string, Tensor>> named;
  if (cell) {
    named = cell->named_parameters();
    for (auto& b : cell->named_buffers()) named.push_back(b);
  }
  for (size_t k = 0; k < m.state.size(); ++k) {
    std::string name = "const_" + std::to_string(k);
    for (const auto& [n, v] : named)
      if (v.storage() == m.state[k].storage()) name = n;  // the tensor or a view of it (Dense's W^T)
    m.state_names.push_back(name);
  }
  for (size_t k = 0; k < types.size(); ++k) m.input_names.push_back(std::string("x") + std::to_string(k));
  for (size_t k = 0; k < outs.size(); ++k) m.output_names.push_back(std::string("y") + std::to_string(k));
  return m;
}
inline io::LoadedModel trace(const Fn& fn, const std::vector<Tensor>& examples, nn::Cell* cell = nullptr) {
  std::vector<TensorType> types;
  for (const auto& x : examples) types.push_back(runtime::type_of(x));
  return trace(fn, types, cell);
}

// Runs python3-onnx's checker on `path`. `ok` when it passes; `ops` is its op histogram
// ("Conv:20 Gemm:1 ..."), empty when python3-onnx is missing (the check is skipped then).
struct Check {
  bool ok = false;
  std::string ops;    // " Conv:20 Gemm:1 ..."
  std::string inits;  // " name name ... " (initializer names)
  std::string out;
  bool has(const std::string& op) const { return ops.empty() || ops.find(" " + op + ":") != std::string::npos; }
};
inline Check onnx_check(const std::string& path) {
  const std::string cmd =
      "/usr/bin/python3 " + std::string(SPORE_TESTS_DIR) + "/io/onnx/check_export.py '" + path + "' 2>&1";
  Check c;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return c;
  std::array<char, 4096> buf{};
  while (fgets(buf.data(), static_cast<int>(buf.size()), p)) c.out += buf.data();
  const int rc = pclose(p);
  if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77) {
    std::printf("[ SKIPPED  ] onnx checker: python3-onnx is not installed\n");
    c.ok = true;
    return c;
  }
  c.ok = rc == 0;
  if (c.ok && c.out.rfind("OK", 0) == 0) {
    const size_t nl = c.out.find('\n');
    c.ops = c.out.substr(2, nl - 2) + " ";
    const size_t at = c.out.find("INITS");
    if (at != std::string::npos) c.inits = c.out.substr(at + 5, c.out.find('\n', at) - at - 5) + " ";
  }
  return c;
}

inline std::vector<Tensor> run_model(const io::LoadedModel& m, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> args = inputs;
  args.insert(args.end(), m.state.begin(), m.state.end());
  return transforms::interpret(*m.graph, args);
}

inline void expect_close(const Tensor& got, const Tensor& want, double tol, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  const auto g = got.to(DType::Float64).to_vector<double>(), w = want.to(DType::Float64).to_vector<double>();
  double worst = 0;
  for (size_t i = 0; i < g.size(); ++i) worst = std::max(worst, std::abs(g[i] - w[i]) / (1 + std::abs(w[i])));
  EXPECT_LE(worst, tol) << what;
}

// Exports `m`, validates the file, imports it back and compares with `want` on `inputs`.
// Returns the checker's result and the imported model.
inline std::pair<Check, io::LoadedModel> round_trip(const io::LoadedModel& m, const std::vector<Tensor>& inputs,
                                             const std::vector<Tensor>& want, double tol, const std::string& name) {
  const std::string path = temp_path(name + ".onnx");
  io::export_onnx(m, path);
  Check check = onnx_check(path);
  EXPECT_TRUE(check.ok) << name << ": " << check.out;
  std::printf("  %s:%s\n", name.c_str(), check.ops.c_str());
  io::LoadedModel back = io::import_onnx(path);
  EXPECT_EQ(back.input_names, m.input_names);
  EXPECT_EQ(back.output_names, m.output_names);
  const auto got = run_model(back, inputs);
  EXPECT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size() && k < want.size(); ++k) expect_close(got[k], want[k], tol, name + " output " + std::to_string(k));
  return {check, back};
}

inline std::string export_error(const io::LoadedModel& m) {
  try {
    io::export_onnx(m, temp_path("error.onnx"));
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace spore::onnx_export_test
