// SPDX-License-Identifier: Apache-2.0
#pragma once
// The model-file readers and writers behind ModelFile, by format. Each reads untrusted bytes:
// sizes are bounded and every error names the file.
#include <string>

#include "io/loaded_model.h"
#include "io/mindir_file.h"
#include "io/onnx/exporter.h"
#include "io/onnx/importer.h"

namespace spore::io {

/// "mindir" when `path` starts with the MindIR magic, "onnx" when it parses as an ONNX
/// ModelProto; otherwise an error that names the file and the formats tried.
std::string detect_format(const std::string& path);

}  // namespace spore::io
