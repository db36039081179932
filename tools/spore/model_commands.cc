// SPDX-License-Identifier: Apache-2.0
// spore info / run / convert / compare / bench: model files (MindIR, ONNX) from the command line.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>

#include <spore/io/compare.h>
#include <spore/io/model_file.h>
#include <spore/io/npy.h>
#include <spore/spore.h>

#include "spore/commands.h"
#include "spore/flags.h"

namespace spore::cli {
namespace {

namespace fs = std::filesystem;
using io::ModelFile;

bool wants_help(Flags& f, const char* usage) {
  if (!f.has("help")) return false;
  std::printf("%s\nflags:\n%s", usage, f.help().c_str());
  return true;
}

std::string one_model(const Flags& f, const char* command) {
  SPORE_CHECK(f.positional().size() == 1, "spore ", command, ": give exactly one model file (got ",
              f.positional().size(), " positional arguments); see spore ", command, " --help");
  return f.positional()[0];
}

// `--key HEX` or `--key @FILE`: the AES-GCM key of encrypted MindIR files (spore/io/model_key.h).
constexpr const char* kKeyHelp = "key of an encrypted MindIR file: 32/48/64 hex digits, or @FILE holding them";
std::optional<io::ModelKey> key_of(const Flags& f, const std::string& flag = "key") {
  if (!f.has(flag)) return std::nullopt;
  try {
    return io::ModelKey::from_flag(f.str(flag));
  } catch (const Error& e) {
    throw Error(std::string("--") + flag + ": " + e.what());
  }
}

Mode mode_of(const Flags& f, const std::string& flag) {
  return f.choice(flag, {"graph", "pynative"}) == "graph" ? Mode::Graph : Mode::PyNative;
}

// `--input NAME=FILE` (by name) or `--input FILE` (by position); all of one kind.
std::vector<Tensor> read_inputs(const ModelFile& m, const std::vector<std::string>& specs, const char* command) {
  const auto& want = m.inputs();
  SPORE_CHECK(specs.size() == want.size(), "spore ", command, ": ", m.path(), " takes ", want.size(),
              " input(s), got ", specs.size(), " --input flag(s)", [&] {
                std::string names;
                for (const auto& w : want) names += (names.empty() ? " (" : ", ") + w.name + ": " + w.type_text;
                return want.empty() ? names : names + ")";
              }());
  std::vector<Tensor> inputs(want.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    const std::string& s = specs[i];
    const size_t eq = s.find('=');
    // A path may itself contain '='; it is a name only when it names an input.
    size_t slot = i;
    std::string file = s;
    if (eq != std::string::npos) {
      const std::string name = s.substr(0, eq);
      auto it = std::find_if(want.begin(), want.end(), [&](const io::ValueInfo& v) { return v.name == name; });
      if (it != want.end()) {
        slot = static_cast<size_t>(it - want.begin());
        file = s.substr(eq + 1);
      } else if (!fs::exists(s)) {
        std::string names;
        for (const auto& w : want) names += (names.empty() ? "" : ", ") + w.name;
        throw Error("spore " + std::string(command) + ": " + m.path() + " has no input named '" + name +
                    "'; its inputs are " + names);
      }
    }
    SPORE_CHECK(!inputs[slot].defined(), "spore ", command, ": input '", want[slot].name, "' is given twice");
    inputs[slot] = io::read_tensor_file(file);
  }
  return inputs;
}

// Output names become file names: anything but letters, digits, '.', '-' and '_' is replaced.
std::string file_name_of(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' ? c : '_';
  return out.empty() || out[0] == '.' ? "_" + out : out;
}

struct Latency {
  double min_ms, median_ms, p90_ms, mean_ms;
};
Latency latency_of(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  double sum = 0;
  for (double v : ms) sum += v;
  const size_t n = ms.size();
  return {ms.front(), n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2,
          ms[std::min(n - 1, static_cast<size_t>(0.9 * static_cast<double>(n)))], sum / static_cast<double>(n)};
}

template <class F>
std::vector<double> time_runs(int64_t warmup, int64_t repeat, F&& f) {
  for (int64_t i = 0; i < warmup; ++i) f();
  std::vector<double> ms;
  for (int64_t i = 0; i < repeat; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return ms;
}

std::string with_commas(int64_t v) {
  // Built front to back (GCC 12 warns falsely, -Wrestrict, on std::string::insert here).
  const std::string digits = std::to_string(v);
  std::string s;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) s.push_back(',');
    s.push_back(digits[i]);
  }
  return s;
}

}  // namespace

int info_command(const std::vector<std::string>& args) {
  Flags f("info", {{"ir", false, "print the graph's IR text", ""},
                   {"json", false, "print one JSON object", ""},
                   {"key", true, kKeyHelp, ""},
                   {"help", false, "show this help", ""}});
  f.parse(args);
  if (wants_help(f, "usage: spore info MODEL [--ir] [--json] [--key K]\nMODEL is a MindIR (.mindir) or ONNX (.onnx) file."))
    return 0;
  const ModelFile m = ModelFile::open(one_model(f, "info"), key_of(f));
  if (f.has("ir")) {
    std::fputs(m.ir_text().c_str(), stdout);
    return 0;
  }
  const io::ModelSummary s = m.summary();
  if (f.has("json")) {
    std::ostringstream os;
    using io::json_string;
    os << "{\"format\": " << json_string(m.format()) << ", \"inputs\": [";
    for (size_t i = 0; i < m.inputs().size(); ++i)
      os << (i ? ", " : "") << "{\"name\": " << json_string(m.inputs()[i].name) << ", \"type\": "
         << json_string(m.inputs()[i].type_text) << "}";
    os << "], \"outputs\": [";
    for (size_t i = 0; i < m.outputs().size(); ++i)
      os << (i ? ", " : "") << "{\"name\": " << json_string(m.outputs()[i].name) << ", \"type\": "
         << json_string(m.outputs()[i].type_text) << "}";
    os << "], \"parameters\": " << s.parameters << ", \"parameter_bytes\": " << s.parameter_bytes
       << ", \"flops\": " << (s.flops_unknown.empty() ? std::to_string(static_cast<int64_t>(s.flops)) : std::string("null"))
       << ", \"ops\": {";
    size_t k = 0;
    for (const auto& [op, n] : s.op_histogram) os << (k++ ? ", " : "") << io::json_string(op) << ": " << n;
    os << "}}\n";
    std::fputs(os.str().c_str(), stdout);
    return 0;
  }
  std::printf("model:      %s (%s)\n", m.path().c_str(), m.format().c_str());
  for (const auto& [k, v] : m.metadata())
    if (k != "format") std::printf("  %s: %s\n", k.c_str(), v.c_str());
  std::printf("inputs:\n");
  for (const auto& v : m.inputs()) std::printf("  %-24s %s\n", v.name.c_str(), v.type_text.c_str());
  std::printf("outputs:\n");
  for (const auto& v : m.outputs()) std::printf("  %-24s %s\n", v.name.c_str(), v.type_text.c_str());
  std::printf("parameters: %s (%.2f MB)\n", with_commas(s.parameters).c_str(),
              static_cast<double>(s.parameter_bytes) / 1e6);
  const char* unit = s.flops >= 1e9 ? "G" : s.flops >= 1e6 ? "M" : s.flops >= 1e3 ? "K" : "";
  const double scale = s.flops >= 1e9 ? 1e9 : s.flops >= 1e6 ? 1e6 : s.flops >= 1e3 ? 1e3 : 1;
  if (!s.flops_unknown.empty()) std::printf("FLOPs per inference: unknown (%s)\n", s.flops_unknown.c_str());
  else std::printf("FLOPs per inference: %.4g %s (symbolic dimensions taken as 1)\n", s.flops / scale, unit);
  std::vector<std::pair<std::string, int64_t>> ops(s.op_histogram.begin(), s.op_histogram.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::printf("ops:\n");
  for (const auto& [op, n] : ops) std::printf("  %-24s %lld\n", op.c_str(), static_cast<long long>(n));
  return 0;
}

int run_command(const std::vector<std::string>& args) {
  Flags f("run", {{"input", true, "NAME=FILE or FILE (by position); .npy or ONNX TensorProto .pb; repeat per input", ""},
                  {"output-dir", true, "write each output as DIR/<output name>.npy", ""},
                  {"mode", true, "graph (compiled) or pynative (eager)", "graph"},
                  {"repeat", true, "run N times and print latency statistics as JSON", "0"},
                  {"warmup", true, "untimed runs before --repeat", "3"},
                  {"key", true, kKeyHelp, ""},
                  {"help", false, "show this help", ""}});
  f.parse(args);
  if (wants_help(f, "usage: spore run MODEL --input NAME=FILE ... [--output-dir DIR] [--mode graph|pynative] "
                    "[--repeat N] [--key K]"))
    return 0;
  const ModelFile m = ModelFile::open(one_model(f, "run"), key_of(f));
  const Mode mode = mode_of(f, "mode");
  const std::vector<Tensor> inputs = read_inputs(m, f.all("input"), "run");
  const int64_t repeat = f.integer("repeat", 0, 1000000);
  std::vector<Tensor> outputs = m.run(inputs, mode);
  if (f.has("output-dir")) {
    const fs::path dir = f.str("output-dir");
    std::error_code ec;
    fs::create_directories(dir, ec);
    SPORE_CHECK(!ec && fs::is_directory(dir), "spore run: cannot use --output-dir ", dir.string(), ": ",
                ec ? ec.message() : std::string("it is not a directory"));
    for (size_t i = 0; i < outputs.size(); ++i) {
      const fs::path file = dir / (file_name_of(m.outputs()[i].name) + ".npy");
      io::save_npy(file.string(), outputs[i]);
      std::fprintf(stderr, "wrote %s\n", file.c_str());
    }
  } else if (repeat == 0) {
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::ostringstream os;
      os << outputs[i];
      std::printf("%s = %s\n", m.outputs()[i].name.c_str(), os.str().c_str());
    }
  }
  if (repeat > 0) {
    const Latency l = latency_of(time_runs(f.integer("warmup", 0, 1000000), repeat, [&] { m.run(inputs, mode); }));
    std::printf("{\"model\": %s, \"mode\": \"%s\", \"repeat\": %lld, \"threads\": %d, \"min_ms\": %.4f, "
                "\"median_ms\": %.4f, \"p90_ms\": %.4f, \"mean_ms\": %.4f}\n",
                io::json_string(m.path()).c_str(), mode == Mode::Graph ? "graph" : "pynative", static_cast<long long>(repeat),
                num_threads(), l.min_ms, l.median_ms, l.p90_ms, l.mean_ms);
  }
  return 0;
}

int convert_command(const std::vector<std::string>& args) {
  Flags f("convert", {{"optimize", false, "run the graph passes before saving", ""},
                      {"key", true, "key of IN when it is an encrypted MindIR file (hex, or @FILE)", ""},
                      {"out-key", true, "encrypt OUT (a .mindir file) with this key (hex, or @FILE)", ""},
                      {"help", false, "show this help", ""}});
  f.parse(args);
  if (wants_help(f, "usage: spore convert IN OUT [--optimize] [--key K] [--out-key K]\nIN and OUT are .onnx or "
                    ".mindir files; OUT's extension picks its format. --out-key writes OUT encrypted (AES-GCM)."))
    return 0;
  SPORE_CHECK(f.positional().size() == 2, "spore convert: give IN and OUT (got ", f.positional().size(),
              " positional arguments)");
  ModelFile m = ModelFile::open(f.positional()[0], key_of(f));
  if (f.has("optimize")) m.optimize();
  m.save(f.positional()[1], key_of(f, "out-key"));
  std::fprintf(stderr, "wrote %s\n", f.positional()[1].c_str());
  return 0;
}

int compare_command(const std::vector<std::string>& args) {
  Flags f("compare", {{"input", true, "NAME=FILE or FILE, as for spore run (both models take the same inputs)", ""},
                      {"mode-a", true, "how to run A: pynative or graph", "pynative"},
                      {"mode-b", true, "how to run B: pynative or graph", "pynative"},
                      {"precision-b", true, "emulate B in float32, float16 or bfloat16 (weights and every "
                                            "intermediate rounded)", "float32"},
                      {"threshold", true, "a layer diverges when max|a-b| / max|a| exceeds this", "1e-4"},
                      {"json", false, "print one JSON object", ""},
                      {"key", true, "key of A and B where they are encrypted MindIR files (hex, or @FILE)", ""},
                      {"help", false, "show this help", ""}});
  f.parse(args);
  if (wants_help(f, "usage: spore compare A B --input NAME=FILE ... [--mode-a M] [--mode-b M] [--precision-b P] "
                    "[--threshold T] [--json] [--key K]\nA and B may be the same file (Graph vs PyNative, float32 vs lower "
                    "precision). Exit status 1 when a layer diverges."))
    return 0;
  SPORE_CHECK(f.positional().size() == 2, "spore compare: give two model files A and B (got ", f.positional().size(),
              " positional arguments)");
  // One key for both: it decrypts whichever of A and B is encrypted.
  auto open = [&](const std::string& path) {
    return ModelFile::open(path, io::file_is_encrypted_model(path) ? key_of(f) : std::nullopt);
  };
  const ModelFile a = open(f.positional()[0]);
  const ModelFile b = open(f.positional()[1]);
  const std::vector<Tensor> inputs = read_inputs(a, f.all("input"), "compare");
  const std::string prec = f.choice("precision-b", {"float32", "float16", "bfloat16"});
  const DType storage = prec == "float16" ? DType::Float16 : prec == "bfloat16" ? DType::BFloat16 : DType::Float32;
  const auto la = a.run_layers(inputs, mode_of(f, "mode-a"));
  const auto lb = b.run_layers(inputs, mode_of(f, "mode-b"), storage);
  const io::CompareReport r = io::compare_layers(la, lb, f.number("threshold", 0, 1e30));
  std::fputs((f.has("json") ? io::report_json(r) + "\n" : io::format_report(r)).c_str(), stdout);
  return r.first_diverging >= 0 ? 1 : 0;
}

int bench_command(const std::vector<std::string>& args) {
  Flags f("bench", {{"batch", true, "batch sizes, comma separated (the model's first input dimension must be "
                                   "symbolic to change it)", ""},
                    {"threads", true, "thread counts, comma separated", ""},
                    {"mode", true, "graph or pynative", "graph"},
                    {"repeat", true, "timed runs per setting", "20"},
                    {"warmup", true, "untimed runs per setting", "3"},
                    {"key", true, kKeyHelp, ""},
                    {"help", false, "show this help", ""}});
  f.parse(args);
  if (wants_help(f, "usage: spore bench MODEL [--batch 1,16] [--threads 1,2] [--mode graph|pynative] [--key K]\nPrints "
                    "one JSON line with the load time, then one per setting: latency (min/median/p90 ms) and throughput "
                    "(samples/s)."))
    return 0;
  const auto t0 = std::chrono::steady_clock::now();
  const ModelFile m = ModelFile::open(one_model(f, "bench"), key_of(f));
  std::printf("{\"model\": %s, \"load_ms\": %.3f}\n", io::json_string(m.path()).c_str(),
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  auto list = [&](const std::string& flag, int64_t fallback) {
    std::vector<int64_t> out;
    std::stringstream ss(f.str(flag));
    std::string item;
    while (std::getline(ss, item, ',')) {
      char* end = nullptr;
      const long long v = std::strtoll(item.c_str(), &end, 10);
      SPORE_CHECK(!item.empty() && *end == '\0' && v >= 1 && v <= 1 << 20, "spore bench: --", flag,
                  " expects positive integers separated by commas, got '", f.str(flag), "'");
      out.push_back(v);
    }
    if (out.empty()) out.push_back(fallback);
    return out;
  };
  const int saved_threads = num_threads();
  const Mode mode = mode_of(f, "mode");
  const int64_t repeat = f.integer("repeat", 1, 1000000), warmup = f.integer("warmup", 0, 1000000);
  for (int64_t batch : list("batch", -1)) {
    std::vector<Tensor> inputs;
    for (const auto& v : m.inputs()) {
      Shape shape;
      for (size_t d = 0; d < v.dims.size(); ++d) {
        int64_t size = v.dims[d] >= 0 ? v.dims[d] : 1;
        if (d == 0 && batch > 0) {
          SPORE_CHECK(v.dims[0] < 0 || v.dims[0] == batch, "spore bench: input '", v.name, "' of ", m.path(),
                      " has a fixed batch of ", v.dims[0], " (", v.type_text, "); --batch ", batch,
                      " needs a model exported with a symbolic batch dimension");
          size = batch;
        }
        shape.push_back(size);
      }
      inputs.push_back(is_floating(v.dtype) ? ops::normal(shape, 0.0, 1.0, {v.dtype}) : ops::zeros(shape, {v.dtype}));
    }
    const int64_t samples = inputs.empty() || inputs[0].dim() == 0 ? 1 : inputs[0].size(0);
    for (int64_t threads : list("threads", saved_threads)) {
      set_num_threads(static_cast<int>(threads));
      const Latency l = latency_of(time_runs(warmup, repeat, [&] { m.run(inputs, mode); }));
      std::printf("{\"model\": %s, \"mode\": \"%s\", \"batch\": %lld, \"threads\": %lld, \"min_ms\": %.4f, "
                  "\"median_ms\": %.4f, \"p90_ms\": %.4f, \"samples_per_s\": %.1f}\n",
                  io::json_string(m.path()).c_str(), mode == Mode::Graph ? "graph" : "pynative", static_cast<long long>(samples),
                  static_cast<long long>(threads), l.min_ms, l.median_ms, l.p90_ms,
                  static_cast<double>(samples) * 1000.0 / l.median_ms);
      std::fflush(stdout);
    }
  }
  set_num_threads(saved_threads);
  return 0;
}

}  // namespace spore::cli
