// SPDX-License-Identifier: Apache-2.0
#include "io/onnx/proto_tensor.h"

#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "io/onnx/tensor_proto.h"

namespace spore::io::onnx_detail {

using onnx::TensorProto;

std::optional<DType> dtype_from_onnx(int32_t t) {
  switch (t) {
    case TensorProto::FLOAT: return DType::Float32;
    case TensorProto::UINT8: return DType::UInt8;
    case TensorProto::INT8: return DType::Int8;
    case TensorProto::INT16: return DType::Int16;
    case TensorProto::INT32: return DType::Int32;
    case TensorProto::INT64: return DType::Int64;
    case TensorProto::BOOL: return DType::Bool;
    case TensorProto::FLOAT16: return DType::Float16;
    case TensorProto::DOUBLE: return DType::Float64;
    case TensorProto::BFLOAT16: return DType::BFloat16;
    default: return std::nullopt;
  }
}

std::string onnx_dtype_name(int32_t t) {
  if (TensorProto::DataType_IsValid(t)) return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(t));
  return "unknown data type " + std::to_string(t);
}

namespace {

// Copies typed-field values (int32_data holds every type narrower than 32 bits, float16 as bits).
template <class Src>
void copy_field(const Tensor& out, const Src& field, int32_t onnx_type) {
  const int64_t n = out.numel();
  auto* dst = static_cast<unsigned char*>(out.data_ptr());
  for (int64_t i = 0; i < n; ++i) {
    const auto v = field.Get(static_cast<int>(i));
    switch (out.dtype()) {
      case DType::Float32: { float x = static_cast<float>(v); std::memcpy(dst + 4 * i, &x, 4); break; }
      case DType::Float64: { double x = static_cast<double>(v); std::memcpy(dst + 8 * i, &x, 8); break; }
      case DType::Int64: { int64_t x = static_cast<int64_t>(v); std::memcpy(dst + 8 * i, &x, 8); break; }
      case DType::Int32: { int32_t x = static_cast<int32_t>(v); std::memcpy(dst + 4 * i, &x, 4); break; }
      case DType::Int16: { int16_t x = static_cast<int16_t>(v); std::memcpy(dst + 2 * i, &x, 2); break; }
      case DType::Float16:
      case DType::BFloat16: { uint16_t x = static_cast<uint16_t>(v); std::memcpy(dst + 2 * i, &x, 2); break; }
      case DType::Int8: { int8_t x = static_cast<int8_t>(v); std::memcpy(dst + i, &x, 1); break; }
      case DType::UInt8: { uint8_t x = static_cast<uint8_t>(v); std::memcpy(dst + i, &x, 1); break; }
      case DType::Bool: { bool x = v != 0; std::memcpy(dst + i, &x, 1); break; }
    }
  }
  (void)onnx_type;
}

}  // namespace

Tensor tensor_from_proto(const TensorProto& p, const std::string& what) {
  const auto dt = dtype_from_onnx(p.data_type());
  SPORE_CHECK(dt.has_value(), "[onnx] ", what, " has element type ", onnx_dtype_name(p.data_type()),
              ", which Spore has no dtype for (supported: float, double, float16, bfloat16, int8/16/32/64, uint8, bool)");
  SPORE_CHECK(p.data_location() != TensorProto::EXTERNAL && p.external_data_size() == 0, "[onnx] ", what,
              " keeps its data in an external file; external data is not supported (save the model with "
              "onnx.save(model, path, save_as_external_data=False))");
  SPORE_CHECK(p.dims_size() <= kMaxRank, "[onnx] ", what, " has ", p.dims_size(), " dimensions; at most ", kMaxRank,
              " are supported");
  Shape shape;
  int64_t n = 1;
  for (int64_t d : p.dims()) {
    SPORE_CHECK(d >= 0, "[onnx] ", what, " has a negative dimension ", d);
    SPORE_CHECK(d == 0 || n <= kMaxElements / d, "[onnx] ", what, " declares more than ", kMaxElements,
                " elements; the file is corrupt or too large");
    n *= d;
    shape.push_back(d);
  }
  const size_t item = dtype_size(*dt);
  const size_t want = static_cast<size_t>(n) * item;
  if (p.has_raw_data()) {
    SPORE_CHECK(p.raw_data().size() == want, "[onnx] ", what, " has ", p.raw_data().size(),
                " bytes of raw data, but its type ", onnx_dtype_name(p.data_type()), " and shape ", shape_str(shape),
                " need ", want, " bytes; the file is corrupt");
    Tensor out = Tensor::empty(shape, *dt);
    if (want) std::memcpy(out.data_ptr(), p.raw_data().data(), want);
    if (*dt == DType::Bool) {  // any non-zero byte is true; keep our bools 0/1
      auto* b = static_cast<unsigned char*>(out.data_ptr());
      for (int64_t i = 0; i < n; ++i) b[i] = b[i] != 0;
    }
    return out;
  }
  auto check_count = [&](int count, const char* field) {
    SPORE_CHECK(count == n, "[onnx] ", what, " has ", count, " values in ", field, ", but its shape ", shape_str(shape),
                " needs ", n, "; the file is corrupt");
  };
  // The counts are checked before allocating: a tiny file may declare 2^32 elements and hold none.
  switch (*dt) {
    case DType::Float32: check_count(p.float_data_size(), "float_data"); break;
    case DType::Float64: check_count(p.double_data_size(), "double_data"); break;
    case DType::Int64: check_count(p.int64_data_size(), "int64_data"); break;
    default: check_count(p.int32_data_size(), "int32_data"); break;
  }
  Tensor out = Tensor::empty(shape, *dt);
  switch (*dt) {
    case DType::Float32: copy_field(out, p.float_data(), p.data_type()); break;
    case DType::Float64: copy_field(out, p.double_data(), p.data_type()); break;
    case DType::Int64: copy_field(out, p.int64_data(), p.data_type()); break;
    default: copy_field(out, p.int32_data(), p.data_type()); break;
  }
  return out;
}

}  // namespace spore::io::onnx_detail

namespace spore::io {

Tensor parse_tensor_proto(std::string_view bytes, const std::string& what, std::string* name) {
  SPORE_CHECK(bytes.size() <= static_cast<size_t>(std::numeric_limits<int>::max()), "[onnx] ", what,
              " is larger than 2 GB, the protobuf limit");
  onnx::TensorProto p;
  SPORE_CHECK(p.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())), "[onnx] ", what,
              " is not a valid serialized onnx.TensorProto (corrupt or truncated)");
  if (name) *name = p.name();
  return onnx_detail::tensor_from_proto(p, what);
}

Tensor read_tensor_proto(const std::string& path, std::string* name) {
  std::ifstream f(path, std::ios::binary);
  SPORE_CHECK(f.good(), "[onnx] cannot open TensorProto file '", path, "'");
  std::ostringstream ss;
  ss << f.rdbuf();
  return parse_tensor_proto(ss.str(), "'" + path + "'", name);
}

}  // namespace spore::io
