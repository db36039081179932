// SPDX-License-Identifier: Apache-2.0
// The op table of the loop program and the lowering of a fused sub-graph to it.
#include "codegen/loop_program.h"

#include <map>
#include <sstream>

#include "prims/cast.h"
#include "prims/unary.h"
#include "spore/error.h"
#include "transforms/ir_bridge.h"

namespace spore::codegen {
namespace {

// Which operand dtypes an op takes: floats only, floats or bools, where's (bool, x, x), a cast.
enum class Operands : uint8_t { Float, FloatOrBool, Where, Cast, Identity };

struct OpRow {
  InstrKind kind;
  uint8_t code;
  int arity;
  Operands operands;
  bool bool_result;
  int cost;  // per element, relative to an add; transcendental functions cost more
};

constexpr const char* kUnaryNames[] = {
#define SPORE_NAME(name, F) #name,
    SPORE_UNARY_FLOAT_OPS(SPORE_NAME)
#undef SPORE_NAME
};
constexpr const char* kBinaryNames[] = {
#define SPORE_NAME(name, F) #name,
    SPORE_BINARY_FLOAT_OPS(SPORE_NAME)
#undef SPORE_NAME
};
constexpr const char* kCompareNames[] = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"};
constexpr const char* kLogicalNames[] = {"logical_and", "logical_or", "logical_xor"};
constexpr const char* kReduceNames[] = {"sum", "mean", "max", "min"};
constexpr const char* kPredicateNames[] = {"isnan", "isinf", "isfinite", "logical_not", "to_bool"};

bool transcendental(cpu::UnaryOp op) {
  using U = cpu::UnaryOp;
  switch (op) {
    case U::neg: case U::abs: case U::sign: case U::sqrt: case U::rsqrt: case U::reciprocal: case U::square:
    case U::relu: case U::relu6: case U::leaky_relu: case U::hardswish: case U::hardsigmoid: case U::floor:
    case U::ceil: case U::round: case U::trunc:
      return false;
    default:
      return true;
  }
}

const std::map<std::string, OpRow, std::less<>>& table() {
  static const auto t = [] {
    std::map<std::string, OpRow, std::less<>> m;
    for (int i = 0; i < cpu::kNumUnaryOps; ++i)
      m[kUnaryNames[i]] = {InstrKind::Unary, static_cast<uint8_t>(i), 1, Operands::Float, false,
                           transcendental(static_cast<cpu::UnaryOp>(i)) ? 8 : 1};
    for (int i = 0; i < cpu::kNumBinaryOps; ++i) {
      const auto op = static_cast<cpu::BinaryOp>(i);
      m[kBinaryNames[i]] = {InstrKind::Binary, static_cast<uint8_t>(i), 2, Operands::Float, false,
                            op == cpu::BinaryOp::pow || op == cpu::BinaryOp::atan2 ? 12 : 1};
    }
    for (int i = 0; i < 6; ++i)
      m[kCompareNames[i]] = {InstrKind::Compare, static_cast<uint8_t>(i), 2, Operands::FloatOrBool, true, 1};
    for (int i = 0; i < 3; ++i)
      m[kLogicalNames[i]] = {InstrKind::Logical, static_cast<uint8_t>(i), 2, Operands::FloatOrBool, true, 1};
    for (int i = 0; i < 4; ++i)
      m[kPredicateNames[i]] = {InstrKind::Predicate, static_cast<uint8_t>(i), 1, Operands::FloatOrBool, true, 1};
    m["where"] = {InstrKind::Where, 0, 3, Operands::Where, false, 1};
    m["clamp"] = {InstrKind::Clamp, 0, 3, Operands::Float, false, 2};
    m["lerp"] = {InstrKind::Lerp, 0, 3, Operands::Float, false, 3};
    m["cast"] = {InstrKind::Predicate, static_cast<uint8_t>(PredicateCode::to_bool), 1, Operands::Cast, false, 1};
    m["copy"] = {InstrKind::Predicate, 0, 1, Operands::Identity, false, 0};
    return m;
  }();
  return t;
}

bool is_float(ir::DType t) { return t == ir::DType::Float32 || t == ir::DType::Float64; }
bool float_or_bool(ir::DType t) { return is_float(t) || t == ir::DType::Bool; }

std::string supported_list() {
  return "elementwise unary and binary float ops, comparisons, logical ops, isnan/isinf/isfinite, where, clamp, "
         "lerp, copy and casts between bool and the float type";
}

}  // namespace

bool is_fusable_op(std::string_view op) { return table().count(op) != 0; }

std::string lowering_problem(const ir::Node& n, std::span<const ir::Type> input_types) {
  auto it = table().find(n.op());
  if (it == table().end()) return "op '" + n.op() + "' is not in the loop program's op table (it has " + supported_list() + ")";
  const OpRow& row = it->second;
  if (n.info().effect != ir::Effect::Pure || !n.subgraphs().empty()) return "op '" + n.op() + "' is not a pure elementwise op";
  if (n.outputs().size() != 1 || static_cast<int>(input_types.size()) != row.arity)
    return "op '" + n.op() + "' has an unexpected number of operands";
  std::vector<ir::DType> in;
  for (const ir::Type& t : input_types) {
    if (ir::is_token(t)) return "op '" + n.op() + "' takes a token";
    in.push_back(std::get<ir::TensorType>(t).dtype);
  }
  if (ir::is_token(n.outputs()[0])) return "op '" + n.op() + "' returns a token";
  const ir::DType out = std::get<ir::TensorType>(n.outputs()[0]).dtype;
  std::optional<ir::DType> fl;
  for (ir::DType t : in) {
    if (!float_or_bool(t)) return "op '" + n.op() + "' on " + ir::dtype_name(t) + " (the loop program computes float32 and float64, with bools as 0/1)";
    if (is_float(t)) {
      if (fl && *fl != t) return "op '" + n.op() + "' mixes float dtypes";
      fl = t;
    }
  }
  if (!float_or_bool(out)) return "op '" + n.op() + "' gives " + ir::dtype_name(out);
  if (is_float(out) && fl && *fl != out) return "op '" + n.op() + "' converts between float dtypes";
  switch (row.operands) {
    case Operands::Float:
      for (ir::DType t : in)
        if (!is_float(t)) return "op '" + n.op() + "' on bool operands";
      break;
    case Operands::Where:
      if (in[0] != ir::DType::Bool || in[1] != in[2]) return "where with a non-bool condition or differing operands";
      break;
    default:
      break;
  }
  return {};
}

DType compute_dtype_of(const ir::Node& n, std::span<const ir::Type> input_types) {
  for (const ir::Type& t : input_types)
    if (!ir::is_token(t) && is_float(std::get<ir::TensorType>(t).dtype))
      return transforms::from_ir(std::get<ir::TensorType>(t).dtype);
  for (const ir::Type& t : n.outputs())
    if (!ir::is_token(t) && is_float(std::get<ir::TensorType>(t).dtype))
      return transforms::from_ir(std::get<ir::TensorType>(t).dtype);
  return DType::Bool;
}

namespace detail {

std::optional<Instr> op_instr(const ir::Graph& g, size_t k, int32_t* cost) {
  const ir::Node& n = *g.nodes()[k];
  std::vector<ir::Type> in_types;
  for (ir::ValueRef v : n.inputs()) in_types.push_back(g.type_of(v));
  const std::string problem = lowering_problem(n, in_types);
  SPORE_CHECK(problem.empty(), "[fused] node ", k, " of sub-graph @", g.name(), ": ", problem,
              "; the fusion pass leaves such nodes outside fused groups");
  const OpRow& row = table().find(n.op())->second;
  *cost += row.cost;
  const ir::DType in0 = std::get<ir::TensorType>(in_types[0]).dtype;
  const ir::DType out = std::get<ir::TensorType>(n.outputs()[0]).dtype;
  // copy, and casts that keep the register's value (bool -> float is 0/1 already), alias
  // their operand's register.
  const bool identity = row.operands == Operands::Identity ||
                        (row.operands == Operands::Cast && !(is_float(in0) && out == ir::DType::Bool));
  if (identity) return std::nullopt;
  Instr in{.kind = row.kind, .code = row.code, .node = static_cast<int32_t>(k)};
  if (row.kind == InstrKind::Unary) {
    const auto& a = *static_cast<const prims::UnaryAttrs*>(n.attrs());
    in.pa = a.a;
    in.pb = a.b;
  }
  return in;
}

}  // namespace detail

LoopProgram lower(const ir::Graph& g) {
  for (const ir::NodePtr& n : g.nodes()) {
    std::vector<ir::Type> in_types;
    for (ir::ValueRef v : n->inputs()) in_types.push_back(g.type_of(v));
    if (row_reduction_dims(*n, in_types) > 0) return detail::lower_rows(g);
  }
  LoopProgram p;
  // The compute type: the one float dtype of the group.
  std::optional<ir::DType> fl;
  auto see = [&](const ir::Type& t, const std::string& where) {
    SPORE_CHECK(!ir::is_token(t), "[fused] ", where, " of sub-graph @", g.name(), " is a token; fuse only elementwise ops");
    const ir::DType d = std::get<ir::TensorType>(t).dtype;
    SPORE_CHECK(float_or_bool(d), "[fused] ", where, " of sub-graph @", g.name(), " is ", ir::dtype_name(d),
                "; the loop program computes float32 or float64 (bools as 0/1); leave such ops unfused");
    if (!is_float(d)) return;
    SPORE_CHECK(!fl || *fl == d, "[fused] sub-graph @", g.name(), " mixes ", ir::dtype_name(*fl), " and ", ir::dtype_name(d),
                "; a fused group computes in one float dtype, so split it at the cast");
    fl = d;
  };
  for (size_t i = 0; i < g.params().size(); ++i) see(g.params()[i].type, "input " + std::to_string(i));
  for (size_t k = 0; k < g.nodes().size(); ++k) see(g.nodes()[k]->outputs()[0], "node " + std::to_string(k) + " (" + g.nodes()[k]->op() + ")");
  SPORE_CHECK(fl.has_value(), "[fused] sub-graph @", g.name(), " computes only bools; fuse groups with a float value");
  p.dtype = transforms::from_ir(*fl);

  // Remaining uses of each value decide when a register may be reused.
  const size_t np = g.params().size(), nn = g.nodes().size();
  auto vid = [&](ir::ValueRef v) { return v.node == ir::ValueRef::kParam ? static_cast<size_t>(v.index) : np + static_cast<size_t>(v.node); };
  std::vector<int> uses(np + nn, 0);
  for (const auto& n : g.nodes())
    for (ir::ValueRef v : n->inputs()) ++uses[vid(v)];
  for (const ir::Output& o : g.outputs()) ++uses[vid(o.value)];

  std::vector<int32_t> reg(np + nn, -1);
  std::vector<int> live;      // per register: remaining uses of the values it holds
  std::vector<bool> pinned;   // loads and literals keep their registers
  std::vector<int32_t> free_regs;
  auto fresh = [&](bool pin) {
    int32_t r;
    if (!pin && !free_regs.empty()) {
      r = free_regs.back();
      free_regs.pop_back();
    } else {
      r = p.num_registers++;
      live.push_back(0);
      pinned.push_back(pin);
    }
    return r;
  };
  auto define = [&](size_t v, int32_t r) {
    reg[v] = r;
    live[static_cast<size_t>(r)] += uses[v];
  };
  auto release = [&](int32_t r) {
    if (--live[static_cast<size_t>(r)] == 0 && !pinned[static_cast<size_t>(r)]) free_regs.push_back(r);
  };

  for (size_t i = 0; i < np; ++i) {
    const int32_t r = fresh(true);
    define(i, r);
    p.inputs.push_back(transforms::from_ir(std::get<ir::TensorType>(g.params()[i].type).dtype));
    p.code.push_back({.kind = InstrKind::Load, .dst = r, .slot = static_cast<int32_t>(i)});
  }
  for (size_t k = 0; k < nn; ++k) {
    const ir::Node& n = *g.nodes()[k];
    if (n.op() != transforms::kConstantOp) continue;
    const auto& c = *static_cast<const transforms::ConstantAttrs*>(n.attrs());
    const int32_t r = fresh(true);
    define(np + k, r);
    const double v = is_floating(c.dtype) ? c.f : static_cast<double>(c.i);
    // The literal rounded to the compute type, as the unfused graph's 0-d tensor holds it.
    const double imm = p.dtype == DType::Float32 ? static_cast<double>(static_cast<float>(v)) : v;
    p.code.push_back({.kind = InstrKind::Const, .dst = r, .imm = c.dtype == DType::Bool ? (c.i != 0 ? 1.0 : 0.0) : imm,
                      .node = static_cast<int32_t>(k)});
  }
  for (size_t k = 0; k < nn; ++k) {
    const ir::Node& n = *g.nodes()[k];
    if (n.op() == transforms::kConstantOp) continue;
    std::array<int32_t, 3> src{-1, -1, -1};
    for (size_t j = 0; j < n.inputs().size(); ++j) src[j] = reg[vid(n.inputs()[j])];
    const std::optional<Instr> op = detail::op_instr(g, k, &p.cost);
    if (!op) {  // an alias of its operand: no instruction
      define(np + k, src[0]);
      release(src[0]);
      continue;
    }
    for (int32_t s : src)
      if (s >= 0) release(s);
    const int32_t r = fresh(false);
    define(np + k, r);
    Instr in = *op;
    in.dst = r;
    in.a = src[0];
    in.b = src[1];
    in.c = src[2];
    p.code.push_back(in);
    if (live[static_cast<size_t>(r)] == 0) free_regs.push_back(r);  // an unused value
  }
  for (size_t j = 0; j < g.outputs().size(); ++j) {
    const ir::ValueRef v = g.outputs()[j].value;
    p.outputs.push_back(transforms::from_ir(std::get<ir::TensorType>(g.type_of(v)).dtype));
    p.code.push_back({.kind = InstrKind::Store, .a = reg[vid(v)], .slot = static_cast<int32_t>(j)});
  }
  return p;
}

std::string LoopProgram::str() const {
  std::ostringstream os;
  os << "loop program (" << dtype_name(dtype) << ", " << num_registers << " registers, cost " << cost << ")\n";
  auto r = [](int32_t x) { return spore::detail::cat("r", x); };
  if (row_dims > 0) os << "  rows over the last " << row_dims << " dims, " << num_accumulators << " accumulators\n";
  for (size_t at = 0; at < code.size(); ++at) {
    const Instr& i = code[at];
    for (const Segment& sg : segments)
      if (sg.begin == static_cast<int32_t>(at)) os << (sg.per_row ? " per row:\n" : " per element:\n");
    os << "  ";
    switch (i.kind) {
      case InstrKind::Load: os << r(i.dst) << " = load in" << i.slot << " (" << dtype_name(inputs[i.slot]) << ")"; break;
      case InstrKind::Const: os.precision(17); os << r(i.dst) << " = const " << i.imm; break;
      case InstrKind::Unary:
        os << r(i.dst) << " = " << kUnaryNames[i.code] << " " << r(i.a);
        if (i.pa != 0 || i.pb != 0) os << " {a=" << i.pa << ", b=" << i.pb << "}";
        break;
      case InstrKind::Binary: os << r(i.dst) << " = " << kBinaryNames[i.code] << " " << r(i.a) << ", " << r(i.b); break;
      case InstrKind::Compare: os << r(i.dst) << " = " << kCompareNames[i.code] << " " << r(i.a) << ", " << r(i.b); break;
      case InstrKind::Logical: os << r(i.dst) << " = " << kLogicalNames[i.code] << " " << r(i.a) << ", " << r(i.b); break;
      case InstrKind::Predicate: os << r(i.dst) << " = " << kPredicateNames[i.code] << " " << r(i.a); break;
      case InstrKind::Where: os << r(i.dst) << " = where " << r(i.a) << ", " << r(i.b) << ", " << r(i.c); break;
      case InstrKind::Clamp: os << r(i.dst) << " = clamp " << r(i.a) << ", " << r(i.b) << ", " << r(i.c); break;
      case InstrKind::Lerp: os << r(i.dst) << " = lerp " << r(i.a) << ", " << r(i.b) << ", " << r(i.c); break;
      case InstrKind::Store: os << "store out" << i.slot << " (" << dtype_name(outputs[i.slot]) << ") = " << r(i.a); break;
      case InstrKind::Reduce: os << "acc" << i.slot << " " << kReduceNames[i.code] << "= " << r(i.a); break;
      case InstrKind::Result: os << r(i.dst) << " = result acc" << i.slot; break;
      case InstrKind::Splat: os << r(i.dst) << " = splat " << r(i.a); break;
    }
    os << "\n";
  }
  return os.str();
}

}  // namespace spore::codegen
