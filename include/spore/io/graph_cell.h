// SPDX-License-Identifier: Apache-2.0
#pragma once
// GraphCell: a model loaded from a file (load_mindir, the ONNX importer) as a Cell. Its state
// inputs are registered as parameters (role parameter) and buffers (buffers and constants) under
// their dotted names, so the usual Cell tools apply: parameter_tree() and functional_call for
// grad, optimizers for fine-tuning, state_dict / load_state_dict. A call runs the graph through
// the IR interpreter in PyNative mode (it dispatches every op, so grad and jvp see it) and as a
// compiled graph in Graph mode, then writes state updates (BatchNorm statistics) to the buffers.
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "spore/nn/cell.h"
#include "spore/tensor.h"

namespace spore::io {

struct LoadedModel;

class GraphCell : public nn::Cell {
 public:
  /// Takes the model's graph and state (the tensors are shared, not copied).
  explicit GraphCell(const LoadedModel& model);
  ~GraphCell() override;

  /// Runs the model on its data inputs. Their number, dtypes and shapes are checked against the
  /// graph (a symbolic dimension takes any size) with an error naming the input, the expected
  /// and the given type. Returns the results (state updates are applied, not returned).
  std::vector<Tensor> operator()(std::span<const Tensor> inputs);
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs) {
    return (*this)(std::span<const Tensor>(inputs));
  }

  const std::vector<std::string>& input_names() const;
  const std::vector<std::string>& output_names() const;
  /// Type text of each data input and result ("float32[n, 4]").
  std::vector<std::string> input_types() const;
  std::vector<std::string> output_types() const;
  /// The metadata of the file ("format", "producer", "preprocessing", ...).
  const std::map<std::string, std::string>& metadata() const;
  /// The graph in the IR text form (docs/mindir.md).
  std::string graph_text() const;
  /// The model with the cell's current state values (what save_mindir writes).
  LoadedModel model() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace spore::io
