// SPDX-License-Identifier: Apache-2.0
// In-place updates. They write into the destination's storage and bump its version counter, so
// a tape that saved the old contents for a backward pass detects the change and fails clearly
// instead of computing a wrong gradient (shared/ARCHITECTURE.md, "PyNative"). Under jit or vmap
// the write is functionalized by the trace (shared/ARCHITECTURE.md, "State"): later reads see the
// new value, and a written input or captured tensor becomes state that the graph updates.
#include <utility>
#include <cstring>

#include "prims/strided_copy.h"

#include "runtime/dispatch.h"
#include "runtime/trace_hooks.h"
#include "spore/ops.h"

namespace spore::ops {
namespace {

Buffer buffer_of(const Tensor& t, void* data) {
  return Buffer{data, t.dtype(), static_cast<int>(t.dim()), t.shape().data(), t.strides().data()};
}

// True when the elements of `a` and `b` may share bytes: the same storage and intersecting
// spans (a plan's values all live in one arena storage, at disjoint offsets).
bool overlap(const Tensor& a, const Tensor& b) {
  if (a.storage() != b.storage() || a.numel() == 0 || b.numel() == 0) return false;
  auto span = [](const Tensor& t) {
    int64_t lo = t.offset(), hi = t.offset();
    for (int64_t d = 0; d < t.dim(); ++d) {
      const int64_t reach = (t.size(d) - 1) * t.strides()[static_cast<size_t>(d)];
      (reach < 0 ? lo : hi) += reach;
    }
    return std::pair{lo * static_cast<int64_t>(t.itemsize()), (hi + 1) * static_cast<int64_t>(t.itemsize())};
  };
  const auto [a0, a1] = span(a);
  const auto [b0, b1] = span(b);
  return a0 < b1 && b0 < a1;
}

}  // namespace

Tensor& copy_(Tensor& dst, const Tensor& src) {
  if (runtime::tls_open_traces != 0 && runtime::trace_hooks().write != nullptr &&
      runtime::trace_hooks().write(dst, src, "copy_", false))
    return dst;
  SPORE_CHECK(dst.device().type != DeviceType::Meta,
              "[copy_] the destination is a traced or meta tensor: in-place updates inside jit or vmap are not "
              "supported; return the new value instead");
  SPORE_CHECK(dst.impl()->trace == nullptr || runtime::tls_open_traces == 0,
              "[copy_] the destination is tracked by an open transform (grad, jvp): updating it in place would "
              "lose its history; use the out-of-place op and keep the result");
  SPORE_CHECK(src.device().type != DeviceType::Meta,
              "[copy_] the value written is a traced value inside jit or vmap; in-place updates of captured tensors "
              "inside a trace are not supported: return the new value instead");
  // The write is not recorded by transforms: a tracked value written into a buffer would lose
  // its gradient silently.
  SPORE_CHECK(src.impl()->trace == nullptr || runtime::tls_open_traces == 0,
              "[copy_] the value written is tracked by an open transform (grad, jvp); in-place writes are not "
              "differentiated, so its gradient would be lost: use the out-of-place result instead");
  const Shape& s = dst.shape();
  Tensor v = broadcast_to(src.dtype() == dst.dtype() ? src : src.to(dst.dtype()), s);
  if (overlap(v, dst)) v = v.clone();  // an overlapping source is read whole first
  if (dst.device().type == DeviceType::CPU && prims::is_dense(buffer_of(dst, dst.data_ptr()))) {
    // Runs of the destination's memory order, each input run gathered (strided, broadcast):
    // the executor copies reshaped attention heads and control-flow results through here.
    prims::strided_copy(buffer_of(v, const_cast<void*>(v.data_ptr())), buffer_of(dst, dst.data_ptr()));
    dst.storage()->bump_version();
    return dst;
  }
  v = v.contiguous();
  const int64_t n = dst.numel();
  const size_t isz = dst.itemsize();
  const char* from = static_cast<const char*>(v.data_ptr());
  char* base = static_cast<char*>(dst.data_ptr());
  std::vector<int64_t> idx(s.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * dst.strides()[d];
    std::memcpy(base + off * static_cast<int64_t>(isz), from + i * static_cast<int64_t>(isz), isz);
    for (size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < s[d]) break;
      idx[d] = 0;
    }
  }
  dst.storage()->bump_version();
  return dst;
}

Tensor& add_(Tensor& dst, const Tensor& src) { return copy_(dst, dst + src); }
Tensor& mul_(Tensor& dst, const Tensor& src) { return copy_(dst, dst * src); }
Tensor& fill_(Tensor& dst, Scalar value) { return copy_(dst, full_like(dst, value)); }

}  // namespace spore::ops
