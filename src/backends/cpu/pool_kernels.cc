// SPDX-License-Identifier: Apache-2.0
// Max pooling with PyTorch-style indices (float32, contiguous input). oneDNN's workspace is not
// PyTorch's flat indices (onednn_pool.cc), so this pooling ran on the reference kernel, whose
// per-element index and stride arithmetic made the recomputation in max pooling's backward the
// largest cost of a LeNet training step. This kernel does the same scan in the same order (so
// ties, NaN and all-(-inf) windows pick the same element) with the clipping hoisted out of the
// interior windows and a branch-free compare. Anything else goes to the reference kernel.
#include <algorithm>
#include <limits>
#include <vector>

#include "prims/pool.h"
#include "runtime/parallel.h"

namespace spore::cpu {
namespace {

using prims::Pool2dAttrs;
using prims::PoolKind;

// The reference kernel's step for one element: a larger value or any NaN takes the window
// (the last NaN wins, as there).
// Bitwise | and selects, no branches: on random data the compare is a coin flip.
template <class I>
inline void take(float v, I i, float& best, I& bi) {
  const bool t = (v > best) | (v != v);
  best = t ? v : best;
  bi = t ? i : bi;
}

// A row of 2x2 windows at stride 2 inside the plane (no clipping), in two loops the compiler
// vectorizes even at the baseline ISA: maxima and each window's winner (0..3) in 32-bit lanes,
// then the winners as flat indices. The first element takes the empty window (-inf) unless it
// is -inf itself, which keeps the window's first index as well: starting from it is the same.
void row_2x2(const float* __restrict r0, const float* __restrict r1, int64_t base, int64_t W, float* __restrict y,
             int64_t* __restrict idx, int64_t n) {
  constexpr int64_t kChunk = 256;
  int32_t code[kChunk];
  for (int64_t o0 = 0; o0 < n; o0 += kChunk) {
    const int64_t m = std::min(kChunk, n - o0);
    const float *a = r0 + 2 * o0, *b = r1 + 2 * o0;
    for (int64_t o = 0; o < m; ++o) {
      float best = a[2 * o];
      int32_t c = 0;
      take(a[2 * o + 1], 1, best, c);
      take(b[2 * o], 2, best, c);
      take(b[2 * o + 1], 3, best, c);
      y[o0 + o] = best;
      code[o] = c;
    }
    for (int64_t o = 0; o < m; ++o) idx[o0 + o] = base + 2 * (o0 + o) + (code[o] & 1) + (code[o] >> 1) * W;
  }
}

// Output columns [ob, oe) of one output row whose windows lie inside the plane's columns
// (w0 = ow * SW - pw >= 0, w0 + kw <= W), over input rows [hs, he): the scan of `take` in the
// reference order (row by row, column by column), one window position at a time across a
// chunk of columns so the compiler vectorizes it (SW is a constant: strided loads). Each
// winner is coded as (row offset) * 16 + column offset, then made a flat index.
template <int SW>
void row_interior(const float* x, int64_t W, int64_t hs, int64_t he, int64_t kw, int64_t pw, int64_t ob, int64_t oe,
                  float* __restrict y, int64_t* __restrict idx) {
  constexpr int64_t kChunk = 256;
  float best[kChunk];
  int32_t code[kChunk];
  for (int64_t o0 = ob; o0 < oe; o0 += kChunk) {
    const int64_t m = std::min(kChunk, oe - o0);
    const int64_t c0 = o0 * SW - pw;  // first column of window o0
    {
      const float* __restrict p = x + hs * W + c0;
      for (int64_t o = 0; o < m; ++o) best[o] = p[o * SW], code[o] = 0;
    }
    for (int64_t h = hs; h < he; ++h)
      for (int64_t c = 0; c < kw; ++c) {
        if (h == hs && c == 0) continue;
        const float* __restrict p = x + h * W + c0 + c;
        const int32_t cc = static_cast<int32_t>((h - hs) * 16 + c);
        for (int64_t o = 0; o < m; ++o) {
          const float v = p[o * SW];
          const bool t = (v > best[o]) | (v != v);
          best[o] = t ? v : best[o];
          code[o] = t ? cc : code[o];
        }
      }
    for (int64_t o = 0; o < m; ++o) {
      y[o0 + o] = best[o];
      idx[o0 + o] = (hs + (code[o] >> 4)) * W + c0 + o * SW + (code[o] & 15);
    }
  }
}

// One (H, W) plane -> (OH, OW) maxima and their flat indices h * W + w.
void pool_plane(const Pool2dAttrs& a, const float* x, int64_t H, int64_t W, float* y, int64_t* idx, int64_t OH,
                int64_t OW) {
  const int64_t kh = a.kernel[0], kw = a.kernel[1], sh = a.stride[0], sw = a.stride[1];
  const int64_t ph = a.padding[0], pw = a.padding[1];
  if (kh == 2 && kw == 2 && sh == 2 && sw == 2 && ph == 0 && pw == 0 && 2 * OH <= H && 2 * OW <= W) {
    for (int64_t oh = 0; oh < OH; ++oh)
      row_2x2(x + 2 * oh * W, x + (2 * oh + 1) * W, 2 * oh * W, W, y + oh * OW, idx + oh * OW, OW);
    return;
  }
  // The output columns whose windows need no clipping: [ob, oe).
  int64_t ob = OW, oe = OW;
  if ((sw == 1 || sw == 2) && kw <= 16) {
    ob = std::min<int64_t>(OW, (pw + sw - 1) / sw);
    oe = W - kw + pw >= 0 ? std::min<int64_t>(OW, (W - kw + pw) / sw + 1) : 0;
    if (oe <= ob) ob = oe = OW;
  }
  for (int64_t oh = 0; oh < OH; ++oh) {
    const int64_t h0 = std::max<int64_t>(oh * sh - ph, 0), h1 = std::min(oh * sh - ph + kh, H);
    if (ob < oe && h0 < h1) {
      if (sw == 1) row_interior<1>(x, W, h0, h1, kw, pw, ob, oe, y + oh * OW, idx + oh * OW);
      else row_interior<2>(x, W, h0, h1, kw, pw, ob, oe, y + oh * OW, idx + oh * OW);
    }
    for (int64_t ow = 0; ow < OW; ++ow) {
      if (ow == ob && ob < oe && h0 < h1) ow = oe;
      if (ow >= OW) break;
      const int64_t w0 = std::max<int64_t>(ow * sw - pw, 0), w1 = std::min(ow * sw - pw + kw, W);
      float best = -std::numeric_limits<float>::infinity();
      int64_t bi = h0 * W + w0;
      for (int64_t h = h0; h < h1; ++h)
        for (int64_t w = w0; w < w1; ++w) take(x[h * W + w], h * W + w, best, bi);
      y[oh * OW + ow] = best;
      idx[oh * OW + ow] = bi;
    }
  }
}

// The planes of x pooled into y, each plane's winners into `idx` (null: a per-thread scratch
// row, dropped).
void pool_planes(const Pool2dAttrs& a, const Buffer& x, const Buffer& y, int64_t* idx) {
  const int64_t H = x.shape[2], W = x.shape[3], OH = y.shape[2], OW = y.shape[3];
  const float* xp = x.ptr<float>();
  float* yp = y.ptr<float>();
  runtime::parallel_items(x.shape[0] * x.shape[1], OH * OW * a.kernel[0] * a.kernel[1], [&](int64_t p) {
    thread_local std::vector<int64_t> scratch;
    if (idx == nullptr && scratch.size() < static_cast<size_t>(OH * OW)) scratch.resize(static_cast<size_t>(OH * OW));
    pool_plane(a, xp + p * H * W, H, W, yp + p * OH * OW, idx ? idx + p * OH * OW : scratch.data(), OH, OW);
  });
}

void run(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const Pool2dAttrs*>(attrs);
  const Buffer &x = in[0], &y = out[0], &i = out[1];
  if (y.numel() == 0) return;
  if (!x.contiguous() || !y.contiguous() || !i.contiguous()) return prims::pool2d_reference(a, in, out);
  pool_planes(a, x, y, i.ptr<int64_t>());
}

bool supports(const void* attrs, std::span<const TensorType> in) {
  const auto& a = *static_cast<const Pool2dAttrs*>(attrs);
  return in[0].dtype == DType::Float32 && a.kind == PoolKind::Max && a.with_indices;
}

// Max pooling without indices (a forward), plain NCHW float32: the same scan, the winners
// written to a scratch row and dropped. oneDNN 2.6 runs plain-NCHW pooling on its
// `simple_nchw` kernel, 10x slower than this one on an AVX2 EPYC (a LeNet-5 training step's
// 2x2 pool of (128, 6, 28, 28): 5.3 ms against 0.5 ms with the indices). Channels-last inputs,
// where oneDNN's jit pooling is fast, stay with it.
void run_values(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const Pool2dAttrs*>(attrs);
  const Buffer &x = in[0], &y = out[0];
  if (y.numel() == 0) return;
  if (!x.contiguous() || !y.contiguous()) return prims::pool2d_reference(a, in, out);
  pool_planes(a, x, y, nullptr);
}

bool supports_values(const void* attrs, std::span<const TensorType> in) {
  const auto& a = *static_cast<const Pool2dAttrs*>(attrs);
  return in[0].dtype == DType::Float32 && a.kind == PoolKind::Max && !a.with_indices && !in[0].channels_last;
}

[[maybe_unused]] const bool registered = [] {
  prims::pool2d_primitive();
  find_primitive("pool2d")->add_kernel(
      {.device = DeviceType::CPU, .name = "cpu_max_indices", .priority = 5, .supports = supports, .run = run});
  // Above oneDNN's (priority 10) where it applies.
  find_primitive("pool2d")->add_kernel(
      {.device = DeviceType::CPU, .name = "cpu_max", .priority = 11, .supports = supports_values, .run = run_values,
       // A plan may still keep a conv chain channels-last through the pool: the step is then
       // dispatched again for those types and oneDNN's kernel runs it (lower_plan.cc).
       .takes_channels_last = [](const void*, std::span<const TensorType>, int input) { return input <= 0; }});
  return true;
}();

}  // namespace
}  // namespace spore::cpu
