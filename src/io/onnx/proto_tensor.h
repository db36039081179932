// SPDX-License-Identifier: Apache-2.0
#pragma once
// Conversions between ONNX protobuf messages and our tensors and dtypes (internal to the ONNX
// importer: only src/io/onnx may include the onnx headers).
#include <optional>
#include <string>

#include "onnx/onnx_pb.h"
#include "spore/tensor.h"

namespace spore::io::onnx_detail {

/// Largest tensor an ONNX file may declare (elements); bounds allocation on untrusted input.
inline constexpr int64_t kMaxElements = int64_t{1} << 32;

/// Our dtype for an ONNX TensorProto.DataType, or nullopt when we have none (string, uint16...).
std::optional<DType> dtype_from_onnx(int32_t t);
/// The ONNX name of a data type ("FLOAT", "UINT16") for messages.
std::string onnx_dtype_name(int32_t t);
/// A new CPU tensor holding `p`'s values; `what` names it in errors (e.g. "initializer 'W'").
Tensor tensor_from_proto(const onnx::TensorProto& p, const std::string& what);

}  // namespace spore::io::onnx_detail
