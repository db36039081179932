// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a primitive's ONNX export sees: one IR node, the ONNX names of its inputs, its types,
// and helpers that append ONNX nodes and constants to the graph being written. Every ONNX node
// and intermediate value is named after the IR node's scope and op ("layer1.0/conv1/conv",
// ".../conv/pads"), so `spore compare` and Netron show the model's own structure.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "onnx/onnx_pb.h"
#include "spore/tensor.h"

namespace spore::io::onnx_detail {

/// The ONNX TensorProto.DataType of an IR dtype (every IR dtype has one).
int32_t onnx_dtype(ir::DType t);

class ExportContext {
 public:
  ExportContext(onnx::GraphProto& g, const ir::Graph& ir);
  /// For a control-flow node's sub-graph `ir` written into `g` (a branch or loop body): value
  /// names stay unique across the whole model, as ONNX requires of nested graphs.
  ExportContext(onnx::GraphProto& g, const ir::Graph& ir, const ExportContext& parent);

  /// The ONNX graph being written.
  onnx::GraphProto& graph() { return g_; }

  /// Reserves `name` (graph inputs, initializers, graph outputs); an error when taken.
  void reserve(const std::string& name);
  /// A fresh value name: `base`, or `base_1`, `base_2`... when taken.
  std::string unique(const std::string& base);
  /// Binds an IR value to an existing ONNX name.
  void bind(ir::ValueRef v, const std::string& name) { names_[key(v)] = name; }
  /// The ONNX name of an IR value, if it has been exported.
  const std::string* name_of(ir::ValueRef v) const;
  /// Pre-assigns the ONNX name a node output will get (graph outputs keep their names).
  void preassign(ir::ValueRef v, const std::string& name) { preassigned_[key(v)] = name; }

  /// Starts exporting node `index` of the IR graph.
  void begin(const ir::Node& n, int32_t index);
  const ir::Node& node() const { return *node_; }
  /// The attribute struct of the node's primitive.
  template <class A>
  const A& attrs() const { return *static_cast<const A*>(node_->attrs()); }
  size_t num_inputs() const { return node_->inputs().size(); }
  /// ONNX name of input i (an error when that value could not be exported).
  std::string in(size_t i) const;
  const ir::TensorType& in_type(size_t i) const;
  const ir::TensorType& out_type(size_t i) const;
  /// True when output i is read by a later node or is a graph output (optional ONNX outputs
  /// such as LayerNormalization's statistics are written only then).
  bool used(size_t i) const { return used_values_.count({index_, static_cast<int32_t>(i)}) > 0; }
  /// The name output i gets; binds it. Call once per output that the export produces.
  std::string out(size_t i);
  /// Output i is the existing value `name` (no node needed, unless it is a graph output).
  void alias(size_t i, const std::string& name);
  /// A fresh name for an intermediate value of this node: "<base>/<what>".
  std::string tmp(const std::string& what);

  /// Appends an ONNX node (named after the IR node) and returns it for attributes.
  onnx::NodeProto& add(const std::string& op_type, const std::vector<std::string>& inputs,
                       const std::vector<std::string>& outputs);
  /// Shorthand: a one-output node writing a new intermediate; returns its name.
  std::string op(const std::string& op_type, const std::vector<std::string>& inputs, const std::string& what);

  /// Constants (initializers) named after the node: int64 vectors (shapes, axes, pads), 0-d
  /// scalars of a dtype, any tensor.
  std::string ints(const std::vector<int64_t>& v, const std::string& what);
  std::string scalar(double v, ir::DType dt, const std::string& what);
  std::string tensor(const Tensor& t, const std::string& what);
  /// An initializer with an exact name (graph state); returns it.
  void initializer(const Tensor& t, const std::string& name);

  /// Throws a spore::Error naming the node's op and scope.
  [[noreturn]] void fail(const std::string& msg) const;
  /// "op 'conv' at scope 'layer1.0/conv1'" for messages.
  std::string where() const;

  /// Static dims of a type (an error naming the node when one is symbolic).
  std::vector<int64_t> static_shape(const ir::TensorType& t, const char* what) const;

 private:
  static std::pair<int32_t, int32_t> key(ir::ValueRef v) { return {v.node, v.index}; }
  onnx::GraphProto& g_;
  const ir::Graph& ir_;
  const ir::Node* node_ = nullptr;
  int32_t index_ = 0;
  std::string base_;
  int part_ = 0;
  // Shared with the contexts of nested graphs: the names taken, and per base name the next
  // suffix to try (so naming stays linear in the node count).
  std::shared_ptr<std::set<std::string>> used_;
  std::shared_ptr<std::map<std::string, int>> next_suffix_;
  std::set<std::pair<int32_t, int32_t>> used_values_;
  std::map<std::pair<int32_t, int32_t>, std::string> names_;
  std::map<std::pair<int32_t, int32_t>, std::string> preassigned_;
};

/// Adds attributes to an ONNX node.
void attr_i(onnx::NodeProto& n, const std::string& name, int64_t v);
void attr_f(onnx::NodeProto& n, const std::string& name, double v);
void attr_s(onnx::NodeProto& n, const std::string& name, const std::string& v);
void attr_ints(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v);

/// Declares a graph input or output's type (symbolic dims as dim_param).
void set_value_type(onnx::ValueInfoProto& v, const ir::Type& type, const std::string& what);

/// Fills `p` (dims, type, raw little-endian data) from a tensor.
void tensor_to_proto(const Tensor& t, onnx::TensorProto& p);

/// Exports the node that `c` has begun.
using ExportFn = void (*)(ExportContext& c);
using ExportTable = std::map<std::string, ExportFn>;

/// Each family file adds its primitives (by IR op name).
void add_elementwise_exports(ExportTable& t);
void add_nn_exports(ExportTable& t);
void add_reduce_exports(ExportTable& t);
void add_shape_exports(ExportTable& t);
void add_control_flow_exports(ExportTable& t);

/// All export rules.
const ExportTable& export_table();

}  // namespace spore::io::onnx_detail
