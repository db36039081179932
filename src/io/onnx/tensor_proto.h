// SPDX-License-Identifier: Apache-2.0
#pragma once
// ONNX TensorProto files (`input_0.pb` in the ONNX test data, inputs of `spore run`) as tensors.
// The bytes are untrusted: every size is checked against the declared dtype and shape before
// anything is allocated.
#include <string>
#include <string_view>

#include "spore/tensor.h"

namespace spore::io {

/// Reads a serialized onnx.TensorProto file into a new CPU tensor. Unsupported element types
/// (string, complex, uint16/32/64) and external data are clear errors naming the file.
/// `name`, when given, receives the proto's name field (the ONNX test data's input name).
Tensor read_tensor_proto(const std::string& path, std::string* name = nullptr);
/// The same from bytes in memory; `what` names the source in messages.
Tensor parse_tensor_proto(std::string_view bytes, const std::string& what = "TensorProto", std::string* name = nullptr);

}  // namespace spore::io
