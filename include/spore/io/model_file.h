// SPDX-License-Identifier: Apache-2.0
#pragma once
// A model file opened for inspection and inference: MindIR or ONNX, told apart by content, not
// by name. The `spore info/run/convert/compare/bench` commands are written on this, and so can
// any C++ program that wants to run a saved model without training it (for fine-tuning, load a
// MindIR file as a GraphCell: spore/io/mindir.h).
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "spore/io/model_key.h"
#include "spore/mode.h"
#include "spore/tensor.h"

namespace spore::io {

/// A graph input or output as the file declares it.
struct ValueInfo {
  std::string name;
  DType dtype = DType::Float32;
  /// Sizes, with -1 where the file leaves a dimension symbolic (its name is in `dim_names`).
  std::vector<int64_t> dims;
  std::vector<std::string> dim_names;
  /// "float32[n, 3, 224, 224]"
  std::string type_text;
};

/// One top-level node's output, named by the layer that produced it: the node's scope (the Cell
/// path in a MindIR file, the node name in an ONNX file), else "<op>#<position>".
struct LayerValue {
  std::string layer;
  std::string op;
  size_t position = 0;  // the node's index in the graph
  Tensor value;
};

/// Static counts over the graph (`spore info`).
struct ModelSummary {
  int64_t parameters = 0;        // elements of every state input (weights, buffers, constants)
  int64_t parameter_bytes = 0;
  double flops = 0;              // per inference, symbolic dimensions taken as 1
  /// Why `flops` is unknown, "" when known: a model whose sizes its input values give (an ONNX
  /// Reshape to a run-time shape) cannot be priced from zero inputs.
  std::string flops_unknown;
  std::map<std::string, int64_t> op_histogram;  // primitive name -> node count (sub-graphs included)
};

/// A tensor from a file by its extension: `.npy` (numpy), `.pb` (an ONNX TensorProto, as in
/// ONNX's test data). Errors name the file.
Tensor read_tensor_file(const std::string& path);

class ModelFile {
 public:
  /// Reads `path` (MindIR or ONNX). Errors name the file and what is wrong with it. An
  /// encrypted MindIR file needs its `key` (spore/io/model_key.h).
  static ModelFile open(const std::string& path, const std::optional<ModelKey>& key = std::nullopt);
  ~ModelFile();
  ModelFile(ModelFile&&) noexcept;
  ModelFile& operator=(ModelFile&&) noexcept;

  /// "mindir" or "onnx".
  const std::string& format() const;
  const std::string& path() const;
  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;
  const std::map<std::string, std::string>& metadata() const;
  /// Runs the model once on zeros to price every node (FLOPs come from each primitive's cost).
  ModelSummary summary() const;
  /// The IR text (docs/mindir.md).
  std::string ir_text() const;

  /// Runs the model: inputs in declared order, each checked against the declared dtype and
  /// shape (an error names the input, the expected and the given type). PyNative interprets the
  /// graph op by op; Graph compiles it once per input signature and runs the plan.
  std::vector<Tensor> run(std::span<const Tensor> inputs, Mode mode = Mode::PyNative) const;
  /// Runs the model and returns every top-level node's outputs, in execution order. In Graph
  /// mode the values come from the compiled plan (each one kept as an extra plan output).
  /// `storage` Float16 or BFloat16 emulates a lower-precision model: the weights and every
  /// floating intermediate are rounded to it (computation stays float32), as `spore compare
  /// --precision-b` uses it.
  std::vector<LayerValue> run_layers(std::span<const Tensor> inputs, Mode mode = Mode::PyNative,
                                     DType storage = DType::Float32) const;

  /// Runs the graph passes (SPORE_OPT_LEVEL, default O1) on the graph before saving or running.
  void optimize();
  /// Writes MindIR (`.mindir`) or ONNX (`.onnx`), by the extension of `path`; with `key`, an
  /// encrypted MindIR file (ONNX has no encrypted form: an error).
  void save(const std::string& path, const std::optional<ModelKey>& key = std::nullopt) const;

 private:
  struct Impl;
  explicit ModelFile(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace spore::io
