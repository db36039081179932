// SPDX-License-Identifier: Apache-2.0
#include "io/npy_array.h"

#include <cstring>

namespace spore::io {
namespace {

void swap_bytes(uint8_t* p, size_t n, size_t itemsize) {
  for (size_t i = 0; i + itemsize <= n; i += itemsize)
    for (size_t a = 0, b = itemsize - 1; a < b; ++a, --b) std::swap(p[i + a], p[i + b]);
}

}  // namespace

Tensor npy_to_tensor(const NpyHeader& h, const std::function<void(void*, size_t)>& read, const std::string& what) {
  SPORE_CHECK(h.shape.size() <= static_cast<size_t>(kMaxRank), what, ": the array has ", h.shape.size(),
              " dimensions; Spore tensors have at most ", kMaxRank);
  // Fortran-order data is the C-order data of the transposed array.
  Shape stored;
  for (size_t i = 0; i < h.shape.size(); ++i)
    stored.push_back(h.fortran_order ? h.shape[h.shape.size() - 1 - i] : h.shape[i]);
  Tensor out = Tensor::empty(stored, h.dtype);
  auto* data = static_cast<uint8_t*>(out.data_ptr());
  if (h.data_bytes > 0) read(data, h.data_bytes);
  if (h.big_endian) swap_bytes(data, h.data_bytes, dtype_size(h.dtype));
  // A bool byte other than 0 or 1 is undefined behaviour in C++; numpy reads any non-zero as True.
  if (h.dtype == DType::Bool)
    for (uint64_t i = 0; i < h.data_bytes; ++i) data[i] = data[i] != 0;
  if (h.fortran_order && h.shape.size() > 1) {
    std::vector<int64_t> axes(h.shape.size());
    for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(axes.size() - 1 - i);
    out = out.permute(axes).contiguous();
  }
  return out;
}

Tensor decode_npy(std::span<const uint8_t> bytes, const std::string& what) {
  const NpyHeader h = parse_npy_header(bytes.first(std::min<size_t>(bytes.size(), 12 + kNpyMaxHeader)), bytes.size(), what);
  return npy_to_tensor(
      h, [&](void* dst, size_t n) { std::memcpy(dst, bytes.data() + h.data_offset, n); }, what);
}

}  // namespace spore::io
