// SPDX-License-Identifier: Apache-2.0
// oneDNN kernel for pool2d (float32, bfloat16). oneDNN's max drops NaN (a window holding NaN
// gives its other maximum, or -FLT_MAX) where PyTorch propagates it: max pooling scans a
// contiguous input for NaN first (one vectorized read, far cheaper than the scalar reference
// kernel) and hands inputs with NaN, or strided ones, to the reference kernel. oneDNN's
// workspace is not PyTorch's flat indices, so with_indices stays there too, as do average
// windows that run past the padding in ceil_mode (PyTorch then divides by the clipped window,
// oneDNN by the full kernel).
#include <atomic>
#include <optional>

#include "backends/cpu/onednn_common.h"
#include "prims/pool.h"
#include "runtime/parallel.h"

namespace spore::cpu::onednn {
namespace {

using prims::Pool2dAttrs;
using prims::PoolKind;

// Right padding that makes oneDNN's floor-mode size equal PyTorch's (ceil-mode) size.
int64_t right_pad(const Pool2dAttrs& a, int i, int64_t in) {
  int64_t o = prims::pool_out_size(in, a.kernel[i], a.stride[i], a.padding[i], a.ceil_mode);
  return std::max(a.padding[i], (o - 1) * a.stride[i] + a.kernel[i] - in - a.padding[i]);
}

// NaN test on the bits (exponent all ones, mantissa non-zero): integer compares vectorize,
// float self-compares in a reduction do not.
template <class U>
bool any_nan_bits(const U* p, int64_t n, U mask, U inf) {
  std::atomic<bool> found{false};
  runtime::parallel_for(n, 1 << 16, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e && !found.load(std::memory_order_relaxed); c += 4096) {
      U hit = 0;
      for (int64_t i = c, end = std::min(e, c + 4096); i < end; ++i) hit |= static_cast<U>((p[i] & mask) > inf);
      if (hit) found = true;
    }
  });
  return found;
}

// Row-major or channels-last: the buffer's elements fill numel() consecutive slots, which the
// NaN scan reads in memory order.
bool dense(const Buffer& x) { return x.contiguous() || is_channels_last(x); }

// y's shape with channels-last or row-major strides.
std::vector<int64_t> layout_strides(const Buffer& y, bool channels_last) {
  const Shape s(std::span<const Dim>(y.shape, static_cast<size_t>(y.ndim)));
  const Strides st = channels_last ? channels_last_strides(s) : contiguous_strides(s);
  return {st.begin(), st.end()};
}

bool has_nan(const Buffer& x) {
  if (x.dtype == DType::Float32)
    return any_nan_bits(static_cast<const uint32_t*>(x.data), x.numel(), 0x7fffffffu, 0x7f800000u);
  return any_nan_bits(static_cast<const uint16_t*>(x.data), x.numel(), uint16_t{0x7fff}, uint16_t{0x7f80});
}

class PoolKernel final : public PreparedKernel {
 public:
  PoolKernel(const Pool2dAttrs& a, size_t scratch) : a_(a), scratch_(scratch) {}
  size_t scratch_bytes() const override { return scratch_; }

  // One primitive per input and output stride pattern (the dispatch cache keys on shapes only);
  // prepare creates the one of the types it was prepared for (row-major, or channels-last in a
  // plan's conv chain).
  const auto& entry(const Buffer& x, const Buffer& y) const {
    const Buffer xy[2] = {x, y};
    for (Entry& e : cache_)
      if (same_strides(e.key, xy)) return e;
    std::vector<int64_t> key(x.strides, x.strides + 4);
    key.insert(key.end(), y.strides, y.strides + 4);
    return create(std::move(key), x, y);
  }

  void run(std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext& ctx) const override {
    if (out[0].numel() == 0) return;
    const auto* e = &entry(in[0], out[0]);
    if (!e->prim || (a_.kind == PoolKind::Max && (!dense(in[0]) || has_nan(in[0]))))
      return prims::pool2d_reference(a_, in, out);
    if (e->dst_r && ctx.scratch_bytes < e->dst.get_size()) return prims::pool2d_reference(a_, in, out);
    dnnl::memory dst = wrap(e->dst, e->dst_r ? ctx.scratch : out[0].data);
    e->prim->execute(stream(), {{DNNL_ARG_SRC, wrap(e->src, in[0].data)}, {DNNL_ARG_DST, dst}});
    if (e->dst_r) {
      dnnl::memory user = wrap(e->user_dst, out[0].data);
      e->dst_r->execute(stream(), dst, user);
    }
    stream().wait();
  }

 private:
  struct Entry {
    std::vector<int64_t> key;
    std::optional<dnnl::pooling_forward> prim;
    dnnl::memory::desc src, dst, user_dst;
    std::optional<dnnl::reorder> dst_r;  // x and y in different layouts: y is made in x's, then reordered
  };

  Entry& create(std::vector<int64_t> key, const Buffer& x, const Buffer& y) const {
    Entry e;
    e.key = std::move(key);
    try {
      e.src = strided_desc(dims_of(x), strides_of(x), x.dtype);
      e.dst = e.user_dst = strided_desc(dims_of(y), strides_of(y), y.dtype);
      // oneDNN has only its reference kernel for a channels-last x with a plain y (or the
      // reverse), which a plan's layouts can give: y is then made in x's layout and reordered.
      if (is_channels_last(x) != is_channels_last(y)) {
        e.dst = strided_desc(dims_of(y), layout_strides(y, is_channels_last(x)), y.dtype);
        e.dst_r.emplace(dnnl::reorder::primitive_desc(engine(), e.dst, engine(), e.user_dst));
      }
      auto alg = a_.kind == PoolKind::Max ? dnnl::algorithm::pooling_max
                 : a_.count_include_pad   ? dnnl::algorithm::pooling_avg_include_padding
                                          : dnnl::algorithm::pooling_avg_exclude_padding;
      dnnl::memory::dims st = {a_.stride[0], a_.stride[1]}, k = {a_.kernel[0], a_.kernel[1]};
      dnnl::memory::dims pl = {a_.padding[0], a_.padding[1]};
      dnnl::memory::dims pr = {right_pad(a_, 0, x.shape[2]), right_pad(a_, 1, x.shape[3])};
      dnnl::pooling_forward::desc d(dnnl::prop_kind::forward_inference, alg, e.src, e.dst, st, k, pl, pr);
      e.prim.emplace(dnnl::pooling_forward::primitive_desc(d, engine()));
    } catch (const dnnl::error&) {
      e.prim.reset();  // the reference kernel serves this layout
    }
    cache_.push_back(std::move(e));
    return cache_.back();
  }

  Pool2dAttrs a_;
  size_t scratch_ = 0;
  mutable std::vector<Entry> cache_;  // per thread, like the dispatch cache
};

bool supports(const void* attrs, std::span<const TensorType> in) {
  const auto& a = *static_cast<const Pool2dAttrs*>(attrs);
  DType t = in[0].dtype;
  if ((t != DType::Float32 && t != DType::BFloat16) || a.with_indices) return false;
  if (a.kind == PoolKind::Avg && a.count_include_pad)
    for (int i = 0; i < 2; ++i)
      if (right_pad(a, i, in[0].shape[i + 2]) != a.padding[i]) return false;
  return true;
}

std::shared_ptr<PreparedKernel> prepare(const Pool2dAttrs& a, std::span<const TensorType> in,
                                        std::span<const TensorType> out) {
  // Scratch for a result made in the other layout (see create).
  const size_t scratch = in[0].channels_last != out[0].channels_last
                             ? static_cast<size_t>(numel_of(out[0].shape)) * dtype_size(out[0].dtype)
                             : 0;
  auto k = std::make_shared<PoolKernel>(a, scratch);
  TypeBuffers ib(in), ob(out);
  if (ob.buffers[0].numel() > 0) k->entry(ib.buffers[0], ob.buffers[0]);
  return k;
}

[[maybe_unused]] const bool registered = [] {
  prims::pool2d_primitive();
  find_primitive("pool2d")->add_kernel(
      {.device = DeviceType::CPU, .name = "onednn", .priority = 10, .supports = supports,
       .prepare = [](const void* a, std::span<const TensorType> in, std::span<const TensorType> out)
           -> std::shared_ptr<PreparedKernel> { return prepare(*static_cast<const Pool2dAttrs*>(a), in, out); },
       // oneDNN's pooling computes nhwc as fast as NCHW: a ResNet stem's max pool keeps the
       // conv chain channels-last. (The NaN fallback reads and writes any strides.)
       .takes_channels_last = [](const void*, std::span<const TensorType>, int input) { return input <= 0; }});
  return true;
}();

}  // namespace
}  // namespace spore::cpu::onednn
