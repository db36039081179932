// SPDX-License-Identifier: Apache-2.0
// ONNX export of control flow (the inverse of ops_control_flow.cc's import):
//   if    -> If: the branches capture the node's operands from the outer scope by name.
//   switch -> nested Ifs over index <= k (the index is clamped, as the IR's switch does).
//   while -> Loop with no trip limit: each trip tests the carries and runs the body under an If.
//   scan  -> Scan: carries as state variables, xs as scan inputs; `reverse` walks the inputs and
//            writes the outputs from the end (ONNX's directions 1), so ys stay indexed by position.
// Sub-graphs are written with the same export table, so nested control flow and every exported
// primitive work inside them. A while built for reverse mode (stacked residuals) is a training
// graph and is refused.
#include "io/onnx/export_context.h"
#include "transforms/control_flow.h"

namespace spore::io::onnx_detail {
namespace {

using transforms::ControlFlowAttrs;

// Writes `body` into `gp`: its inputs are the existing names `inputs` (outer-scope values or
// gp's declared inputs). Returns the names of its outputs in `c`'s graph (no Identity).
std::vector<std::string> write_subgraph(const ExportContext& parent, const ir::Graph& body, onnx::GraphProto& gp,
                                     const std::vector<std::string>& inputs) {
  ExportContext c(gp, body, parent);
  for (size_t k = 0; k < inputs.size(); ++k) c.bind({ir::ValueRef::kParam, static_cast<int32_t>(k)}, inputs[k]);
  const auto& table = export_table();
  for (size_t k = 0; k < body.nodes().size(); ++k) {
    const ir::Node& n = *body.nodes()[k];
    c.begin(n, static_cast<int32_t>(k));
    table.at(n.op())(c);
  }
  std::vector<std::string> outs;
  for (const auto& o : body.outputs()) {
    const std::string* s = c.name_of(o.value);
    SPORE_CHECK(s != nullptr, "[export_onnx] a sub-graph output of '", parent.where(), "' has no ONNX equivalent");
    outs.push_back(*s);
  }
  return outs;
}

// Declares `name` of type `t` as an input of `gp`.
void declare_input(onnx::GraphProto& gp, const std::string& name, const ir::Type& t) {
  auto* v = gp.add_input();
  v->set_name(name);
  set_value_type(*v, t, "sub-graph input '" + name + "'");
}

// Makes `src` an output of `gp` under a fresh name (an ONNX graph's outputs are its own values,
// never an input or an outer-scope name passed through).
void declare_output(ExportContext& c, onnx::GraphProto& gp, const std::string& src, const ir::Type& t,
                    const std::string& what) {
  const std::string name = c.tmp(what);
  auto* n = gp.add_node();
  n->set_name(name + "/Identity");
  n->set_op_type("Identity");
  n->add_input(src);
  n->add_output(name);
  auto* v = gp.add_output();
  v->set_name(name);
  set_value_type(*v, t, "sub-graph output '" + name + "'");
}

onnx::GraphProto& graph_attr(onnx::NodeProto& n, const std::string& name, const std::string& graph_name) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(graph_name);
  return *a->mutable_g();
}

std::vector<std::string> operand_names(const ExportContext& c, size_t first) {
  std::vector<std::string> v;
  for (size_t i = first; i < c.num_inputs(); ++i) v.push_back(c.in(i));
  return v;
}

void export_if(ExportContext& c) {
  const auto& g = c.node().subgraphs();
  SPORE_CHECK(g.size() == 2, "[export_onnx] ", c.where(), " has ", g.size(), " branches; expected 2");
  const std::vector<std::string> operands = operand_names(c, 1);
  std::vector<std::string> outs;
  for (size_t i = 0; i < c.node().outputs().size(); ++i) outs.push_back(c.out(i));
  onnx::NodeProto& n = c.add("If", {c.in(0)}, outs);
  const char* names[] = {"then_branch", "else_branch"};
  for (size_t b = 0; b < 2; ++b) {
    onnx::GraphProto& gp = graph_attr(n, names[b], c.tmp(b ? "else" : "then"));
    const auto results = write_subgraph(c, *g[b], gp, operands);
    for (size_t j = 0; j < results.size(); ++j)
      declare_output(c, gp, results[j], c.node().outputs()[j], std::string(b ? "else" : "then") + "/out_" + std::to_string(j));
  }
}

// switch (index clamped to the branches) -> nested Ifs: index <= 0 ? b0 : (index <= 1 ? b1 :
// ... b_last); the tests run in the outer graph, each inner If reads its own from there.
void export_switch(ExportContext& c) {
  const auto& g = c.node().subgraphs();
  const size_t n = g.size(), nout = c.node().outputs().size();
  const std::vector<std::string> operands = operand_names(c, 1);
  std::vector<std::string> outs;
  if (n == 1) {
    const auto results = write_subgraph(c, *g[0], c.graph(), operands);
    for (size_t j = 0; j < nout; ++j) c.alias(j, results[j]);
    return;
  }
  std::vector<std::string> tests;
  for (size_t k = 0; k + 1 < n; ++k) {
    const std::string b = c.scalar(static_cast<double>(k), c.in_type(0).dtype, "bound_" + std::to_string(k));
    tests.push_back(c.op("LessOrEqual", {c.in(0), b}, "case_" + std::to_string(k)));
  }
  for (size_t j = 0; j < nout; ++j) outs.push_back(c.out(j));
  onnx::NodeProto* level = &c.add("If", {tests[0]}, outs);
  auto write_branch = [&](onnx::GraphProto& gp, size_t k) {
    const auto results = write_subgraph(c, *g[k], gp, operands);
    for (size_t j = 0; j < nout; ++j)
      declare_output(c, gp, results[j], c.node().outputs()[j], "branch_" + std::to_string(k) + "/out_" + std::to_string(j));
  };
  for (size_t k = 0; k + 1 < n; ++k) {
    write_branch(graph_attr(*level, "then_branch", c.tmp("branch_" + std::to_string(k))), k);
    onnx::GraphProto& rest = graph_attr(*level, "else_branch", c.tmp("after_" + std::to_string(k)));
    if (k + 2 == n) {
      write_branch(rest, n - 1);
      break;
    }
    level = rest.add_node();
    level->set_name(c.tmp("switch_" + std::to_string(k + 1)));
    level->set_op_type("If");
    level->add_input(tests[k + 1]);
    for (size_t j = 0; j < nout; ++j) {
      const std::string o = c.tmp("after_" + std::to_string(k) + "/out_" + std::to_string(j));
      level->add_output(o);
      auto* v = rest.add_output();
      v->set_name(o);
      set_value_type(*v, c.node().outputs()[j], "sub-graph output '" + o + "'");
    }
  }
}

// A rank-0 tensor type (a Loop body's iteration number and condition).
ir::TensorType scalar_type(ir::DType t) { return ir::TensorType{t, false, {}, ""}; }

// while -> Loop with neither a trip limit nor a first condition, each sub-graph written once
// (written twice, a while nested in a condition would double the file per level): every trip
// tests the carries, runs the body under an If when the test holds, and returns the test as the
// loop's condition, so the last trip (test false) hands the carries on unchanged.
void export_while(ExportContext& c) {
  const auto& a = c.attrs<ControlFlowAttrs>();
  if (a.stack)
    c.fail("is a while loop built for reverse mode: it stacks its residuals over a run-time number of trips for the "
           "backward pass, which an inference graph cannot hold; export the forward function (gradients of if and "
           "scan export)");
  const auto& g = c.node().subgraphs();  // {cond, body}, as the verifier guarantees
  SPORE_CHECK(g.size() == 2, "[export_onnx] ", c.where(), " has ", g.size(), " sub-graphs; expected cond and body");
  const std::vector<std::string> init = operand_names(c, 0);
  std::vector<std::string> outs;
  for (size_t i = 0; i < c.node().outputs().size(); ++i) outs.push_back(c.out(i));
  std::vector<std::string> loop_in{"", ""};
  loop_in.insert(loop_in.end(), init.begin(), init.end());
  onnx::NodeProto& n = c.add("Loop", loop_in, outs);
  onnx::GraphProto& gp = graph_attr(n, "body", c.tmp("body"));
  declare_input(gp, c.tmp("body/iteration"), scalar_type(ir::DType::Int64));
  declare_input(gp, c.tmp("body/cond_in"), scalar_type(ir::DType::Bool));
  std::vector<std::string> carries;
  for (size_t k = 0; k < init.size(); ++k) {
    carries.push_back(c.tmp("body/carry_" + std::to_string(k)));
    declare_input(gp, carries.back(), c.in_type(k));
  }
  const std::string test = write_subgraph(c, *g[0], gp, carries).at(0);
  std::vector<std::string> next;
  for (size_t k = 0; k < init.size(); ++k) next.push_back(c.tmp("body/next_" + std::to_string(k)));
  onnx::NodeProto* step = gp.add_node();
  step->set_name(c.tmp("body/step"));
  step->set_op_type("If");
  step->add_input(test);
  for (const auto& s : next) step->add_output(s);
  onnx::GraphProto& run = graph_attr(*step, "then_branch", c.tmp("body/run"));
  const std::vector<std::string> ran = write_subgraph(c, *g[1], run, carries);
  onnx::GraphProto& stay = graph_attr(*step, "else_branch", c.tmp("body/stay"));
  for (size_t k = 0; k < init.size(); ++k) {
    declare_output(c, run, ran[k], c.in_type(k), "body/ran_" + std::to_string(k));
    declare_output(c, stay, carries[k], c.in_type(k), "body/stayed_" + std::to_string(k));
  }
  declare_output(c, gp, test, scalar_type(ir::DType::Bool), "body/cond_out");
  for (size_t k = 0; k < next.size(); ++k) declare_output(c, gp, next[k], c.in_type(k), "body/out_" + std::to_string(k));
}

void export_scan(ExportContext& c) {
  const auto& a = c.attrs<ControlFlowAttrs>();
  const ir::Graph& body = *c.node().subgraphs().at(0);
  const size_t carries = static_cast<size_t>(a.num_carry), xs = c.num_inputs() - carries;
  if (xs == 0)
    c.fail("scans no sequence (a count of steps alone); ONNX's Scan needs at least one scanned input: scan over "
           "arange(steps) instead");
  // ONNX's Scan runs the xs' leading size; the IR's `length`, when fixed, must be that size.
  for (size_t k = carries; k < c.num_inputs(); ++k) {
    const auto& shape = c.in_type(k).shape;
    if (a.length >= 0 && (shape.empty() || !shape[0].is_const() || shape[0].value() != a.length))
      c.fail("runs " + std::to_string(a.length) + " steps over a sequence whose leading size is " +
             (shape.empty() ? std::string("missing") : shape[0].str()) + "; ONNX's Scan runs the whole sequence");
  }
  std::vector<std::string> outs;
  for (size_t i = 0; i < c.node().outputs().size(); ++i) outs.push_back(c.out(i));
  onnx::NodeProto& n = c.add("Scan", operand_names(c, 0), outs);
  attr_i(n, "num_scan_inputs", static_cast<int64_t>(xs));
  const size_t ys = body.outputs().size() - carries;
  if (a.reverse) {
    attr_ints(n, "scan_input_directions", std::vector<int64_t>(xs, 1));
    if (ys > 0) attr_ints(n, "scan_output_directions", std::vector<int64_t>(ys, 1));
  }
  onnx::GraphProto& gp = graph_attr(n, "body", c.tmp("body"));
  std::vector<std::string> in;
  for (size_t k = 0; k < body.params().size(); ++k) {
    in.push_back(c.tmp("body/in_" + std::to_string(k)));
    declare_input(gp, in.back(), body.params()[k].type);
  }
  const std::vector<std::string> results = write_subgraph(c, body, gp, in);
  for (size_t j = 0; j < results.size(); ++j)
    declare_output(c, gp, results[j], body.type_of(body.outputs()[j].value), "body/out_" + std::to_string(j));
}

}  // namespace

void add_control_flow_exports(ExportTable& t) {
  t["if"] = &export_if;
  t["switch"] = &export_switch;
  t["while"] = &export_while;
  t["scan"] = &export_scan;
}

}  // namespace spore::io::onnx_detail
