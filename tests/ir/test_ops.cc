// SPDX-License-Identifier: Apache-2.0
#include "test_ops.h"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "ir/error.h"
#include "ir/float_text.h"

namespace spore::ir::test_ops {
namespace {

void same_as_input(const NodeSig& s, size_t arity) {
  if (s.inputs.size() != arity) throw Error(cat("[", s.op, "] takes ", arity, " inputs, got ", s.inputs.size()));
  for (size_t i = 1; i < arity; ++i)
    if (!(s.inputs[i] == s.inputs[0]))
      throw Error(cat("[", s.op, "] input types differ: ", type_str(s.inputs[0]), " vs ", type_str(s.inputs[i]),
                      "; cast or reshape one of them"));
  if (s.outputs.size() != 1 || !(s.outputs[0] == s.inputs[0]))
    throw Error(cat("[", s.op, "] output must have the input type ", type_str(s.inputs[0])));
}

std::string types_str(std::span<const Type> ts) {
  std::string s = "(";
  for (size_t i = 0; i < ts.size(); ++i) s += cat(i ? ", " : "", type_str(ts[i]));
  s += ")";
  return s;
}

// Sub-graph `g` must take `ins` and return `outs`: the closed-sub-graph contract of control flow.
void signature(const NodeSig& s, const Graph& g, std::span<const Type> ins, std::span<const Type> outs) {
  std::vector<Type> p, o;
  for (const auto& x : g.params()) p.push_back(x.type);
  for (const auto& x : g.outputs()) o.push_back(g.defines(x.value) ? g.type_of(x.value) : Type{TokenType{}});
  if (!std::equal(p.begin(), p.end(), ins.begin(), ins.end()))
    throw Error(cat("[", s.op, "] sub-graph @", g.name(), " takes ", types_str(p), " but the node passes ", types_str(ins)));
  if (!std::equal(o.begin(), o.end(), outs.begin(), outs.end()))
    throw Error(cat("[", s.op, "] sub-graph @", g.name(), " returns ", types_str(o), " but the node expects ", types_str(outs)));
}

void check_if(const NodeSig& s) {
  if (s.subgraphs.size() != 2 || s.inputs.empty()) throw Error("[if] needs a predicate and two branches");
  if (!(s.inputs[0] == tt(DType::Bool, {}))) throw Error(cat("[if] predicate is ", type_str(s.inputs[0]), ", not bool[]"));
  for (const auto& g : s.subgraphs) signature(s, *g, s.inputs.subspan(1), s.outputs);
}

void check_while(const NodeSig& s) {
  if (s.subgraphs.size() != 2) throw Error("[while] needs a cond and a body");
  Type pred = tt(DType::Bool, {});
  signature(s, *s.subgraphs[0], s.inputs, std::span<const Type>(&pred, 1));
  signature(s, *s.subgraphs[1], s.inputs, s.inputs);
  if (!std::equal(s.outputs.begin(), s.outputs.end(), s.inputs.begin(), s.inputs.end()))
    throw Error("[while] outputs must have the carried types");
}

}  // namespace

void register_test_ops() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_op("tadd", {Effect::Pure, {}, {}, {}, [](const NodeSig& s) { same_as_input(s, 2); }});
    OpInfo sc{Effect::Pure, {}, {}, {}, [](const NodeSig& s) { same_as_input(s, 1); }};
    sc.print_attrs = [](const void* a) { return cat("alpha=", format_float(static_cast<const ScaleAttrs*>(a)->alpha)); };
    sc.parse_attrs = [](std::string_view t) -> std::shared_ptr<const void> {
      if (t.substr(0, 6) != "alpha=") throw Error(cat("[tscale] attributes '", t, "' lack alpha="));
      return scale(parse_float(t.substr(6)));
    };
    sc.equal_attrs = [](const void* a, const void* b) {
      // Bitwise, so that -0.0 and nan attributes compare as what was printed.
      double x = static_cast<const ScaleAttrs*>(a)->alpha, y = static_cast<const ScaleAttrs*>(b)->alpha;
      return std::memcmp(&x, &y, sizeof x) == 0;
    };
    register_op("tscale", sc);
    register_op("tuniform", {Effect::Random, {}, {}, {}, {}});
    register_op("print", {Effect::IO, {}, {}, {}, {}});
    register_op("tif", {Effect::Pure, {}, {}, {}, check_if});
    register_op("twhile", {Effect::Pure, {}, {}, {}, check_while});
  });
}

GraphPtr sample_graph() {
  register_test_ops();
  Dim n = Dim::symbol("n"), m = Dim::symbol("batch_2");
  Type x_t = tt(DType::Float32, {n, 4});
  GraphBuilder b("main");
  ValueRef x = b.param(x_t);
  ValueRef w = b.param(x_t, Role::Parameter);
  ValueRef st = b.param(tt(DType::Float64, {floordiv(n, 2) - 1, m * 3 + n}), Role::Buffer);
  ValueRef key = b.param(tt(DType::UInt8, {16}));
  ValueRef tok = b.param(TokenType{});
  ValueRef pred = b.param(tt(DType::Bool, {}));
  b.param(TensorType{DType::Float16, false, {2, 3}, "nhwc"}, Role::Constant);
  b.param(tt(DType::BFloat16, {}, true));
  b.param(tt(DType::Int32, {0}));
  const std::string scope = "encoder/layers.3/attn";
  ValueRef h = b.add1("tadd", nullptr, {x, w}, x_t, scope);
  ValueRef s = b.add1("tscale", scale(0.1), {h}, x_t, scope);
  ValueRef u = b.add1("tuniform", nullptr, {key}, tt(DType::Float32, {n * 4}));
  ValueRef t2 = b.add("print", nullptr, {tok, s}, {TokenType{}})[0];

  GraphBuilder then_b("then_branch"), else_b("else_branch");
  ValueRef a0 = then_b.param(x_t), a1 = then_b.param(x_t);
  then_b.output(then_b.add1("tadd", nullptr, {a0, a1}, x_t, "head"));
  ValueRef e0 = else_b.param(x_t);
  else_b.param(x_t);
  else_b.output(else_b.add1("tscale", scale(-2.5e-300), {e0}, x_t));
  ValueRef r = b.add1("tif", nullptr, {pred, h, s}, x_t, "cond", {then_b.build(), else_b.build()});

  GraphBuilder cond_b("cond"), body_b("body");
  ValueRef c0 = cond_b.param(tt(DType::Bool, {}));
  cond_b.param(x_t);
  cond_b.output(c0);
  ValueRef d0 = body_b.param(tt(DType::Bool, {})), d1 = body_b.param(x_t);
  body_b.output(d0);
  body_b.output(body_b.add1("tscale", scale(1.0 / 3.0), {d1}, x_t));
  auto loop = b.add("twhile", nullptr, {pred, r}, {tt(DType::Bool, {}), x_t}, "", {cond_b.build(), body_b.build()});

  ValueRef st2 = b.add1("tadd", nullptr, {st, st}, b.type_of(st), "bn");
  ValueRef w2 = b.add1("tscale", scale(0.5), {w}, x_t, "optim");
  b.output(loop[1]);
  b.output(u);
  b.output(t2);
  b.output(st2, 2);
  b.output(w2, 1);
  return b.build();
}

}  // namespace spore::ir::test_ops
