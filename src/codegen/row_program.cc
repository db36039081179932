// SPDX-License-Identifier: Apache-2.0
// Lowering a fused group with row reductions to a row program (loop_program.h, LoopProgram's
// row fields): which values are per row, in which segment each is computed, and the registers.
#include <algorithm>
#include <map>

#include "codegen/loop_program.h"
#include "prims/reduce.h"
#include "spore/error.h"
#include "transforms/ir_bridge.h"

namespace spore::codegen {
namespace {

const std::map<std::string, ReduceCode, std::less<>>& reduce_codes() {
  static const std::map<std::string, ReduceCode, std::less<>> m = {
      {"reduce_sum", ReduceCode::sum}, {"reduce_mean", ReduceCode::mean},
      {"reduce_max", ReduceCode::max}, {"reduce_min", ReduceCode::min}};
  return m;
}

bool is_float(ir::DType t) { return t == ir::DType::Float32 || t == ir::DType::Float64; }

const std::vector<ir::Dim>& shape_of(const ir::Type& t) { return std::get<ir::TensorType>(t).shape; }

// Whether a value of shape `s` is the same for every element of a row of `full` (right-aligned
// broadcasting): its dims over the last `r` dims of `full` are 1 or absent.
bool per_row(const std::vector<ir::Dim>& s, const std::vector<ir::Dim>& full, int r) {
  const size_t n = full.size(), m = s.size();
  for (size_t d = n - static_cast<size_t>(r); d < n; ++d) {
    const size_t back = n - d;  // 1 for the last dim
    if (back <= m && s[m - back] != 1) return false;
  }
  return true;
}

}  // namespace

int row_reduction_dims(const ir::Node& n, std::span<const ir::Type> input_types) {
  if (!reduce_codes().count(n.op()) || input_types.size() != 1 || ir::is_token(input_types[0]) ||
      n.outputs().size() != 1 || ir::is_token(n.outputs()[0]))
    return 0;
  const auto& t = std::get<ir::TensorType>(input_types[0]);
  if (!is_float(t.dtype) || std::get<ir::TensorType>(n.outputs()[0]).dtype != t.dtype) return 0;
  const auto& a = *static_cast<const prims::ReduceAttrs*>(n.attrs());
  const auto rank = static_cast<int64_t>(t.shape.size());
  const auto r = static_cast<int64_t>(a.axes.size());
  if (!a.keepdims || r == 0 || r > rank) return 0;
  bool all_one = true;
  for (int64_t j = 0; j < r; ++j) {
    if (a.axes[static_cast<size_t>(j)] != rank - r + j) return 0;  // not the trailing dims
    all_one = all_one && t.shape[static_cast<size_t>(rank - r + j)] == 1;
  }
  return all_one ? 0 : static_cast<int>(r);
}

namespace detail {

LoopProgram lower_rows(const ir::Graph& g) {
  LoopProgram p;
  const size_t np = g.params().size(), nn = g.nodes().size();
  auto vid = [&](ir::ValueRef v) { return v.node == ir::ValueRef::kParam ? static_cast<size_t>(v.index) : np + static_cast<size_t>(v.node); };
  auto type_of = [&](size_t v) -> const ir::Type& { return v < np ? g.params()[v].type : g.nodes()[v - np]->outputs()[0]; };
  auto in_types = [&](const ir::Node& n) {
    std::vector<ir::Type> t;
    for (ir::ValueRef v : n.inputs()) t.push_back(g.type_of(v));
    return t;
  };

  // The row dims and the iteration shape: every reduction's, the same for all of them.
  std::vector<ir::Dim> full;
  std::optional<ir::DType> fl;
  for (size_t v = 0; v < np + nn; ++v) {
    const ir::Type& t = type_of(v);
    SPORE_CHECK(!ir::is_token(t), "[fused] sub-graph @", g.name(), " holds a token; fuse only tensor ops");
    const ir::DType d = std::get<ir::TensorType>(t).dtype;
    SPORE_CHECK(is_float(d) || d == ir::DType::Bool, "[fused] sub-graph @", g.name(), " holds a ", ir::dtype_name(d),
                " value; the loop program computes float32 or float64 (bools as 0/1)");
    if (!is_float(d)) continue;
    SPORE_CHECK(!fl || *fl == d, "[fused] sub-graph @", g.name(), " mixes ", ir::dtype_name(*fl), " and ",
                ir::dtype_name(d), "; a fused group computes in one float dtype, so split it at the cast");
    fl = d;
  }
  SPORE_CHECK(fl.has_value(), "[fused] sub-graph @", g.name(), " computes only bools");
  p.dtype = transforms::from_ir(*fl);
  for (size_t k = 0; k < nn; ++k) {
    const ir::Node& n = *g.nodes()[k];
    const int r = row_reduction_dims(n, in_types(n));
    if (r == 0) continue;
    const std::vector<ir::Dim>& s = shape_of(g.type_of(n.inputs()[0]));
    SPORE_CHECK(p.row_dims == 0 || (p.row_dims == r && s == full), "[fused] sub-graph @", g.name(),
                ": its reductions differ in the dims they reduce or the shape they reduce; a row program has one "
                "iteration shape and one set of row dims");
    p.row_dims = r;
    full = s;
  }
  SPORE_CHECK(p.row_dims > 0, "[fused] sub-graph @", g.name(), " has no row reduction");
  const int r = p.row_dims;
  // The kernels take the iteration shape from the inputs' broadcast, so each must broadcast into
  // the reductions' operand shape (a parsed node may say otherwise).
  for (size_t v = 0; v < np; ++v) {
    const std::vector<ir::Dim>& s = shape_of(type_of(v));
    bool fits = s.size() <= full.size();
    for (size_t d = 0; fits && d < s.size(); ++d) fits = s[d] == 1 || s[d] == full[full.size() - s.size() + d];
    SPORE_CHECK(fits, "[fused] input ", v, " of sub-graph @", g.name(), " is ", ir::type_str(type_of(v)),
                ", which does not broadcast into the row program's iteration shape (its reductions' operand shape)");
  }

  // Per value: per row or per element; the segment level (how many reductions deep it is).
  std::vector<char> row(np + nn, 0), reduce(np + nn, 0);
  std::vector<int> level(np + nn, 0);
  for (size_t v = 0; v < np; ++v) row[v] = per_row(shape_of(type_of(v)), full, r);
  for (size_t k = 0; k < nn; ++k) {
    const ir::Node& n = *g.nodes()[k];
    const size_t v = np + k;
    if (n.op() == transforms::kConstantOp) {
      row[v] = 1;
      continue;
    }
    if (row_reduction_dims(n, in_types(n)) > 0) {
      const size_t u = vid(n.inputs()[0]);
      SPORE_CHECK(!row[u], "[fused] node ", k, " of sub-graph @", g.name(), " reduces a value that is the same along "
                  "the row; the fusion pass leaves such reductions unfused");
      reduce[v] = row[v] = 1;
      level[v] = level[u] + 1;
      continue;
    }
    bool all_row = true;
    for (ir::ValueRef in : n.inputs()) {
      all_row = all_row && row[vid(in)];
      level[v] = std::max(level[v], level[vid(in)]);
    }
    row[v] = all_row;
  }

  // Demand: which element values each element segment computes, which row values exist.
  std::vector<std::vector<char>> elem_need;  // [level][value]
  std::vector<char> row_need(np + nn, 0);
  auto need_elem_at = [&](auto&& self, size_t v, int at) -> void {
    if (static_cast<int>(elem_need.size()) <= at) elem_need.resize(static_cast<size_t>(at) + 1, std::vector<char>(np + nn, 0));
    if (elem_need[static_cast<size_t>(at)][v]) return;
    elem_need[static_cast<size_t>(at)][v] = 1;
    if (v < np) return;
    for (ir::ValueRef in : g.nodes()[v - np]->inputs()) {
      const size_t u = vid(in);
      if (!row[u]) self(self, u, at);
    }
  };
  auto need_row = [&](auto&& self, size_t v) -> void {
    if (row_need[v]) return;
    row_need[v] = 1;
    if (v < np) return;
    const ir::Node& n = *g.nodes()[v - np];
    if (reduce[v]) {
      need_elem_at(need_elem_at, vid(n.inputs()[0]), level[v] - 1);
      return;
    }
    for (ir::ValueRef in : n.inputs()) self(self, vid(in));
  };
  // Row values an element value at level `at` reads (through element values of that segment).
  for (const ir::Output& o : g.outputs()) {
    const size_t v = vid(o.value);
    const std::vector<ir::Dim>& s = shape_of(type_of(v));
    if (row[v]) {
      std::vector<ir::Dim> want = full;
      for (size_t d = full.size() - static_cast<size_t>(r); d < full.size(); ++d) want[d] = 1;
      SPORE_CHECK(s == want, "[fused] sub-graph @", g.name(), " returns a per-row value of type ",
                  ir::type_str(type_of(v)), "; a row program's per-row results have the iteration shape with its last ",
                  r, " dims 1");
      need_row(need_row, v);
    } else {
      SPORE_CHECK(s == full, "[fused] sub-graph @", g.name(), " returns a value of type ", ir::type_str(type_of(v)),
                  "; a row program's per-element results have the iteration shape (its reductions' operand shape)");
      need_elem_at(need_elem_at, v, level[v]);
    }
  }
  // Element values read row values: those must exist too (a fixed point over the levels, since
  // a row value's reduction adds element demand at a lower level).
  for (bool more = true; more;) {
    more = false;
    for (size_t at = 0; at < elem_need.size(); ++at)
      for (size_t v = np; v < np + nn; ++v) {
        if (!elem_need[at][v]) continue;
        for (ir::ValueRef in : g.nodes()[v - np]->inputs()) {
          const size_t u = vid(in);
          if (row[u] && !row_need[u]) {
            need_row(need_row, u);
            more = true;
          }
        }
      }
  }

  // Accumulators: one per reduction.
  std::vector<int32_t> acc(np + nn, -1);
  for (size_t v = np; v < np + nn; ++v)
    if (reduce[v] && row_need[v]) {
      acc[v] = p.num_accumulators++;
      p.accumulators.push_back(reduce_codes().find(g.nodes()[v - np]->op())->second);
    }
  for (size_t i = 0; i < np; ++i) p.inputs.push_back(transforms::from_ir(std::get<ir::TensorType>(type_of(i)).dtype));
  for (const ir::Output& o : g.outputs()) {
    const size_t v = vid(o.value);
    p.outputs.push_back(transforms::from_ir(std::get<ir::TensorType>(type_of(v)).dtype));
    p.row_output.push_back(row[v] != 0);
  }

  // Registers: row values keep theirs for the whole row; element registers are reused within
  // a segment and all free again at its end.
  std::vector<int32_t> row_reg(np + nn, -1);
  std::vector<int32_t> free_regs;
  auto fresh = [&] {
    if (!free_regs.empty()) {
      const int32_t x = free_regs.back();
      free_regs.pop_back();
      return x;
    }
    return p.num_registers++;
  };
  int max_level = 0;
  for (size_t v = 0; v < np + nn; ++v)
    if (row_need[v]) max_level = std::max(max_level, level[v]);
  const int phases = std::max(static_cast<int>(elem_need.size()), max_level + 1);
  for (int at = 0; at < phases; ++at) {
    // The per-row segment: row values of this level, then the row results stored.
    Segment rs{.per_row = true, .begin = static_cast<int32_t>(p.code.size())};
    for (size_t v = 0; v < np + nn; ++v) {
      if (!row_need[v] || level[v] != at) continue;
      if (v < np) {
        row_reg[v] = p.num_registers++;
        p.code.push_back({.kind = InstrKind::Load, .dst = row_reg[v], .slot = static_cast<int32_t>(v)});
        continue;
      }
      const ir::Node& n = *g.nodes()[v - np];
      const int32_t k = static_cast<int32_t>(v - np);
      if (n.op() == transforms::kConstantOp) {
        const auto& c = *static_cast<const transforms::ConstantAttrs*>(n.attrs());
        const double x = is_floating(c.dtype) ? c.f : static_cast<double>(c.i);
        const double imm = p.dtype == DType::Float32 ? static_cast<double>(static_cast<float>(x)) : x;
        row_reg[v] = p.num_registers++;
        p.code.push_back({.kind = InstrKind::Const, .dst = row_reg[v], .imm = c.dtype == DType::Bool ? (c.i != 0 ? 1.0 : 0.0) : imm,
                          .node = k});
      } else if (reduce[v]) {
        row_reg[v] = p.num_registers++;
        p.code.push_back({.kind = InstrKind::Result, .dst = row_reg[v], .slot = acc[v], .node = k});
      } else {
        int32_t ignored = 0;
        const std::optional<Instr> op = op_instr(g, v - np, &ignored);
        std::array<int32_t, 3> src{-1, -1, -1};
        for (size_t j = 0; j < n.inputs().size(); ++j) src[j] = row_reg[vid(n.inputs()[j])];
        if (!op) {
          row_reg[v] = src[0];
          continue;
        }
        Instr in = *op;
        in.dst = row_reg[v] = p.num_registers++;
        in.a = src[0];
        in.b = src[1];
        in.c = src[2];
        p.code.push_back(in);
      }
    }
    for (size_t j = 0; j < g.outputs().size(); ++j) {
      const size_t v = vid(g.outputs()[j].value);
      if (row[v] && level[v] == at) p.code.push_back({.kind = InstrKind::Store, .a = row_reg[v], .slot = static_cast<int32_t>(j)});
    }
    rs.end = static_cast<int32_t>(p.code.size());
    if (rs.end > rs.begin) p.segments.push_back(rs);
    if (at >= static_cast<int>(elem_need.size())) continue;

    // The element segment: the element values this level needs, the reductions they feed and
    // the element results of this level.
    const std::vector<char>& need = elem_need[static_cast<size_t>(at)];
    Segment es{.per_row = false, .begin = static_cast<int32_t>(p.code.size())};
    std::vector<int> uses(np + nn, 0);
    for (size_t v = np; v < np + nn; ++v)
      if (need[v])
        for (ir::ValueRef in : g.nodes()[v - np]->inputs()) ++uses[vid(in)];
    for (size_t v = np; v < np + nn; ++v)
      if (reduce[v] && row_need[v] && level[v] - 1 == at) ++uses[vid(g.nodes()[v - np]->inputs()[0])];
    for (const ir::Output& o : g.outputs()) {
      const size_t v = vid(o.value);
      if (!row[v] && level[v] == at) ++uses[v];
    }
    std::vector<int32_t> reg(np + nn, -1);
    std::vector<int> live(static_cast<size_t>(p.num_registers) + np + nn + 8, 0);
    auto grow = [&](int32_t x) {
      if (static_cast<size_t>(x) >= live.size()) live.resize(static_cast<size_t>(x) + 1, 0);
    };
    auto define = [&](size_t v, int32_t x) {
      grow(x);
      reg[v] = x;
      live[static_cast<size_t>(x)] += uses[v];
    };
    auto release = [&](int32_t x) {
      if (--live[static_cast<size_t>(x)] == 0) free_regs.push_back(x);
    };
    // Element operand registers: element values of this segment, or row values splatted.
    auto operand = [&](size_t u) {
      if (reg[u] >= 0) return reg[u];
      SPORE_ASSERT(row[u] && row_reg[u] >= 0, "row program: value ", u, " read before it is computed");
      const int32_t x = fresh();
      p.code.push_back({.kind = InstrKind::Splat, .dst = x, .a = row_reg[u]});
      define(u, x);
      return x;
    };
    for (size_t v = 0; v < np + nn; ++v) {
      if (row[v]) continue;
      const bool needed = v < np ? uses[v] > 0 : need[v] != 0;
      if (!needed) continue;
      if (v < np) {
        const int32_t x = fresh();
        p.code.push_back({.kind = InstrKind::Load, .dst = x, .slot = static_cast<int32_t>(v)});
        define(v, x);
        continue;
      }
      const ir::Node& n = *g.nodes()[v - np];
      std::array<int32_t, 3> src{-1, -1, -1};
      for (size_t j = 0; j < n.inputs().size(); ++j) src[j] = operand(vid(n.inputs()[j]));
      const std::optional<Instr> op = op_instr(g, v - np, &p.cost);
      if (!op) {
        define(v, src[0]);
        release(src[0]);
        continue;
      }
      for (int32_t x : src)
        if (x >= 0) release(x);
      Instr in = *op;
      in.dst = fresh();
      in.a = src[0];
      in.b = src[1];
      in.c = src[2];
      p.code.push_back(in);
      define(v, in.dst);
      if (live[static_cast<size_t>(in.dst)] == 0) free_regs.push_back(in.dst);
    }
    for (size_t v = np; v < np + nn; ++v) {
      if (!(reduce[v] && row_need[v] && level[v] - 1 == at)) continue;
      const int32_t x = operand(vid(g.nodes()[v - np]->inputs()[0]));
      p.code.push_back({.kind = InstrKind::Reduce, .code = static_cast<uint8_t>(p.accumulators[static_cast<size_t>(acc[v])]),
                        .a = x, .slot = acc[v], .node = static_cast<int32_t>(v - np)});
      ++p.cost;
      release(x);
    }
    for (size_t j = 0; j < g.outputs().size(); ++j) {
      const size_t v = vid(g.outputs()[j].value);
      if (row[v] || level[v] != at) continue;
      const int32_t x = operand(v);
      p.code.push_back({.kind = InstrKind::Store, .a = x, .slot = static_cast<int32_t>(j)});
      release(x);
    }
    // Every element register is free again for the next segment.
    free_regs.clear();
    for (int32_t x = 0; x < p.num_registers; ++x)
      if (std::find(row_reg.begin(), row_reg.end(), x) == row_reg.end()) free_regs.push_back(x);
    es.end = static_cast<int32_t>(p.code.size());
    if (es.end > es.begin) p.segments.push_back(es);
  }
  return p;
}

}  // namespace detail
}  // namespace spore::codegen
