// SPDX-License-Identifier: Apache-2.0
#include "codegen/compiled_kernel.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "backends/cpu/reduce_kernels.h"
#include "codegen/compiler.h"
#include "codegen/geometry.h"
#include "codegen/schedule.h"
#include "runtime/parallel.h"
#include "spore/error.h"

namespace spore::codegen {
namespace {

constexpr const char* kSymbol = "spore_kernel";

std::string unit_source(const LoopProgram& p) {
  const KernelDecl k{&p, kSymbol, kEmitTile};
  return emit_unit(std::span(&k, 1));
}

// The kernel's calling signature, part of its cache key: an entry built for other inputs or
// outputs is never loaded, so run_compiled cannot index past in[] or out[].
std::string arity(const LoopProgram& p, const std::string& symbol = kSymbol) {
  std::string s = symbol;
  s.append("(").append(std::to_string(p.inputs.size())).append(" in:");
  for (DType d : p.inputs) s.append(" ").append(dtype_name(d));
  s.append("; ").append(std::to_string(p.outputs.size())).append(" out:");
  for (DType d : p.outputs) s.append(" ").append(dtype_name(d));
  return s.append(")");
}

}  // namespace

void request_unit(std::span<const UnitKernel> kernels) {
  if (!host_compiler()) return;
  std::vector<KernelDecl> decls;
  std::vector<std::vector<std::shared_ptr<std::atomic<KernelFn>>>> users;  // per kernel of the unit
  std::unordered_map<std::string, size_t> by_source;  // a program's own unit text -> its kernel
  std::vector<std::string> symbols;
  std::vector<std::pair<std::string, std::string>> alone;  // each kernel's own unit and arity
  std::string ar;
  for (const UnitKernel& u : kernels) {
    bool take = false;
    std::call_once(u.kernel->requested_, [&] { take = emit_problem(*u.program).empty(); });
    if (!take) continue;
    std::string own = unit_source(*u.program);
    auto [it, fresh] = by_source.emplace(own, decls.size());
    if (!fresh) {
      users[it->second].push_back(u.kernel->fn_);
      continue;
    }
    symbols.push_back(std::string(kSymbol) + "_" + std::to_string(decls.size()));
    decls.push_back({u.program, symbols.back(), kEmitTile});
    users.push_back({u.kernel->fn_});
    alone.emplace_back(std::move(own), arity(*u.program));
    ar.append(arity(*u.program, symbols.back())).append("\n");
  }
  if (decls.empty()) return;
  auto store = [](const std::vector<std::shared_ptr<std::atomic<KernelFn>>>& slots, void* f) {
    for (const auto& slot : slots) slot->store(reinterpret_cast<KernelFn>(f), std::memory_order_release);
  };
  // If the unit does not build, each kernel alone: one bad kernel must not leave the whole graph
  // on the interpreter.
  std::vector<UnitRequest> one_by_one;
  if (users.size() > 1)
    for (size_t i = 0; i < users.size(); ++i)
      one_by_one.push_back({std::move(alone[i].first), {kSymbol}, std::move(alone[i].second),
                            [slots = users[i], store](std::optional<std::vector<void*>> one) {
                              if (one) store(slots, (*one)[0]);
                            }});
  compile_async(
      emit_unit(decls), symbols, ar,
      [users = std::move(users), store](std::optional<std::vector<void*>> syms) {
        if (syms)
          for (size_t i = 0; i < users.size(); ++i) store(users[i], (*syms)[i]);
      },
      std::move(one_by_one));
}

namespace {

// A row program's call as its kernel takes it (emit_cpp.h): the leading dims, the row dims
// merged into one, each input's strides over them; nullopt when an input's strides do not merge
// over the row dims (a broadcast over part of a row), which the interpreter runs instead.
struct RowCall {
  std::vector<int64_t> shape, strides;
  int64_t rows = 1, row_len = 1;
};

std::optional<RowCall> row_call(const LoopProgram& p, std::span<const Buffer> in) {
  int nd = 0;
  for (const Buffer& b : in) nd = std::max(nd, b.ndim);
  std::vector<int64_t> full(static_cast<size_t>(nd), 1);
  for (const Buffer& b : in)
    for (int d = 0; d < b.ndim; ++d)
      if (b.shape[d] != 1) full[static_cast<size_t>(nd - b.ndim + d)] = b.shape[d];
  const int lead = nd - p.row_dims;
  if (lead < 0 || lead + 1 > kMaxRank) return std::nullopt;
  RowCall c;
  for (int d = 0; d < lead; ++d) {
    c.shape.push_back(full[static_cast<size_t>(d)]);
    c.rows *= full[static_cast<size_t>(d)];
  }
  for (int d = lead; d < nd; ++d) c.row_len *= full[static_cast<size_t>(d)];
  c.shape.push_back(c.row_len);
  const size_t cn = c.shape.size();
  c.strides.assign(in.size() * cn, 0);
  for (size_t k = 0; k < in.size(); ++k) {
    const Buffer& b = in[k];
    auto stride = [&](int d) -> int64_t {  // input k's stride along iteration dim d (0: broadcast)
      const int id = d - (nd - b.ndim);
      return id < 0 || b.shape[id] == 1 ? 0 : b.strides[id];
    };
    for (int d = 0; d < lead; ++d) c.strides[k * cn + static_cast<size_t>(d)] = stride(d);
    // The row dims merge when each is the next one's stride times its extent (size-1 dims aside).
    int64_t inner = 0, span = 1;
    bool first = true;
    for (int d = nd - 1; d >= lead; --d) {
      if (full[static_cast<size_t>(d)] == 1) continue;
      if (first) {
        inner = stride(d);
        first = false;
      } else if (stride(d) != inner * span) {
        return std::nullopt;
      }
      span *= full[static_cast<size_t>(d)];
    }
    c.strides[k * cn + cn - 1] = inner;
  }
  return c;
}

// The fold loops a row kernel calls (emit_cpp.cc's spore_folds_*): the unfused reductions' own.
template <class T>
struct RowFolds {
  T (*sum)(const T*, int64_t);
  T (*max)(const T*, int64_t);
  T (*min)(const T*, int64_t);
};

const void* row_folds(DType dt) {
  static const RowFolds<float> f32{cpu::reduce_kernels().sum_f32, cpu::reduce_kernels().max_f32, cpu::reduce_kernels().min_f32};
  static const RowFolds<double> f64{cpu::reduce_kernels().sum_f64, cpu::reduce_kernels().max_f64, cpu::reduce_kernels().min_f64};
  return dt == DType::Float64 ? static_cast<const void*>(&f64) : static_cast<const void*>(&f32);
}

void run_compiled_rows(KernelFn fn, const LoopProgram& p, const RowCall& c, std::span<const Buffer> in,
                       std::span<const Buffer> out) {
  for (size_t j = 0; j < out.size(); ++j)
    SPORE_ASSERT(out[j].dtype == p.outputs[j] && (out[j].numel() == 0 || out[j].contiguous()) &&
                     out[j].numel() == (p.row_output[j] ? c.rows : c.rows * c.row_len),
                 "compiled row program output ", j, " must be a contiguous ", dtype_name(p.outputs[j]), " buffer");
  if (c.rows == 0) return;
  std::vector<const void*> ip;
  std::vector<void*> op;
  for (const Buffer& b : in) ip.push_back(b.data);
  ip.push_back(row_folds(p.dtype));
  for (const Buffer& b : out) op.push_back(b.data);
  const int64_t nd = static_cast<int64_t>(c.shape.size());
  const Schedule s = make_schedule(p, c.rows * c.row_len, kEmitTile);
  const int64_t per_element = std::max<int64_t>(1, p.cost + static_cast<int64_t>(p.inputs.size() + p.outputs.size()));
  const int64_t grain = std::max<int64_t>(1, runtime::kParallelGrain / (per_element * std::max<int64_t>(1, c.row_len)));
  auto work = [&](int64_t b, int64_t e) { fn(b, e, c.shape.data(), nd, c.strides.data(), ip.data(), op.data(), c.row_len); };
  if (s.threads > 1 && c.rows > grain) runtime::parallel_for(c.rows, grain, work);
  else work(0, c.rows);
}

}  // namespace

bool CompiledKernel::try_run(const LoopProgram& p, std::span<const Buffer> in, std::span<const Buffer> out) {
  if (p.row_dims > 0 && fn() && !row_call(p, in)) return false;
  if (KernelFn f = fn()) {
    run_compiled(f, p, in, out);
    return true;
  }
  std::call_once(requested_, [&] {
    if (!emit_problem(p).empty() || !host_compiler()) return;
    compile_async(unit_source(p), {kSymbol}, arity(p), [slot = fn_](std::optional<std::vector<void*>> syms) {
      if (syms) slot->store(reinterpret_cast<KernelFn>((*syms)[0]), std::memory_order_release);
    });
  });
  return false;
}

KernelFn compile_now(const LoopProgram& p, std::string* why) {
  if (std::string problem = emit_problem(p); !problem.empty()) {
    *why = problem;
    return nullptr;
  }
  auto syms = compile_and_load(unit_source(p), {kSymbol}, arity(p), why);
  return syms ? reinterpret_cast<KernelFn>((*syms)[0]) : nullptr;
}

void run_compiled(KernelFn fn, const LoopProgram& p, std::span<const Buffer> in, std::span<const Buffer> out) {
  SPORE_ASSERT(in.size() == p.inputs.size() && out.size() == p.outputs.size(), "compiled fused kernel called with ",
               in.size(), " inputs and ", out.size(), " outputs for a program of ", p.inputs.size(), " and ",
               p.outputs.size());
  for (size_t k = 0; k < in.size(); ++k)
    SPORE_ASSERT(in[k].dtype == p.inputs[k], "fused input ", k, " is ", dtype_name(in[k].dtype), ", the program loads ",
                 dtype_name(p.inputs[k]));
  if (p.row_dims > 0) {
    const std::optional<RowCall> c = row_call(p, in);
    SPORE_ASSERT(c.has_value(), "compiled row program called with inputs whose strides do not merge over the row dims");
    return run_compiled_rows(fn, p, *c, in, out);
  }
  if (out.empty() || out[0].numel() == 0) return;
  for (size_t j = 0; j < out.size(); ++j)
    SPORE_ASSERT(out[j].dtype == p.outputs[j] && dense(out[j]) && same_layout(out[j], out[0]), "fused output ", j,
                 " must be a dense ", dtype_name(p.outputs[j]), " buffer laid out as output 0");
  const Geometry g = geometry(in, out[0]);
  // A 0-d iteration space is one row of one element.
  const int64_t nd = std::max(1, g.ndim);
  std::vector<int64_t> shape(static_cast<size_t>(nd), 1), strides(in.size() * static_cast<size_t>(nd), 0);
  for (int d = 0; d < g.ndim; ++d) {
    shape[static_cast<size_t>(d)] = g.shape[d];
    for (size_t k = 0; k < in.size(); ++k) strides[k * static_cast<size_t>(nd) + static_cast<size_t>(d)] = g.strides[k][d];
  }
  std::vector<const void*> ip;
  std::vector<void*> op;
  for (const Buffer& b : in) ip.push_back(b.data);
  for (const Buffer& b : out) op.push_back(b.data);
  // An input read across the rows (stride 1 along dim nd - 2, e.g. a transposed gradient) is
  // staged in blocks of kEmitBlockRows rows, one cache line per column; else one row per item.
  const int64_t inner = shape.back(), mid = nd >= 2 ? shape[static_cast<size_t>(nd - 2)] : 1;
  int64_t rows = 1;
  for (size_t k = 0; k < in.size() && nd >= 2; ++k) {
    const int64_t st = strides[k * static_cast<size_t>(nd) + static_cast<size_t>(nd - 1)];
    if (st != 0 && st != 1 && strides[k * static_cast<size_t>(nd) + static_cast<size_t>(nd - 2)] == 1 && mid > 1)
      rows = kEmitBlockRows;
  }
  const int64_t cw = kEmitTile / rows;
  const int64_t items = out[0].numel() / (inner * mid) * ((mid + rows - 1) / rows) * ((inner + cw - 1) / cw);
  const Schedule s = make_schedule(p, out[0].numel(), kEmitTile);
  auto work = [&](int64_t b, int64_t e) { fn(b, e, shape.data(), nd, strides.data(), ip.data(), op.data(), rows); };
  if (s.threads > 1 && items > 1) runtime::parallel_for(items, s.grain_tiles, work);
  else work(0, items);
}

}  // namespace spore::codegen
