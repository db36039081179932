// SPDX-License-Identifier: Apache-2.0
#include "io/onnx/importer.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "autodiff/frames.h"
#include "io/onnx/op_context.h"
#include "io/onnx/proto_tensor.h"
#include "io/onnx/run_time_sizes.h"
#include "ir/error.h"
#include "runtime/allocator.h"
#include "runtime/dispatch.h"
#include "spore/scope.h"
#include "transforms/trace.h"

namespace spore::io {

namespace {

using onnx_detail::OpContext;

// Opsets before 7 import too where a mapping covers them (its range says; the arithmetic ops
// with the old `broadcast` attribute start at 7).
constexpr int kMinOpset = 1;
constexpr int kMaxOpset = 17;
constexpr int kMaxNodes = 1 << 20;
constexpr int kMaxInitializers = 1 << 20;

bool default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }
// The training preview domain's operators (Adagrad, Adam, Momentum) share the default table:
// their names do not clash with ai.onnx's.
constexpr const char* kTrainingDomain = "ai.onnx.preview.training";
bool known_domain(const std::string& d) { return default_domain(d) || d == kTrainingDomain; }

int model_opset(const onnx::ModelProto& m, const std::string& what) {
  int opset = -1;
  for (const auto& o : m.opset_import())
    if (default_domain(o.domain())) opset = static_cast<int>(o.version());
  bool training = false;
  for (const auto& o : m.opset_import()) training = training || o.domain() == kTrainingDomain;
  if (opset < 0 && training) opset = kMaxOpset;  // only preview training operators: no ai.onnx version to follow
  SPORE_CHECK(opset >= 0, "[onnx] ", what, " imports no opset of the default ONNX domain");
  SPORE_CHECK(opset >= kMinOpset && opset <= kMaxOpset, "[onnx] ", what, " uses opset ", opset,
              "; Spore imports opsets ", kMinOpset, " to ", kMaxOpset,
              " (convert it with onnx.version_converter.convert_version)");
  return opset;
}

// Nodes whose operator has no mapping, in `g` and in its sub-graphs (If branches, Loop and Scan
// bodies; protobuf's parse depth limit bounds the nesting).
void collect_missing(const onnx::GraphProto& g, int opset, std::map<std::string, std::vector<std::string>>& missing) {
  for (const auto& n : g.node()) {
    const std::string key = default_domain(n.domain()) ? n.op_type() : n.domain() + "::" + n.op_type();
    if (!known_domain(n.domain()) || !onnx_detail::find_op(n.op_type(), opset))
      missing[key].push_back(n.name().empty() ? "<unnamed>" : n.name());
    for (const auto& a : n.attribute()) {
      if (a.has_g()) collect_missing(a.g(), opset, missing);
      for (const auto& sg : a.graphs()) collect_missing(sg, opset, missing);
    }
  }
}

// Lists every node whose operator has no mapping, sub-graphs included, all at once.
void check_supported(const onnx::GraphProto& g, int opset, const std::string& what) {
  std::map<std::string, std::vector<std::string>> missing;
  collect_missing(g, opset, missing);
  if (missing.empty()) return;
  std::ostringstream os;
  os << "[onnx] " << what << " uses " << missing.size() << " operator(s) Spore cannot import at opset " << opset << ": ";
  bool first = true;
  for (const auto& [op, nodes] : missing) {
    os << (first ? "" : "; ") << op << " (node" << (nodes.size() > 1 ? "s" : "") << ' ';
    for (size_t i = 0; i < nodes.size() && i < 8; ++i) os << (i ? ", " : "") << '\'' << nodes[i] << '\'';
    if (nodes.size() > 8) os << ", ... " << nodes.size() - 8 << " more";
    os << ')';
    first = false;
  }
  throw Error(os.str());
}

// IR symbols are identifiers; ONNX dim_params may be any text ("batch size", "N+1").
std::string symbol_name(const std::string& s) {
  std::string out;
  for (char ch : s) out += std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' ? ch : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "d_" + out;
  // "vsize..." names sizes that values give (value symbols, shape.h): a file's own dimension
  // must not become one.
  if (out.starts_with("vsize")) out = "d_" + out;
  return out;
}

TensorType input_type(const onnx::ValueInfoProto& v, size_t index) {
  const std::string what = "graph input '" + v.name() + "'";
  SPORE_CHECK(v.type().has_tensor_type(), "[onnx] ", what, " is not a tensor (sequences, maps and optionals are not supported)");
  const auto& tt = v.type().tensor_type();
  const auto dt = onnx_detail::dtype_from_onnx(tt.elem_type());
  SPORE_CHECK(dt.has_value(), "[onnx] ", what, " has element type ", onnx_detail::onnx_dtype_name(tt.elem_type()),
              ", which Spore has no dtype for");
  SPORE_CHECK(tt.has_shape(), "[onnx] ", what, " has no shape; give it one (dims may be symbolic)");
  SPORE_CHECK(tt.shape().dim_size() <= kMaxRank, "[onnx] ", what, " has rank ", tt.shape().dim_size(), " > ", kMaxRank);
  TensorType t;
  t.dtype = *dt;
  for (int k = 0; k < tt.shape().dim_size(); ++k) {
    const auto& d = tt.shape().dim(k);
    if (d.has_dim_value()) {
      SPORE_CHECK(d.dim_value() >= 0 && d.dim_value() <= onnx_detail::kMaxElements, "[onnx] ", what,
                  " has an invalid dimension ", d.dim_value());
      t.shape.push_back(d.dim_value());
    } else if (d.has_dim_param() && !d.dim_param().empty()) {
      t.shape.push_back(symbol_named(symbol_name(d.dim_param())));
    } else {
      t.shape.push_back(symbol_named("in" + std::to_string(index) + "_d" + std::to_string(k)));
    }
  }
  return t;
}

bool is_constant(const Tensor& t) { return t.device().type != DeviceType::Meta; }

// A constant holding symbolic sizes: an ONNX Shape of a traced batch, or dimension arithmetic on one.
bool holds_symbolic_sizes(const Tensor& t) {
  if (!t.defined() || !is_constant(t) || t.dtype() != DType::Int64 || t.numel() > 64) return false;
  for (int64_t v : t.contiguous().to_vector<int64_t>())
    if (is_symbol_id(v)) return true;
  return false;
}

// Whether input `i` of node `n`, a constant holding symbolic sizes, may stay one: where the
// mapping takes it as dimensions (a Reshape's or Expand's shape), and where a node of constants
// only moves the sizes (Gather, Concat, Slice... of the Shape itself) or does dimension
// arithmetic on them (ops_elementwise.cc). Anywhere else its values would be computed with as
// numbers (a Min, a comparison, a Range's limit, Slice's ends): it is given as the values the
// sizes take when the graph runs instead (run_time_values), whose sizes are then value symbols.
bool sizes_may_stay(const onnx::NodeProto& n, size_t i, bool all_constant, const std::vector<Tensor>& ins) {
  const std::string& op = n.op_type();
  if ((op == "Reshape" || op == "Expand") && i == 1) return true;
  if (!all_constant) return false;
  if (op == "Concat" || op == "Identity") return true;
  if ((op == "Shape" || op == "Gather" || op == "Slice" || op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" ||
       op == "Flatten") && i == 0)
    return true;
  if (op == "Cast") {
    for (const auto& a : n.attribute())
      if (a.name() == "to") return a.i() == onnx::TensorProto::INT64;
    return false;
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div")
    return ins.size() == 2 && ins[0].defined() && ins[1].defined() && ins[0].dtype() == DType::Int64 &&
           ins[1].dtype() == DType::Int64;
  return false;
}

int frame_depth(const autodiff::Frame* f) {
  auto frames = autodiff::active_frames();
  for (size_t i = 0; i < frames.size(); ++i)
    if (frames[i] == f) return static_cast<int>(i);
  throw Error("[onnx] internal error: the import trace is not active");
}


// Names a graph (and the graphs nested in it) reads without defining: the outer values a
// sub-graph captures.
void outer_refs(const onnx::GraphProto& g, std::set<std::string> defined, std::set<std::string>& out) {
  for (const auto& i : g.input()) defined.insert(i.name());
  for (const auto& i : g.initializer()) defined.insert(i.name());
  for (const auto& n : g.node()) {
    for (const auto& name : n.input())
      if (!name.empty() && !defined.count(name)) out.insert(name);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) outer_refs(a.g(), defined, out);
      for (const auto& sg : a.graphs()) outer_refs(sg, defined, out);
    }
    for (const auto& name : n.output()) defined.insert(name);
  }
}

// Traces (or folds) the nodes of a graph, in order, over a scope of named values. Sub-graphs
// (If's branches, Loop's and Scan's bodies) run through the same loop over a copy of the scope
// at their node, so they see every outer value and their own names stay inside.
struct NodeRunner {
  int opset;
  int depth;  // the import trace's frame: folding suspends it and every body trace above it
  std::map<const TensorImpl*, std::string>& const_names;
  // Folded results of sub-graph nodes and sub-graph initializers, by node and input identity:
  // a control-flow body is traced more than once, and each trace must see the same constant
  // tensors (else each trace would capture fresh copies).
  std::map<std::pair<const void*, std::vector<const TensorImpl*>>, std::vector<Tensor>> folded;
  std::vector<Tensor> keep_alive;

  void run(const onnx::GraphProto& g, std::map<std::string, Tensor>& values) {
    for (int node_index = 0; node_index < g.node_size(); ++node_index) {
      const auto& n = g.node(node_index);
      const std::string label = "[onnx] node '" + n.name() + "' (" + n.op_type() + ")";
      std::vector<Tensor> ins;
      bool all_constant = true;
      for (const auto& name : n.input()) {
        if (name.empty()) {
          ins.emplace_back();
          continue;
        }
        auto it = values.find(name);
        SPORE_CHECK(it != values.end(), label, ": input '", name,
                    "' is not produced by any earlier node, initializer or graph input");
        ins.push_back(it->second);
        all_constant = all_constant && is_constant(it->second);
      }
      // A node with sub-graphs folds only when every outer value they read is known too.
      std::set<std::string> refs;
      for (const auto& a : n.attribute()) {
        if (a.has_g()) outer_refs(a.g(), {}, refs);
        for (const auto& sg : a.graphs()) outer_refs(sg, {}, refs);
      }
      for (const auto& name : refs) {
        auto it = values.find(name);
        SPORE_CHECK(it != values.end(), label, ": a sub-graph reads '", name,
                    "', which is not produced by any earlier node, initializer or graph input");
        all_constant = all_constant && is_constant(it->second);
      }
      const auto* entry = onnx_detail::find_op(n.op_type(), opset);
      SPORE_CHECK(entry && known_domain(n.domain()), "[onnx] a sub-graph uses operator ", n.op_type(),
                  ", which Spore cannot import at opset ", opset, " (node '", n.name(), "')");
      bool materialized = false;
      for (size_t i = 0; i < ins.size(); ++i)
        if (holds_symbolic_sizes(ins[i]) && !sizes_may_stay(n, i, all_constant, ins)) {
          NameScope at(n.name().empty() ? n.op_type() + "_" + std::to_string(node_index) : n.name());
          ins[i] = onnx_detail::run_time_values(ins[i]);
          materialized = true;
        }
      if (materialized) all_constant = false;
      OpContext ctx(n, opset, std::move(ins));
      ctx.set_subgraph_runner([this, &values](const onnx::GraphProto& sub, const std::vector<Tensor>& args) {
        std::map<std::string, Tensor> scope = values;
        for (int k = 0; k < sub.input_size(); ++k) scope[sub.input(k).name()] = args[static_cast<size_t>(k)];
        for (const auto& init : sub.initializer()) {
          auto& slot = folded[{&init, {}}];
          if (slot.empty()) slot.push_back(onnx_detail::tensor_from_proto(init, "initializer '" + init.name() + "'"));
          scope[init.name()] = slot[0];
        }
        run(sub, scope);
        std::vector<Tensor> outs;
        for (const auto& o : sub.output()) {
          auto it = scope.find(o.name());
          SPORE_CHECK(it != scope.end(), "[onnx] sub-graph '", sub.name(), "': output '", o.name(),
                      "' is not produced by any node");
          // Symbolic sizes leave as the values they take when the graph runs, not as symbol ids.
          outs.push_back(holds_symbolic_sizes(it->second) ? onnx_detail::run_time_values(it->second) : it->second);
        }
        return outs;
      });
      std::vector<Tensor> outs;
      // The node's primitives carry its name as their scope: `spore compare` names layers by it.
      NameScope scope(n.name().empty() ? n.op_type() + "_" + std::to_string(node_index) : n.name());
      try {
        if (all_constant) {
          // Known at import time: compute it now so shape-like inputs downstream are numbers.
          std::pair<const void*, std::vector<const TensorImpl*>> key{&n, {}};
          for (size_t k = 0; k < ctx.num_inputs(); ++k) key.second.push_back(ctx.has(k) ? ctx.in(k).impl() : nullptr);
          auto hit = folded.find(key);
          if (hit != folded.end()) {
            outs = hit->second;
          } else {
            autodiff::SuspendAbove eager(depth);
            outs = entry->fn(ctx);
            if (refs.empty()) {
              folded[key] = outs;
              // The key holds input addresses: keep the inputs alive so no later tensor reuses one.
              for (size_t k = 0; k < ctx.num_inputs(); ++k)
                if (ctx.has(k)) keep_alive.push_back(ctx.in(k));
            }
          }
        } else {
          outs = entry->fn(ctx);
        }
      } catch (const Error& e) {
        const std::string msg = e.what();
        if (msg.rfind("[onnx] node", 0) == 0 || msg.rfind("[onnx] a sub-graph", 0) == 0) throw;
        throw Error(label + ": " + msg);
      } catch (const ir::Error& e) {
        // A graph the IR refuses (a hostile file can build one): a clear error, never an escape.
        throw Error(label + ": " + e.what());
      }
      for (int k = 0; k < n.output_size() && k < static_cast<int>(outs.size()); ++k) {
        if (n.output(k).empty() || !outs[static_cast<size_t>(k)].defined()) continue;
        values[n.output(k)] = outs[static_cast<size_t>(k)];
        if (is_constant(outs[static_cast<size_t>(k)])) const_names.emplace(outs[static_cast<size_t>(k)].impl(), n.output(k));
      }
    }
  }
};

}  // namespace

LoadedModel import_onnx_bytes(std::string_view bytes, const std::string& what, const OnnxImportOptions& opt) {
  SPORE_CHECK(bytes.size() <= static_cast<size_t>(std::numeric_limits<int>::max()), "[onnx] ", what,
              " is larger than 2 GB, the protobuf limit");
  onnx::ModelProto m;
  SPORE_CHECK(m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())), "[onnx] ", what,
              " is not a valid ONNX model (the protobuf does not parse: corrupt or truncated file)");
  SPORE_CHECK(m.has_graph(), "[onnx] ", what, " has no graph");
  const onnx::GraphProto& g = m.graph();
  SPORE_CHECK(g.node_size() <= kMaxNodes && g.initializer_size() <= kMaxInitializers, "[onnx] ", what,
              " has too many nodes or initializers");
  const int opset = model_opset(m, what);
  check_supported(g, opset, what);

  LoadedModel out;
  std::map<std::string, Tensor> values;
  std::map<const TensorImpl*, std::string> const_names;  // folded values -> their ONNX names
  size_t initializer_bytes = 0;
  for (const auto& init : g.initializer()) {
    SPORE_CHECK(!init.name().empty(), "[onnx] ", what, " has an initializer without a name");
    Tensor t = onnx_detail::tensor_from_proto(init, "initializer '" + init.name() + "'");
    initializer_bytes += static_cast<size_t>(t.numel()) * t.itemsize();
    values[init.name()] = t;
    const_names.emplace(t.impl(), init.name());
  }
  for (const auto& [name, value] : opt.fixed_inputs) {
    bool found = false;
    for (const auto& v : g.input()) found = found || v.name() == name;
    SPORE_CHECK(found, "[onnx] ", what, " has no graph input '", name, "' to fix at import");
    SPORE_CHECK(value.defined() && value.device().type != DeviceType::Meta, "[onnx] the fixed value of input '", name,
                "' must be a concrete tensor");
    if (!values.count(name)) {
      values[name] = value;
      const_names.emplace(value.impl(), name);
    }
  }
  for (const auto& sp : g.sparse_initializer())
    throw Error("[onnx] " + what + " has a sparse initializer '" + sp.values().name() + "'; sparse tensors are not supported");

  transforms::SymbolicTrace trace("main");
  std::vector<Tensor> results;
  onnx_detail::ImportConstants constants;
  {
    autodiff::FrameGuard open(&trace);
    const int depth = frame_depth(&trace);
    for (int k = 0; k < g.input_size(); ++k) {
      const auto& v = g.input(k);
      if (values.count(v.name())) continue;  // an initializer's default (IR version < 4)
      SPORE_CHECK(!v.name().empty(), "[onnx] ", what, ": graph input ", k, " has no name");
      values[v.name()] = trace.input(input_type(v, static_cast<size_t>(k)));
      out.input_names.push_back(v.name());
    }
    out.num_data = out.input_names.size();
    // Folding runs the file's constant expressions now: bound what they may allocate (a legit
    // model folds shape arithmetic and, at most, transposes of its weights; a hostile one asks
    // for gigabytes from a few bytes).
    runtime::AllocationBudget budget(std::max<size_t>(size_t{1} << 30, 2 * initializer_bytes),
                                     "evaluating the ONNX file's constant expressions at import");
    NodeRunner runner{opset, depth, const_names, {}, {}};
    runner.run(g, values);
    for (const auto& o : g.output()) {
      auto it = values.find(o.name());
      SPORE_CHECK(it != values.end(), "[onnx] ", what, ": graph output '", o.name(), "' is not produced by any node");
      // Symbolic sizes leave as the values they take when the graph runs, not as symbol ids.
      results.push_back(holds_symbolic_sizes(it->second) ? onnx_detail::run_time_values(it->second) : it->second);
      out.output_names.push_back(o.name());
    }
  }
  out.graph = trace.finish(results);
  out.state = trace.captured();
  for (size_t k = 0; k < out.state.size(); ++k) {
    auto it = const_names.find(out.state[k].impl());
    out.state_names.push_back(it != const_names.end() ? it->second : "const_" + std::to_string(k));
  }
  out.metadata["format"] = "onnx";
  out.metadata["producer"] = m.producer_name();
  out.metadata["producer_version"] = m.producer_version();
  out.metadata["opset"] = std::to_string(opset);
  out.metadata["ir_version"] = std::to_string(m.ir_version());
  out.metadata["graph_name"] = g.name();
  return out;
}

LoadedModel import_onnx(const std::string& path, const OnnxImportOptions& opt) {
  std::ifstream f(path, std::ios::binary);
  SPORE_CHECK(f.good(), "[onnx] cannot open model file '", path, "'");
  std::ostringstream ss;
  ss << f.rdbuf();
  return import_onnx_bytes(ss.str(), "'" + path + "'", opt);
}

std::vector<std::string> onnx_supported_ops() { return onnx_detail::supported_op_types(); }

}  // namespace spore::io
