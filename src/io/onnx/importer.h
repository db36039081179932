// SPDX-License-Identifier: Apache-2.0
#pragma once
// ONNX import (opsets 7-17): a ModelProto becomes a closed IR graph by tracing our public ops
// over its nodes, one mapping per operator (ops_*.cc). Values known at import time (initializers,
// Constant nodes and everything computed only from them) are folded eagerly, so shape inputs of
// Reshape, Slice, Expand... are plain numbers when the node is mapped. The file is untrusted:
// sizes, counts, names and types are checked and every failure is a spore::Error naming the
// node and its op. Unsupported operators are reported all together.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "io/loaded_model.h"

namespace spore::io {

/// How to import.
struct OnnxImportOptions {
  /// Graph inputs given a fixed value at import time: they become constants (not data inputs),
  /// so shape-like inputs (a Reshape's shape fed as an input) fold. Names not in the graph are
  /// an error.
  std::map<std::string, Tensor> fixed_inputs;
};

/// Imports the ONNX model at `path`. Graph inputs without an initializer become the data inputs
/// (symbolic dims for dim_param / unknown dims); initializers and folded constants become state
/// inputs (role constant) named after their ONNX values.
LoadedModel import_onnx(const std::string& path, const OnnxImportOptions& opt = {});
/// The same from the serialized ModelProto in memory; `what` names it in errors.
LoadedModel import_onnx_bytes(std::string_view bytes, const std::string& what = "ONNX model",
                              const OnnxImportOptions& opt = {});
/// ONNX operator types the importer maps (at some opset in 7-17), sorted.
std::vector<std::string> onnx_supported_ops();

}  // namespace spore::io
