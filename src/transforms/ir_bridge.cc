// SPDX-License-Identifier: Apache-2.0
#include "transforms/ir_bridge.h"

#include <mutex>

#include "autodiff/frames.h"
#include "core/dim_expr.h"
#include "ir/error.h"
#include "ir/op_info.h"
#include "spore/ops.h"
#include "transforms/control_flow.h"

namespace spore::transforms {

ir::DType to_ir(DType t) { return static_cast<ir::DType>(static_cast<int>(t)); }
DType from_ir(ir::DType t) { return static_cast<DType>(static_cast<int>(t)); }

namespace {

// A symbolic size as an IR dimension: symbols by name, expressions (batch * 4) as trees.
ir::Dim ir_dim_of(Dim d) {
  if (!is_symbolic(d)) return ir::Dim(d);
  char op = 0;
  Dim a = 0, b = 0;
  std::string name;
  SPORE_CHECK(dim_parts(d, op, a, b, name), "[jit] the size ", d, " is neither a size nor a symbolic dimension");
  switch (op) {
    case 's': return ir::Dim::symbol(name);
    case '+': return ir::Dim::expr(ir::Dim::Kind::Add, ir_dim_of(a), ir_dim_of(b));
    case '-': return ir::Dim::expr(ir::Dim::Kind::Sub, ir_dim_of(a), ir_dim_of(b));
    case '*': return ir::Dim::expr(ir::Dim::Kind::Mul, ir_dim_of(a), ir_dim_of(b));
    default: return ir::Dim::expr(ir::Dim::Kind::FloorDiv, ir_dim_of(a), ir_dim_of(b));
  }
}

Dim dim_of(const ir::Dim& d) {
  switch (d.kind()) {
    case ir::Dim::Kind::Const: return d.value();
    case ir::Dim::Kind::Symbol: return symbol_named(d.name());
    case ir::Dim::Kind::Add: return dim_add(dim_of(d.lhs()), dim_of(d.rhs()));
    case ir::Dim::Kind::Sub: return dim_sub(dim_of(d.lhs()), dim_of(d.rhs()));
    case ir::Dim::Kind::Mul: return dim_mul(dim_of(d.lhs()), dim_of(d.rhs()));
    default: return dim_floordiv(dim_of(d.lhs()), dim_of(d.rhs()));
  }
}

}  // namespace

ir::TensorType to_ir(const TensorType& t) {
  ir::TensorType r;
  r.dtype = to_ir(t.dtype);
  r.weak = t.weak;
  for (Dim d : t.shape) r.shape.push_back(ir_dim_of(d));
  return r;
}

TensorType from_ir(const ir::TensorType& t) {
  TensorType r;
  r.dtype = from_ir(t.dtype);
  r.weak = t.weak;
  for (const ir::Dim& d : t.shape) r.shape.push_back(dim_of(d));
  return r;
}

ConstantAttrs constant_of(const Tensor& t) {
  ConstantAttrs c;
  c.dtype = t.dtype();
  c.weak = t.weak();
  if (is_floating(t.dtype())) c.f = t.item<double>();
  else c.i = t.item<int64_t>();
  return c;
}

Tensor tensor_of(const ConstantAttrs& c) {
  // A literal stays a concrete weak 0-d tensor even while a trace is open (the interpreter
  // running a graph inside jit or a derivative trace): the trace records it as a constant again,
  // weak type included, not as a `fill` node of a strong type.
  autodiff::SuspendAbove no_frames(0);
  Tensor t = is_floating(c.dtype) ? ops::scalar_tensor(c.f, c.dtype) : ops::scalar_tensor(c.i, c.dtype);
  t.impl()->weak = c.weak;
  return t;
}

namespace {

ir::Effect effect_of(Effect e) { return static_cast<ir::Effect>(static_cast<int>(e)); }

// A node's types checked by the primitive's own inference: the IR verifies exactly what
// dispatch would compute.
void check_with_infer(const Primitive& p, const ir::NodeSig& sig) {
  if (p.num_inputs >= 0 && static_cast<size_t>(p.num_inputs) != sig.inputs.size())
    throw ir::Error("[" + p.name + "] takes " + std::to_string(p.num_inputs) + " inputs, the node has " +
                    std::to_string(sig.inputs.size()));
  std::vector<TensorType> in;
  for (const ir::Type& t : sig.inputs) {
    if (ir::is_token(t)) throw ir::Error("[" + p.name + "] takes no token");
    in.push_back(from_ir(std::get<ir::TensorType>(t)));
  }
  OutTypes out;
  try {
    if (is_control_flow(p)) {
      std::vector<ir::GraphPtr> graphs(sig.subgraphs.begin(), sig.subgraphs.end());
      auto a = attrs_with_subgraphs(p, sig.attrs, graphs);
      auto types = control_flow_types(p, *static_cast<const ControlFlowAttrs*>(a.get()), in);
      if (types.size() != sig.outputs.size())
        throw ir::Error("[" + p.name + "] has " + std::to_string(types.size()) + " outputs, the node declares " +
                        std::to_string(sig.outputs.size()));
      for (size_t i = 0; i < types.size(); ++i)
        if (!(ir::Type(to_ir(types[i])) == sig.outputs[i]))
          throw ir::Error("[" + p.name + "] output " + std::to_string(i) + " is " + ir::type_str(to_ir(types[i])) +
                          ", the node declares " + ir::type_str(sig.outputs[i]));
      return;
    }
    p.infer(sig.attrs, in, out);
  } catch (const Error& e) {
    throw ir::Error(e.what());
  }
  if (static_cast<size_t>(out.n) != sig.outputs.size())
    throw ir::Error("[" + p.name + "] has " + std::to_string(out.n) + " outputs, the node declares " +
                    std::to_string(sig.outputs.size()));
  for (int i = 0; i < out.n; ++i) {
    const ir::Type want = to_ir(out.t[i]);
    if (!(want == sig.outputs[i]))
      throw ir::Error("[" + p.name + "] output " + std::to_string(i) + " is " + ir::type_str(want) +
                      ", the node declares " + ir::type_str(sig.outputs[i]));
  }
}

}  // namespace

void register_ir_ops() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const Primitive* pp : all_primitives()) {
      const Primitive& p = *pp;
      ir::OpInfo info;
      info.effect = effect_of(p.effect);
      // Primitives without fields (NoAttrs) print as empty text; the IR still carries the struct.
      info.print_attrs = [&p](const void* a) { return p.attrs.str(a); };
      info.parse_attrs = [&p](std::string_view text) {
        try {
          return p.attrs.parse(text);
        } catch (const Error& e) {
          throw ir::Error(e.what());
        }
      };
      info.equal_attrs = [&p](const void* a, const void* b) { return p.attrs.equal(a, b); };
      info.check = [&p](const ir::NodeSig& sig) { check_with_infer(p, sig); };
      ir::register_op(p.name, std::move(info));
    }
    ir::OpInfo c;
    c.print_attrs = [](const void* a) { return attrs_str(*static_cast<const ConstantAttrs*>(a)); };
    c.parse_attrs = [](std::string_view text) -> std::shared_ptr<const void> {
      try {
        return std::make_shared<ConstantAttrs>(attrs_parse<ConstantAttrs>(text));
      } catch (const Error& e) {
        throw ir::Error(e.what());
      }
    };
    c.equal_attrs = [](const void* a, const void* b) {
      return attrs_equal(*static_cast<const ConstantAttrs*>(a), *static_cast<const ConstantAttrs*>(b));
    };
    c.check = [](const ir::NodeSig& sig) {
      const auto& a = *static_cast<const ConstantAttrs*>(sig.attrs);
      if (!sig.inputs.empty() || sig.outputs.size() != 1) throw ir::Error("[constant] takes no inputs and has one output");
      ir::TensorType want{to_ir(a.dtype), a.weak, {}, {}};
      if (!(ir::Type(want) == sig.outputs[0]))
        throw ir::Error("[constant] declares " + ir::type_str(sig.outputs[0]) + " for a " + ir::type_str(want) + " value");
    };
    ir::register_op(kConstantOp, std::move(c));
  });
}

}  // namespace spore::transforms
