// SPDX-License-Identifier: Apache-2.0
#pragma once
// What every model-file reader (MindIR, ONNX) produces and every writer consumes: a closed IR
// graph plus the values of its non-data inputs. Keeping the readers to this one plain form lets
// the runnable GraphCell, `spore info/run/convert/compare` and the fuzzers share them.
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "spore/tensor.h"

namespace spore::io {

struct LoadedModel {
  /// The graph's inputs are the `num_data` call arguments first, then its state: parameters,
  /// buffers and constants (their IR roles say which), whose values are `state`.
  ir::GraphPtr graph;
  size_t num_data = 0;
  /// One name per data input and per graph output (ONNX value names, or export's defaults
  /// "input_0", "output_0"...), and one per state input (dotted Cell paths, ONNX initializer names).
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  std::vector<std::string> state_names;
  std::vector<Tensor> state;
  /// Free-form metadata: "format" ("mindir", "onnx"), "producer", "producer_version",
  /// "opset", "preprocessing", ...
  std::map<std::string, std::string> metadata;
};

}  // namespace spore::io
