// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared oneDNN plumbing for the CPU backend. Only src/backends/cpu/onednn_* files include
// oneDNN headers (architecture rule), so this header is private to them.
#include <oneapi/dnnl/dnnl.hpp>

#include <vector>

#include "core/primitive.h"

namespace spore::cpu::onednn {

/// The one CPU engine. oneDNN runs on OpenMP, the same runtime as our own kernels.
const dnnl::engine& engine();
/// This thread's stream (in-order; the dispatch cache is per thread too).
dnnl::stream& stream();

/// The oneDNN data type of a dtype, or undef when oneDNN has none for it.
dnnl::memory::data_type dnnl_type(DType t);

/// A memory descriptor of `dims` with element `strides` (any order, 0 not allowed by oneDNN:
/// callers map broadcast dims to size 1 first).
dnnl::memory::desc strided_desc(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, DType t);
/// A plain row-major descriptor.
dnnl::memory::desc plain_desc(const std::vector<int64_t>& dims, DType t);
/// The descriptor of a value of type `t` as a plan stores it: row-major, or channels-last.
dnnl::memory::desc type_desc(const TensorType& t);
/// A buffer's descriptor, by its strides.
dnnl::memory::desc buffer_desc(const Buffer& b);

/// A oneDNN memory object over a buffer we own (no copy).
inline dnnl::memory wrap(const dnnl::memory::desc& d, const void* p) {
  return dnnl::memory(d, engine(), const_cast<void*>(p));
}

/// Data-less buffers with the strides of `types` (row-major, or channels-last: storage_strides):
/// prepared kernels use them to create their primitives for those layouts in prepare, not on
/// the first call.
struct TypeBuffers {
  explicit TypeBuffers(std::span<const TensorType> types);
  std::vector<Strides> strides;
  std::vector<Buffer> buffers;
};

/// True when `key` holds exactly the strides of `bufs`, in order (checked without allocating:
/// this runs on every call of a prepared kernel).
inline bool same_strides(const std::vector<int64_t>& key, std::span<const Buffer> bufs) {
  size_t k = 0;
  for (const Buffer& b : bufs)
    for (int i = 0; i < b.ndim; ++i, ++k)
      if (k >= key.size() || key[k] != b.strides[i]) return false;
  return k == key.size();
}

/// True when the buffer's strides are channels-last (channels_last_strides; size-1 dims aside).
bool is_channels_last(const Buffer& b);

/// Dims and strides of a buffer as vectors.
std::vector<int64_t> dims_of(const Buffer& b);
std::vector<int64_t> strides_of(const Buffer& b);
std::vector<int64_t> dims_of(const TensorType& t);

}  // namespace spore::cpu::onednn
