// SPDX-License-Identifier: Apache-2.0
#include "prims/strided_copy.h"

#include <array>
#include <cstring>

#include "backends/cpu/elementwise_loop.h"

namespace spore::prims {

bool is_dense(const Buffer& b) {
  if (b.ndim > 16) return false;
  std::array<int, 16> order{};
  const int n = cpu::memory_order(b, order);
  int64_t expect = 1;
  for (int i = n; i-- > 0;) {
    if (b.strides[order[static_cast<size_t>(i)]] != expect) return false;
    expect *= b.shape[order[static_cast<size_t>(i)]];
  }
  return true;
}

void strided_copy(const Buffer& src, const Buffer& dst) {
  const size_t isz = dtype_size(dst.dtype);
  cpu::elementwise_loop<1>(std::span<const Buffer>(&src, 1), dst, [&](const char* const* x, char* y, int64_t n) {
    std::memcpy(y, x[0], static_cast<size_t>(n) * isz);
  });
}

}  // namespace spore::prims
