// SPDX-License-Identifier: Apache-2.0
#pragma once
// ONNX export (opset 17, IR version 8): a LoadedModel's inference graph becomes an ONNX
// ModelProto, one or more ONNX nodes per IR node (export_*.cc, one file per primitive family),
// named after the node's scope so layers stay recognizable. Data inputs become graph inputs
// (symbolic dims as dim_param), state becomes initializers. Graphs ONNX cannot express (state
// updates of a training step, primitives without an ONNX form) are refused with one error that
// lists every offending node.
#include <string>
#include <vector>

#include "io/loaded_model.h"

namespace spore::io {

/// Writes `m` as an ONNX model at `path`, atomically (a temporary file renamed over it).
void export_onnx(const LoadedModel& m, const std::string& path);
/// The serialized ONNX ModelProto of `m`.
std::string export_onnx_bytes(const LoadedModel& m);
/// IR op names the exporter maps to ONNX, sorted.
std::vector<std::string> onnx_exportable_ops();

}  // namespace spore::io
