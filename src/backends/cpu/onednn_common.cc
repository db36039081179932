// SPDX-License-Identifier: Apache-2.0
#include "backends/cpu/onednn_common.h"

namespace spore::cpu::onednn {

const dnnl::engine& engine() {
  static const dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

dnnl::stream& stream() {
  thread_local dnnl::stream s(engine());
  return s;
}

dnnl::memory::data_type dnnl_type(DType t) {
  using dt = dnnl::memory::data_type;
  switch (t) {
    case DType::Float32: return dt::f32;
    case DType::BFloat16: return dt::bf16;
    case DType::Float16: return dt::f16;
    case DType::Int32: return dt::s32;
    case DType::Int8: return dt::s8;
    case DType::UInt8: return dt::u8;
    default: return dt::undef;
  }
}

dnnl::memory::desc strided_desc(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, DType t) {
  return dnnl::memory::desc(dnnl::memory::dims(dims.begin(), dims.end()), dnnl_type(t),
                            dnnl::memory::dims(strides.begin(), strides.end()));
}

dnnl::memory::desc plain_desc(const std::vector<int64_t>& dims, DType t) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * std::max<int64_t>(dims[i + 1], 1);
  return strided_desc(dims, s, t);
}

dnnl::memory::desc type_desc(const TensorType& t) {
  const Strides st = storage_strides(t);
  return strided_desc(dims_of(t), std::vector<int64_t>(st.begin(), st.end()), t.dtype);
}

dnnl::memory::desc buffer_desc(const Buffer& b) { return strided_desc(dims_of(b), strides_of(b), b.dtype); }

TypeBuffers::TypeBuffers(std::span<const TensorType> types) {
  strides.reserve(types.size());
  for (const TensorType& t : types) {
    strides.push_back(storage_strides(t));
    buffers.push_back({nullptr, t.dtype, static_cast<int>(t.shape.size()), t.shape.data(), strides.back().data()});
  }
}

bool is_channels_last(const Buffer& b) {
  const Strides want = channels_last_strides(Shape(b.shape, b.shape + b.ndim));
  for (int d = 0; d < b.ndim; ++d)
    if (b.shape[d] != 1 && b.strides[d] != want[d]) return false;
  return true;
}

std::vector<int64_t> dims_of(const Buffer& b) { return {b.shape, b.shape + b.ndim}; }
std::vector<int64_t> strides_of(const Buffer& b) { return {b.strides, b.strides + b.ndim}; }
std::vector<int64_t> dims_of(const TensorType& t) { return {t.shape.begin(), t.shape.end()}; }

}  // namespace spore::cpu::onednn
