// SPDX-License-Identifier: Apache-2.0
#pragma once
// What an ONNX operator mapping sees: one node, its input tensors (symbolic under the import
// trace, or concrete when known at import time) and typed attribute access with the spec's
// defaults. Mappings are written with public ops, so each is exact where the op is.
#include <functional>
#include <unordered_map>
#include <optional>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "spore/tensor.h"

namespace spore::io::onnx_detail {

class OpContext {
 public:
  OpContext(const onnx::NodeProto& node, int opset, std::vector<Tensor> inputs)
      : node_(node), opset_(opset), inputs_(std::move(inputs)) {}

  const onnx::NodeProto& node() const { return node_; }
  /// The model's opset for the default domain.
  int opset() const { return opset_; }
  size_t num_inputs() const { return inputs_.size(); }
  /// True when input i is given (optional inputs may be absent or named "").
  bool has(size_t i) const { return i < inputs_.size() && inputs_[i].defined(); }
  /// Input i; an error naming the node when it is missing.
  const Tensor& in(size_t i) const;
  /// True when input i's value is known at import time (not a traced tensor).
  bool is_constant(size_t i) const;
  /// True when the mapping read input i's values at import time (ints_of, doubles_of and the
  /// scalar forms): a Shape's symbolic sizes read there are sizes, not numbers.
  bool read_at_import(size_t i) const { return i < read_.size() && read_[i]; }
  /// Input i's values as integers; it must be known at import time (shape-like inputs).
  std::vector<int64_t> ints_of(size_t i) const;
  std::vector<double> doubles_of(size_t i) const;
  /// The one value of input i (a scalar or a one-element tensor known at import time); a file
  /// that gives none or several fails naming the node.
  int64_t int_scalar(size_t i) const;
  /// Fails naming the node unless every size of `x` is known (a mapping that needs them).
  void check_static(const Tensor& x) const;
  double double_scalar(size_t i) const;

  const onnx::AttributeProto* attr(const std::string& name) const;
  int64_t i(const std::string& name, int64_t def) const;
  double f(const std::string& name, double def) const;
  std::string s(const std::string& name, const std::string& def) const;
  std::optional<std::vector<int64_t>> ints(const std::string& name) const;
  std::optional<std::vector<double>> floats(const std::string& name) const;
  /// A tensor attribute (Constant's value), converted.
  std::optional<Tensor> tensor(const std::string& name) const;

  /// A graph attribute (If's branches, Loop's and Scan's body); an error when missing.
  const onnx::GraphProto& graph(const std::string& name) const;
  /// Imports sub-graph `g` with its inputs bound, in order, to `inputs`: its nodes are traced
  /// (or folded) like the main graph's and may read every value visible at this node (ONNX's
  /// lexical scoping). Returns its outputs. Called inside a control-flow body it records into
  /// that body's trace, so outer traced values become the body's captures.
  using SubgraphRunner = std::function<std::vector<Tensor>(const onnx::GraphProto&, const std::vector<Tensor>&)>;
  std::vector<Tensor> run_subgraph(const onnx::GraphProto& g, const std::vector<Tensor>& inputs) const;
  void set_subgraph_runner(SubgraphRunner r) { subgraph_ = std::move(r); }

  /// Throws a spore::Error naming this node and its op type.
  [[noreturn]] void fail(const std::string& msg) const;

 private:
  const onnx::NodeProto& node_;
  int opset_;
  std::vector<Tensor> inputs_;
  mutable std::vector<bool> read_;
  SubgraphRunner subgraph_;
};

/// Maps one node to its output tensors (one per node output; extra outputs may be left out).
using OpFn = std::vector<Tensor> (*)(const OpContext&);

/// One operator mapping, valid for model opsets [min_opset, max_opset].
struct OpEntry {
  const char* op_type;
  int min_opset;
  int max_opset;
  OpFn fn;
};
using OpTable = std::vector<OpEntry>;

/// Each family file adds its mappings.
void add_elementwise_ops(OpTable& t);
void add_reduce_ops(OpTable& t);
void add_shape_ops(OpTable& t);
void add_nn_ops(OpTable& t);
void add_loss_ops(OpTable& t);
void add_control_flow_ops(OpTable& t);
void add_resize_ops(OpTable& t);
void add_index_ops(OpTable& t);
void add_quantize_ops(OpTable& t);
void add_rnn_ops(OpTable& t);
void add_training_ops(OpTable& t);

/// The mapping for `op_type` at `opset`, or null.
const OpEntry* find_op(const std::string& op_type, int opset);
/// Every op type with a mapping (for reports).
std::vector<std::string> supported_op_types();

/// Runs `f` with every symbolic trace set aside, so the tensors it makes are concrete values
/// known at import time (constants the mappings build: iteration numbers, index tables). While
/// an ImportConstants is alive, equal results (dtype, shape, weak flag and bytes) are the same
/// tensor: a control-flow body is traced more than once, and a constant its mapping makes anew
/// on each trace would otherwise be a new capture each time (the traces' operand lists would
/// differ, as they did for a Loop inside an If).
Tensor at_import(const std::function<Tensor()>& f);

/// The table at_import shares its results through, for one import (on this thread).
class ImportConstants {
 public:
  ImportConstants();
  ~ImportConstants();
  ImportConstants(const ImportConstants&) = delete;
  ImportConstants& operator=(const ImportConstants&) = delete;
  /// `t`, or an earlier constant equal to it.
  Tensor intern(const Tensor& t);

 private:
  ImportConstants* prev_;
  std::unordered_multimap<size_t, Tensor> by_hash_;
};

/// Normalizes an ONNX axis (negative counts from the end) against `rank`, naming the node.
int64_t axis_of(const OpContext& c, int64_t axis, int64_t rank);

}  // namespace spore::io::onnx_detail
