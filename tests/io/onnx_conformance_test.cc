// SPDX-License-Identifier: Apache-2.0
// The ONNX backend node conformance run. Each case directory (model.onnx plus
// test_data_set_*/input_*.pb, output_*.pb from tests/io/onnx/gen_backend_data.sh) is imported,
// run through the IR interpreter and compared with ONNX's tolerances (rtol 1e-3, atol 1e-7, as
// onnx.backend.test.runner). Driven by environment variables, so `make test` decides the data:
//   SPORE_ONNX_DATA     the generated data root (its node/ folder is read); unset: skipped
//   SPORE_ONNX_REPORT   writes one TSV row per case: name, status, message
//   SPORE_ONNX_REQUIRE  a file of case names (tests/io/onnx/supported_cases.txt) that must pass
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "io/onnx/importer.h"
#include "io/onnx/tensor_proto.h"
#include "spore/ops.h"
#include "transforms/interpreter.h"

namespace spore {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  for (int i = 0;; ++i) {
    fs::path p = dir / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    out.push_back(p);
  }
  return out;
}

bool is_float(DType d) { return d == DType::Float32 || d == DType::Float64 || d == DType::Float16 || d == DType::BFloat16; }

// "" when `got` matches `want` as onnx's runner checks (dtype, shape, values within tolerance).
std::string compare(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype())
    return std::string("dtype ") + std::string(dtype_name(got.dtype())) + ", expected " + std::string(dtype_name(want.dtype()));
  if (got.shape() != want.shape()) return "shape " + shape_str(got.shape()) + ", expected " + shape_str(want.shape());
  if (!is_float(want.dtype())) {
    auto g = got.to(DType::Int64).to_vector<int64_t>(), w = want.to(DType::Int64).to_vector<int64_t>();
    for (size_t i = 0; i < g.size(); ++i)
      if (g[i] != w[i]) return "element " + std::to_string(i) + " is " + std::to_string(g[i]) + ", expected " + std::to_string(w[i]);
    return "";
  }
  auto g = got.to(DType::Float64).to_vector<double>(), w = want.to(DType::Float64).to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i]) && std::isnan(g[i])) continue;
    if (std::isinf(w[i]) && g[i] == w[i]) continue;
    if (!(std::abs(g[i] - w[i]) <= 1e-7 + 1e-3 * std::abs(w[i])))
      return "element " + std::to_string(i) + " is " + std::to_string(g[i]) + ", expected " + std::to_string(w[i]);
  }
  return "";
}

struct Result {
  std::string status;  // pass, fail, unsupported, error
  std::string message;
};

// Imports and runs one case. Cases whose shape-like inputs (a Reshape's shape, Slice's starts)
// are graph inputs are imported again per data set with their integer inputs fixed
// (OnnxImportOptions::fixed_inputs), and say so in the message. Integer, bool and 0-d inputs are
// fixed: they are what shapes, axes, counts and flags are made of.
Result run_case(const fs::path& dir) {
  const std::string model = (dir / "model.onnx").string();
  bool fix = false;
  io::LoadedModel m;
  try {
    m = io::import_onnx(model);
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (msg.find("must be known at import time") == std::string::npos)
      return {msg.find("cannot import") != std::string::npos ? "unsupported" : "import-error", msg};
    fix = true;
  }
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return {"error", "no test_data_set_* folder"};
  std::string note;
  for (const auto& set : sets) {
    try {
      std::vector<Tensor> args;
      io::OnnxImportOptions opt;
      for (const auto& p : numbered(set, "input_")) {
        std::string name;
        Tensor t = io::read_tensor_proto(p.string(), &name);
        const bool shape_like = t.dtype() == DType::Int64 || t.dtype() == DType::Int32 || t.dtype() == DType::Bool || t.dim() == 0;
        if (fix && shape_like && !name.empty()) {
          opt.fixed_inputs[name] = t;
          if (set == sets.front()) note += (note.empty() ? "shape inputs fixed at import: " : ", ") + name;
        } else {
          args.push_back(t);
        }
      }
      if (fix) {
        try {
          m = io::import_onnx(model, opt);
        } catch (const Error& e) {
          return {"import-error", e.what()};
        }
      }
      if (args.size() != m.num_data)
        return {"error", std::to_string(args.size()) + " inputs given, the model has " + std::to_string(m.num_data)};
      args.insert(args.end(), m.state.begin(), m.state.end());
      std::vector<Tensor> outs = transforms::interpret(*m.graph, args);
      auto want = numbered(set, "output_");
      if (want.size() > outs.size())
        return {"fail", std::to_string(outs.size()) + " outputs, expected " + std::to_string(want.size())};
      for (size_t k = 0; k < want.size(); ++k) {
        std::string d = compare(outs[k], io::read_tensor_proto(want[k].string()));
        if (!d.empty()) return {"fail", set.filename().string() + " output " + std::to_string(k) + ": " + d};
      }
    } catch (const Error& e) {
      return {"run-error", e.what()};
    }
  }
  return {"pass", note};
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\t', ' ');
  return s.size() > 300 ? s.substr(0, 300) + "..." : s;
}

TEST(OnnxConformance, NodeCases) {
  const char* root = std::getenv("SPORE_ONNX_DATA");
  if (!root) GTEST_SKIP() << "set SPORE_ONNX_DATA to the output of tests/io/onnx/gen_backend_data.sh";
  const fs::path node = fs::path(root) / "node";
  ASSERT_TRUE(fs::is_directory(node)) << node << " does not exist";
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(node))
    if (e.is_directory()) cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  ASSERT_GT(cases.size(), 100u);

  std::set<std::string> required, unfixed;
  if (const char* req = std::getenv("SPORE_ONNX_REQUIRE")) {
    std::ifstream f(req);
    ASSERT_TRUE(f.good()) << "cannot read " << req;
    // "name" must pass as it is; "name fixed" may have its shape-like inputs fixed at import.
    for (std::string line; std::getline(f, line);) {
      if (line.empty() || line[0] == '#') continue;
      const size_t sp = line.find(' ');
      required.insert(line.substr(0, sp));
      if (sp == std::string::npos) unfixed.insert(line);
    }
  }
  std::ofstream report;
  if (const char* rep = std::getenv("SPORE_ONNX_REPORT")) report.open(rep);
  size_t passed = 0;
  std::set<std::string> seen;
  for (const auto& dir : cases) {
    const std::string name = dir.filename().string();
    Result r = run_case(dir);
    seen.insert(name);
    passed += r.status == "pass";
    if (report.is_open()) report << name << '\t' << r.status << '\t' << one_line(r.message) << '\n';
    if (required.count(name)) {
      EXPECT_EQ(r.status, "pass") << name << ": " << r.message;
      if (unfixed.count(name)) {
        EXPECT_EQ(r.message.rfind("shape inputs fixed", 0), std::string::npos)
            << name << " passed only with its inputs fixed at import; its run-time inputs must import as they are";
      }
    }
  }
  for (const auto& name : required) EXPECT_TRUE(seen.count(name)) << "required case " << name << " is missing from " << node;
  std::printf("[onnx conformance] %zu of %zu node cases pass (%.1f%%)\n", passed, cases.size(),
              100.0 * static_cast<double>(passed) / static_cast<double>(cases.size()));
}

}  // namespace
}  // namespace spore
