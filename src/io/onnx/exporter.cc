// SPDX-License-Identifier: Apache-2.0
#include "io/onnx/exporter.h"

#include <span>
#include <sstream>

#include "io/onnx/export_context.h"
#include "io/tensor_section.h"
#include "transforms/control_flow.h"
#include "transforms/ir_bridge.h"

namespace spore::io {

namespace {

using onnx_detail::ExportContext;

constexpr int64_t kOpset = 17;
constexpr int64_t kIrVersion = 8;

// A training step writes its state (BatchNorm statistics, optimizer slots); ONNX graphs are pure.
void refuse_updates(const LoadedModel& m) {
  std::vector<std::string> written;
  for (const auto& o : m.graph->outputs())
    if (o.updates) {
      const size_t j = static_cast<size_t>(*o.updates);
      const size_t s = j >= m.num_data ? j - m.num_data : j;
      written.push_back(j >= m.num_data && s < m.state_names.size() ? m.state_names[s] : "input " + std::to_string(j));
    }
  if (written.empty()) return;
  std::ostringstream os;
  os << "[export_onnx] the graph updates " << written.size() << " state input(s) (";
  for (size_t k = 0; k < written.size() && k < 8; ++k) os << (k ? ", " : "") << '\'' << written[k] << '\'';
  if (written.size() > 8) os << ", ...";
  os << "), as a training step does; ONNX graphs cannot write state. Export an inference graph: put the model in "
        "eval mode (cell.eval()) and trace it without in-place updates";
  throw Error(os.str());
}

// The nodes whose primitive has no ONNX form, in `g` and its control flow's sub-graphs.
void find_unsupported(const ir::Graph& g, const std::string& where,
                      std::map<std::string, std::vector<std::string>>& missing) {
  const auto& table = onnx_detail::export_table();
  for (size_t k = 0; k < g.nodes().size(); ++k) {
    const ir::Node& n = *g.nodes()[k];
    const std::string at = n.scope().empty() ? where + "node " + std::to_string(k) : n.scope();
    if (!table.count(n.op())) {
      missing[n.op()].push_back(at);
    } else if (n.op() != "while" || !static_cast<const transforms::ControlFlowAttrs*>(n.attrs())->stack) {
      // An exported if/switch/while/scan writes its sub-graphs too (a reverse-mode while is
      // refused as a whole, with its own message).
      for (size_t b = 0; b < n.subgraphs().size(); ++b)
        find_unsupported(*n.subgraphs()[b], at + " (" + n.op() + ", sub-graph " + std::to_string(b) + ") > ", missing);
    }
  }
}

// Lists every node whose primitive has no ONNX form, all at once.
void refuse_unsupported(const ir::Graph& g) {
  std::map<std::string, std::vector<std::string>> missing;
  find_unsupported(g, "", missing);
  if (missing.empty()) return;
  std::ostringstream os;
  os << "[export_onnx] " << missing.size() << " primitive(s) have no ONNX (opset 17) export: ";
  bool first = true;
  for (const auto& [op, where] : missing) {
    os << (first ? "" : "; ") << op << " (at ";
    for (size_t i = 0; i < where.size() && i < 6; ++i) os << (i ? ", " : "") << '\'' << where[i] << '\'';
    if (where.size() > 6) os << ", ... " << where.size() - 6 << " more";
    os << ')';
    first = false;
  }
  throw Error(os.str());
}

std::string name_or(const std::vector<std::string>& names, size_t k, const std::string& def) {
  return k < names.size() && !names[k].empty() ? names[k] : def + std::to_string(k);
}

}  // namespace

std::string export_onnx_bytes(const LoadedModel& m) {
  SPORE_CHECK(m.graph != nullptr, "[export_onnx] the model has no graph");
  transforms::register_ir_ops();
  const ir::Graph& g = *m.graph;
  const size_t num_params = g.params().size();
  SPORE_CHECK(m.num_data <= num_params && m.state.size() == num_params - m.num_data, "[export_onnx] the model has ",
              num_params, " graph inputs, ", m.num_data, " data inputs and ", m.state.size(),
              " state tensors; data inputs plus state must equal the graph inputs");
  refuse_updates(m);
  refuse_unsupported(g);

  onnx::ModelProto model;
  model.set_ir_version(kIrVersion);
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOpset);
  auto meta = [&](const char* k, const char* def) {
    auto it = m.metadata.find(k);
    return it != m.metadata.end() && !it->second.empty() ? it->second : std::string(def);
  };
  model.set_producer_name(meta("producer", "spore"));
  model.set_producer_version(meta("producer_version", ""));
  for (const auto& [k, v] : m.metadata) {
    if (k == "format" || k == "producer" || k == "producer_version" || k == "opset" || k == "ir_version") continue;
    auto* p = model.add_metadata_props();
    p->set_key(k);
    p->set_value(v);
  }
  onnx::GraphProto& gp = *model.mutable_graph();
  gp.set_name(g.name());
  ExportContext c(gp, g);

  for (size_t k = 0; k < m.num_data; ++k) {
    const std::string name = name_or(m.input_names, k, "input_");
    c.reserve(name);
    c.bind({ir::ValueRef::kParam, static_cast<int32_t>(k)}, name);
    auto* v = gp.add_input();
    v->set_name(name);
    onnx_detail::set_value_type(*v, g.params()[k].type, "data input '" + name + "'");
  }
  for (size_t k = 0; k < m.state.size(); ++k) {
    const std::string name = name_or(m.state_names, k, "state_");
    const size_t p = m.num_data + k;
    const auto& want = std::get<ir::TensorType>(g.params()[p].type);
    const Tensor& t = m.state[k];
    SPORE_CHECK(t.defined() && transforms::to_ir(t.dtype()) == want.dtype && t.dim() == static_cast<int64_t>(want.shape.size()),
                "[export_onnx] state '", name, "' does not match its graph input type ", ir::type_str(g.params()[p].type));
    c.reserve(name);
    c.bind({ir::ValueRef::kParam, static_cast<int32_t>(p)}, name);
    c.initializer(t, name);
  }

  // Graph outputs keep their names: a node output named once directly, else through Identity.
  std::vector<std::string> out_names;
  std::vector<bool> via_identity;
  std::set<std::pair<int32_t, int32_t>> named;
  for (size_t j = 0; j < g.outputs().size(); ++j) {
    const std::string name = name_or(m.output_names, j, "output_");
    c.reserve(name);
    out_names.push_back(name);
    const ir::ValueRef v = g.outputs()[j].value;
    const bool direct = v.node != ir::ValueRef::kParam && named.insert({v.node, v.index}).second;
    if (direct) c.preassign(v, name);
    via_identity.push_back(!direct);
  }

  const auto& table = onnx_detail::export_table();
  for (size_t k = 0; k < g.nodes().size(); ++k) {
    const ir::Node& n = *g.nodes()[k];
    c.begin(n, static_cast<int32_t>(k));
    table.at(n.op())(c);
  }

  for (size_t j = 0; j < g.outputs().size(); ++j) {
    const ir::ValueRef v = g.outputs()[j].value;
    const std::string* src = c.name_of(v);
    SPORE_CHECK(src != nullptr, "[export_onnx] graph output '", out_names[j], "' is a value with no ONNX equivalent");
    if (via_identity[j]) {
      auto* id = gp.add_node();
      id->set_name(out_names[j] + "/Identity");
      id->set_op_type("Identity");
      id->add_input(*src);
      id->add_output(out_names[j]);
    }
    auto* vi = gp.add_output();
    vi->set_name(out_names[j]);
    onnx_detail::set_value_type(*vi, g.type_of(v), "graph output '" + out_names[j] + "'");
  }

  std::string bytes;
  SPORE_CHECK(model.SerializeToString(&bytes), "[export_onnx] the model does not serialize (larger than 2 GB, "
                                               "protobuf's limit for one message)");
  return bytes;
}

void export_onnx(const LoadedModel& m, const std::string& path) {
  const std::string bytes = export_onnx_bytes(m);
  write_atomically(path, "[export_onnx]", [&](FileWriter& w) {
    w.write(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())));
  });
}

std::vector<std::string> onnx_exportable_ops() {
  std::vector<std::string> ops;
  for (const auto& [op, fn] : onnx_detail::export_table()) ops.push_back(op);
  return ops;
}

}  // namespace spore::io
