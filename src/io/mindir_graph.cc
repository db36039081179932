// SPDX-License-Identifier: Apache-2.0
#include "io/mindir_graph.h"

#include <string>

#include "ir/error.h"
#include "ir/verifier.h"

namespace spore::io {
namespace {

// Bounds recursion so a hostile file cannot overflow the stack (protobuf bounds its own
// message nesting at 100; these are tighter and say what nested).
constexpr int kMaxGraphDepth = 64;
constexpr int kMaxDimDepth = 64;

void dim_to_proto(const ir::Dim& d, mindir::Dim* out) {
  switch (d.kind()) {
    case ir::Dim::Kind::Const:
      out->set_kind(mindir::Dim::CONST);
      out->set_value(d.value());
      return;
    case ir::Dim::Kind::Symbol:
      out->set_kind(mindir::Dim::SYMBOL);
      out->set_symbol(d.name());
      return;
    case ir::Dim::Kind::Add: out->set_kind(mindir::Dim::ADD); break;
    case ir::Dim::Kind::Sub: out->set_kind(mindir::Dim::SUB); break;
    case ir::Dim::Kind::Mul: out->set_kind(mindir::Dim::MUL); break;
    case ir::Dim::Kind::FloorDiv: out->set_kind(mindir::Dim::FLOOR_DIV); break;
  }
  dim_to_proto(d.lhs(), out->mutable_lhs());
  dim_to_proto(d.rhs(), out->mutable_rhs());
}

ir::Dim dim_from_proto(const mindir::Dim& p, int depth) {
  if (depth > kMaxDimDepth) throw ir::Error("a dimension expression nests too deeply");
  switch (p.kind()) {
    case mindir::Dim::CONST:
      if (p.value() < 0) throw ir::Error(ir::cat("a dimension is negative (", p.value(), ")"));
      return ir::Dim(p.value());
    case mindir::Dim::SYMBOL:
      if (!ir::is_identifier(p.symbol())) throw ir::Error(ir::cat("dimension symbol '", p.symbol(), "' is not an identifier"));
      return ir::Dim::symbol(p.symbol());
    case mindir::Dim::ADD:
    case mindir::Dim::SUB:
    case mindir::Dim::MUL:
    case mindir::Dim::FLOOR_DIV: {
      if (!p.has_lhs() || !p.has_rhs()) throw ir::Error("a dimension expression lacks an operand");
      const ir::Dim::Kind k = p.kind() == mindir::Dim::ADD   ? ir::Dim::Kind::Add
                              : p.kind() == mindir::Dim::SUB ? ir::Dim::Kind::Sub
                              : p.kind() == mindir::Dim::MUL ? ir::Dim::Kind::Mul
                                                             : ir::Dim::Kind::FloorDiv;
      return ir::Dim::expr(k, dim_from_proto(p.lhs(), depth + 1), dim_from_proto(p.rhs(), depth + 1));
    }
    default: throw ir::Error(ir::cat("unknown dimension kind ", static_cast<int>(p.kind())));
  }
}

ir::Role role_from_name(const std::string& r) {
  for (ir::Role x : {ir::Role::Data, ir::Role::Parameter, ir::Role::Buffer, ir::Role::Constant})
    if (r == ir::role_name(x)) return x;
  throw ir::Error(ir::cat("unknown input role '", r, "'; expected data, parameter, buffer or constant"));
}

void check_ref(const mindir::ValueRef& r, size_t num_params, const std::vector<ir::NodePtr>& nodes,
               const std::string& what) {
  bool ok;
  if (r.node() == ir::ValueRef::kParam) {
    ok = r.index() >= 0 && static_cast<size_t>(r.index()) < num_params;
  } else {
    ok = r.node() >= 0 && static_cast<size_t>(r.node()) < nodes.size() && r.index() >= 0 &&
         static_cast<size_t>(r.index()) < nodes[static_cast<size_t>(r.node())]->outputs().size();
  }
  if (!ok)
    throw ir::Error(ir::cat(what, " refers to value (node ", r.node(), ", output ", r.index(),
                            "), which is not defined before it"));
}

ir::GraphPtr graph_from(const mindir::Graph& p, int depth) {
  if (depth > kMaxGraphDepth) throw ir::Error("sub-graphs nest too deeply");
  if (!ir::is_identifier(p.name())) throw ir::Error(ir::cat("graph name '", p.name(), "' is not an identifier"));
  const std::string where = ir::cat("graph @", p.name());
  std::vector<ir::Param> params;
  params.reserve(static_cast<size_t>(p.params_size()));
  for (const auto& pp : p.params()) params.push_back({type_from_proto(pp.type()), role_from_name(pp.role())});
  std::vector<ir::NodePtr> nodes;
  nodes.reserve(static_cast<size_t>(p.nodes_size()));
  for (int k = 0; k < p.nodes_size(); ++k) {
    const mindir::Node& n = p.nodes(k);
    const std::string at = ir::cat(where, ", node ", k, " (", n.op(), ")");
    try {
      const ir::OpInfo* info = ir::find_op(n.op());
      if (info == nullptr) throw ir::Error(ir::cat("unknown op '", n.op(), "'; this build has no such primitive"));
      const uint32_t known = op_schema_version(n.op());
      if (n.op_version() == 0 || n.op_version() > known)
        throw ir::Error(ir::cat("op '", n.op(), "' has schema version ", n.op_version(), " but this build reads versions 1 to ",
                                known, "; load the file with a newer Spore"));
      std::shared_ptr<const void> attrs;
      if (n.has_attrs()) {
        if (!info->parse_attrs) throw ir::Error(ir::cat("op '", n.op(), "' takes no attributes"));
        try {
          attrs = info->parse_attrs(n.attrs());
        } catch (const ir::Error&) {
          throw;
        } catch (const std::exception& e) {
          throw ir::Error(ir::cat("bad attributes {", n.attrs(), "}: ", e.what()));
        }
        if (!attrs) throw ir::Error(ir::cat("no attributes parsed from {", n.attrs(), "}"));
      }
      std::vector<ir::ValueRef> ins;
      ins.reserve(static_cast<size_t>(n.inputs_size()));
      for (int i = 0; i < n.inputs_size(); ++i) {
        check_ref(n.inputs(i), params.size(), nodes, ir::cat("input ", i));
        ins.push_back({n.inputs(i).node(), n.inputs(i).index()});
      }
      std::vector<ir::Type> outs;
      outs.reserve(static_cast<size_t>(n.outputs_size()));
      for (const auto& t : n.outputs()) outs.push_back(type_from_proto(t));
      if (outs.empty()) throw ir::Error("a node must have at least one output");
      std::vector<ir::GraphPtr> subs;
      for (const auto& sg : n.subgraphs()) {
        subs.push_back(graph_from(sg, depth + 1));
        ir::verify_nested(*subs.back());
      }
      nodes.push_back(std::make_shared<const ir::Node>(n.op(), std::move(attrs), std::move(ins), std::move(outs),
                                                       n.scope(), std::move(subs)));
    } catch (const ir::Error& e) {
      throw ir::Error(ir::cat(at, ": ", e.what()));
    }
  }
  std::vector<ir::Output> outputs;
  outputs.reserve(static_cast<size_t>(p.outputs_size()));
  for (int i = 0; i < p.outputs_size(); ++i) {
    const auto& o = p.outputs(i);
    check_ref(o.value(), params.size(), nodes, ir::cat(where, ", output ", i));
    ir::Output out{{o.value().node(), o.value().index()}, std::nullopt};
    if (o.has_updates()) {
      if (o.updates() < 0 || static_cast<size_t>(o.updates()) >= params.size())
        throw ir::Error(ir::cat(where, ", output ", i, " updates input ", o.updates(), ", but the graph has ",
                                params.size(), " inputs"));
      out.updates = o.updates();
    }
    outputs.push_back(out);
  }
  return std::make_shared<const ir::Graph>(p.name(), std::move(params), std::move(nodes), std::move(outputs));
}

}  // namespace

uint32_t op_schema_version(std::string_view) { return 1; }

void type_to_proto(const ir::Type& t, mindir::Type* out) {
  if (ir::is_token(t)) {
    out->set_token(true);
    return;
  }
  const auto& tt = std::get<ir::TensorType>(t);
  out->set_dtype(ir::dtype_name(tt.dtype));
  out->set_weak(tt.weak);
  for (const ir::Dim& d : tt.shape) dim_to_proto(d, out->add_shape());
  out->set_layout(tt.layout);
}

ir::Type type_from_proto(const mindir::Type& p) {
  if (p.token()) return ir::TokenType{};
  auto dt = ir::dtype_from_name(p.dtype());
  if (!dt) throw ir::Error(ir::cat("unknown dtype '", p.dtype(), "'"));
  ir::TensorType t{*dt, p.weak(), {}, {}};
  t.shape.reserve(static_cast<size_t>(p.shape_size()));
  for (const auto& d : p.shape()) t.shape.push_back(dim_from_proto(d, 0));
  if (!p.layout().empty() && !ir::is_identifier(p.layout()))
    throw ir::Error(ir::cat("layout '", p.layout(), "' is not an identifier"));
  t.layout = p.layout();
  return t;
}

void graph_to_proto(const ir::Graph& g, mindir::Graph* out) {
  out->set_name(g.name());
  for (const ir::Param& p : g.params()) {
    auto* pp = out->add_params();
    type_to_proto(p.type, pp->mutable_type());
    pp->set_role(ir::role_name(p.role));
  }
  for (const auto& np : g.nodes()) {
    const ir::Node& n = *np;
    auto* pn = out->add_nodes();
    pn->set_op(n.op());
    pn->set_op_version(op_schema_version(n.op()));
    if (n.attrs() != nullptr) {
      pn->set_has_attrs(true);
      pn->set_attrs(n.info().print_attrs(n.attrs()));
    }
    for (const ir::ValueRef& v : n.inputs()) {
      auto* r = pn->add_inputs();
      r->set_node(v.node);
      r->set_index(v.index);
    }
    for (const ir::Type& t : n.outputs()) type_to_proto(t, pn->add_outputs());
    pn->set_scope(n.scope());
    for (const auto& sg : n.subgraphs()) graph_to_proto(*sg, pn->add_subgraphs());
  }
  for (const ir::Output& o : g.outputs()) {
    auto* po = out->add_outputs();
    po->mutable_value()->set_node(o.value.node);
    po->mutable_value()->set_index(o.value.index);
    if (o.updates) {
      po->set_has_updates(true);
      po->set_updates(*o.updates);
    }
  }
}

ir::GraphPtr graph_from_proto(const mindir::Graph& p) {
  ir::GraphPtr g = graph_from(p, 0);
  ir::verify(*g);
  return g;
}

}  // namespace spore::io
