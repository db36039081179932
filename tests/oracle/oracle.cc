// SPDX-License-Identifier: Apache-2.0
#include "oracle.h"

#include "core/primitive.h"
#include "runtime/trace_hooks.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <sstream>

namespace spore::oracle {
namespace {

std::map<std::string, std::function<void(Writer&)>>& families() {
  static std::map<std::string, std::function<void(Writer&)>> f;
  return f;
}

std::string npy_descr(DType t) {
  switch (t) {
    case DType::Bool: return "|b1";
    case DType::UInt8: return "|u1";
    case DType::Int8: return "|i1";
    case DType::Int16: return "<i2";
    case DType::Int32: return "<i4";
    case DType::Int64: return "<i8";
    case DType::Float16: return "<f2";
    case DType::BFloat16: return "<u2";  // numpy has no bfloat16: raw bits, dtype in the manifest
    case DType::Float32: return "<f4";
    case DType::Float64: return "<f8";
  }
  return "";
}

void json_value(std::ostream& os, const AttrValue& v) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) os << (x ? "true" : "false");
        else if constexpr (std::is_same_v<T, int64_t>) os << x;
        else if constexpr (std::is_same_v<T, double>) {
          if (std::isinf(x)) os << (x > 0 ? "Infinity" : "-Infinity");
          else if (std::isnan(x)) os << "NaN";
          else {
            os.precision(17);
            os << x;
          }
        } else if constexpr (std::is_same_v<T, std::string>) os << '"' << x << '"';
        else {
          os << '[';
          for (size_t i = 0; i < x.size(); ++i) os << (i ? "," : "") << x[i];
          os << ']';
        }
      },
      v);
}

}  // namespace

bool register_family(const std::string& name, std::function<void(Writer&)> fn) {
  families()[name] = std::move(fn);
  return true;
}

Writer::Writer(std::string dir) : dir_(std::move(dir)) {
  manifest_ = std::fopen((dir_ + "/manifest.jsonl").c_str(), "w");
  SPORE_CHECK(manifest_ != nullptr, "[oracle] cannot write ", dir_, "/manifest.jsonl");
}
Writer::~Writer() {
  if (manifest_) std::fclose(manifest_);
}

std::string Writer::write_tensor(const Tensor& t) {
  std::string name = detail::cat("t", files_++, ".npy");  // (operator+ here trips GCC 12's false -Wrestrict)
  FILE* f = std::fopen((dir_ + "/" + name).c_str(), "wb");
  SPORE_CHECK(f != nullptr, "[oracle] cannot write ", name);
  std::ostringstream hdr;
  hdr << "{'descr': '" << npy_descr(t.dtype()) << "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < t.shape().size(); ++i) hdr << t.shape()[i] << (t.shape().size() == 1 || i + 1 < t.shape().size() ? ", " : "");
  hdr << "), }";
  std::string h = hdr.str();
  size_t total = 10 + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h += '\n';
  const char magic[] = "\x93NUMPY\x01\x00";
  std::fwrite(magic, 1, 8, f);
  uint16_t len = static_cast<uint16_t>(h.size());
  std::fwrite(&len, 2, 1, f);
  std::fwrite(h.data(), 1, h.size(), f);
  Tensor c = t.contiguous();
  if (c.numel() > 0) std::fwrite(c.data_ptr(), c.itemsize(), static_cast<size_t>(c.numel()), f);
  std::fclose(f);
  return name;
}

void Writer::add(const std::string& op, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                 const Attrs& attrs, CaseOptions opt) {
  std::ostringstream os;
  os << "{\"id\":" << count_ << ",\"op\":\"" << op << "\",\"inputs\":[";
  for (size_t i = 0; i < inputs.size(); ++i) {
    os << (i ? "," : "");
    if (!inputs[i].defined()) {
      os << "null";
      continue;
    }
    os << "{\"file\":\"" << write_tensor(inputs[i]) << "\",\"dtype\":\"" << dtype_name(inputs[i].dtype())
       << "\",\"contiguous\":" << (inputs[i].is_contiguous() ? "true" : "false") << "}";
  }
  os << "],\"outputs\":[";
  for (size_t i = 0; i < outputs.size(); ++i)
    os << (i ? "," : "") << "{\"file\":\"" << write_tensor(outputs[i]) << "\",\"dtype\":\""
       << dtype_name(outputs[i].dtype()) << "\"}";
  os << "],\"attrs\":{";
  for (size_t i = 0; i < attrs.size(); ++i) {
    os << (i ? "," : "") << '"' << attrs[i].first << "\":";
    json_value(os, attrs[i].second);
  }
  os << "},\"rtol\":" << opt.rtol << ",\"atol\":" << opt.atol << ",\"shape_only\":" << (opt.shape_only ? "true" : "false")
     << "}\n";
  std::fputs(os.str().c_str(), manifest_);
  ++count_;
}

}  // namespace spore::oracle

namespace {
// Counts the primitives the cases exercise, through dispatch's tape hook: the table is checked
// against the registry, so a primitive without oracle cases fails the run.
std::vector<int64_t> g_prim_calls;
void count_call(const spore::Primitive& p, const void*, std::span<const spore::Tensor>, std::span<const spore::Tensor>) {
  if (g_prim_calls.size() <= p.id) g_prim_calls.resize(p.id + 1, 0);
  ++g_prim_calls[p.id];
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: spore_oracle_cases OUT_DIR [FAMILY...]\n");
    return 2;
  }
  spore::oracle::Writer w(argv[1]);
  spore::runtime::TraceHooks hooks;
  hooks.record = &count_call;
  spore::runtime::set_trace_hooks(hooks);
  spore::runtime::tls_open_traces = 1;
  for (auto& [name, fn] : spore::oracle::families()) {
    bool want = argc == 2;
    for (int i = 2; i < argc; ++i) want = want || name == argv[i];
    if (want) fn(w);
  }
  spore::runtime::tls_open_traces = 0;
  std::printf("oracle driver: %d cases written to %s\n", w.cases(), argv[1]);
  if (argc == 2) {  // the full run must exercise every registered primitive
    int missing = 0;
    for (const spore::Primitive* p : spore::all_primitives()) {
      if (p->id < g_prim_calls.size() && g_prim_calls[p->id] > 0) continue;
      // Control-flow primitives have no kernels (their bodies are other primitives) and no
      // PyTorch counterpart; tests/transforms checks them against eager C++ control flow.
      if (p->eager != nullptr) continue;
      // bind_sizes has no kernel and appears only in traced graphs (eagerly, sizes are values);
      // tests/transforms/value_sizes_test.cc runs it.
      if (p->name == "bind_sizes") continue;
      // Compiler-made nodes (`fused`, `conv_fused`) are made by passes from primitives the
      // oracle covers; tests/codegen and tests/passes check them against those unfused ops.
      if (p->compiler_made) continue;
      std::printf("oracle: primitive '%s' is not exercised by any oracle case\n", p->name.c_str());
      ++missing;
    }
    if (missing) return 1;
    std::printf("oracle driver: all %zu registered primitives exercised\n", spore::all_primitives().size());
  }
  return 0;
}
