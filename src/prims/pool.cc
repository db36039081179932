// SPDX-License-Identifier: Apache-2.0
// The pool2d and adaptive_avg_pool2d primitives: inference and plain C++ reference kernels.
// The oneDNN kernel for float32 pool2d (without indices) is in src/backends/cpu/onednn_pool.cc.
#include "prims/pool.h"

#include <cmath>
#include <limits>

#include "runtime/parallel.h"

namespace spore::prims {
namespace {

void check_input(const char* name, std::span<const TensorType> in) {
  SPORE_CHECK(in.size() == 1 && in[0].shape.size() == 4, "[", name, "] needs one (N, C, H, W) input, got ",
              in.size() == 1 ? shape_str(in[0].shape) : std::string("several"));
  SPORE_CHECK(is_floating(in[0].dtype), "[", name, "] needs a floating tensor, got ", dtype_name(in[0].dtype));
}

void infer_pool(const Pool2dAttrs& a, std::span<const TensorType> in, OutTypes& out) {
  check_input("pool2d", in);
  SPORE_CHECK(a.kernel.size() == 2 && a.stride.size() == 2 && a.padding.size() == 2,
              "[pool2d] kernel, stride and padding need 2 entries each");
  const Shape& x = in[0].shape;
  Shape s = {x[0], x[1]};
  for (int i = 0; i < 2; ++i) {
    SPORE_CHECK(a.kernel[i] >= 1 && a.stride[i] >= 1 && a.padding[i] >= 0 && 2 * a.padding[i] <= a.kernel[i],
                "[pool2d] needs kernel >= 1, stride >= 1 and 0 <= padding <= kernel / 2, got kernel ", a.kernel[i],
                ", stride ", a.stride[i], ", padding ", a.padding[i]);
    int64_t o = pool_out_size(x[i + 2], a.kernel[i], a.stride[i], a.padding[i], a.ceil_mode);
    SPORE_CHECK(o >= 1, "[pool2d] input ", shape_str(x), " is too small for a ", a.kernel[0], "x", a.kernel[1],
                " window with padding ", a.padding[i]);
    s.push_back(o);
  }
  out.add(in[0].dtype, s);
  if (a.with_indices) {
    SPORE_CHECK(a.kind == PoolKind::Max, "[pool2d] indices exist only for max pooling");
    out.add(DType::Int64, s);
  }
}

void infer_adaptive(const AdaptivePool2dAttrs& a, std::span<const TensorType> in, OutTypes& out) {
  check_input("adaptive_avg_pool2d", in);
  SPORE_CHECK(a.output_size.size() == 2 && a.output_size[0] >= 1 && a.output_size[1] >= 1,
              "[adaptive_avg_pool2d] output_size needs 2 positive entries");
  const Shape& x = in[0].shape;
  out.add(in[0].dtype, {x[0], x[1], a.output_size[0], a.output_size[1]});
}

template <class T>
using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Calls f(plane index, input plane pointer, output plane offset) for every (n, c) plane.
template <class T, class F>
void for_planes(const Buffer& x, const Buffer& y, int64_t per_plane, F&& f) {
  const int64_t C = x.shape[1];
  runtime::parallel_items(x.shape[0] * C, per_plane, [&](int64_t p) {
    const int64_t n = p / C, c = p % C;
    f(x.ptr<T>() + n * x.strides[0] + c * x.strides[1], n * y.strides[0] + c * y.strides[1]);
  });
}

template <class T>
void pool_typed(const Pool2dAttrs& a, const Buffer& x, std::span<const Buffer> out) {
  const Buffer& y = out[0];
  const int64_t H = x.shape[2], W = x.shape[3], OH = y.shape[2], OW = y.shape[3];
  const int64_t sh = x.strides[2], sw = x.strides[3];
  const int64_t kh = a.kernel[0], kw = a.kernel[1], st_h = a.stride[0], st_w = a.stride[1];
  const int64_t ph = a.padding[0], pw = a.padding[1];
  int64_t* I = a.with_indices ? out[1].ptr<int64_t>() : nullptr;
  for_planes<T>(x, y, OH * OW * kh * kw, [&](const T* xp, int64_t yoff) {
    T* yp = y.ptr<T>() + yoff;
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t h0 = oh * st_h - ph, w0 = ow * st_w - pw;
        int64_t h1 = std::min(h0 + kh, H + ph), w1 = std::min(w0 + kw, W + pw);
        const int64_t pool_size = (h1 - h0) * (w1 - w0);
        h0 = std::max<int64_t>(h0, 0), w0 = std::max<int64_t>(w0, 0);
        h1 = std::min(h1, H), w1 = std::min(w1, W);
        if (a.kind == PoolKind::Max) {
          Acc<T> best = -std::numeric_limits<Acc<T>>::infinity();
          int64_t bi = h0 * W + w0;
          for (int64_t h = h0; h < h1; ++h)
            for (int64_t w = w0; w < w1; ++w) {
              Acc<T> v = static_cast<Acc<T>>(xp[h * sh + w * sw]);
              if (v > best || std::isnan(v)) best = v, bi = h * W + w;  // NaN wins, as in PyTorch
            }
          yp[oh * y.strides[2] + ow * y.strides[3]] = static_cast<T>(best);
          if (I) I[yoff + oh * OW + ow] = bi;
        } else {
          Acc<T> sum = 0;
          for (int64_t h = h0; h < h1; ++h)
            for (int64_t w = w0; w < w1; ++w) sum += static_cast<Acc<T>>(xp[h * sh + w * sw]);
          int64_t div = a.count_include_pad ? pool_size : (h1 - h0) * (w1 - w0);
          yp[oh * y.strides[2] + ow * y.strides[3]] = static_cast<T>(sum / static_cast<Acc<T>>(div));
        }
      }
  });
}

template <class T>
void adaptive_typed(const Buffer& x, const Buffer& y) {
  const int64_t H = x.shape[2], W = x.shape[3], OH = y.shape[2], OW = y.shape[3];
  const int64_t sh = x.strides[2], sw = x.strides[3];
  for_planes<T>(x, y, H * W, [&](const T* xp, int64_t yoff) {
    T* yp = y.ptr<T>() + yoff;
    for (int64_t oh = 0; oh < OH; ++oh) {
      int64_t h0 = oh * H / OH, h1 = ((oh + 1) * H + OH - 1) / OH;
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t w0 = ow * W / OW, w1 = ((ow + 1) * W + OW - 1) / OW;
        Acc<T> sum = 0;
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t w = w0; w < w1; ++w) sum += static_cast<Acc<T>>(xp[h * sh + w * sw]);
        yp[oh * OW + ow] = static_cast<T>(sum / static_cast<Acc<T>>((h1 - h0) * (w1 - w0)));
      }
    }
  });
}

template <class F>
void visit_float(DType t, F&& f) {
  switch (t) {
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    case DType::Float16: return f(Half{});
    case DType::BFloat16: return f(BFloat16{});
    default: SPORE_ASSERT(false, "pool kernel on ", dtype_name(t));
  }
}

Cost pool_cost(std::span<const TensorType> in, std::span<const TensorType> out, double window) {
  double bytes = static_cast<double>(numel_of(in[0].shape)) * dtype_size(in[0].dtype);
  for (auto& t : out) bytes += static_cast<double>(numel_of(t.shape)) * dtype_size(t.dtype);
  return {static_cast<double>(numel_of(out[0].shape)) * window, bytes};
}

const Primitive& pool_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<Pool2dAttrs> spec;
    spec.name = "pool2d";
    spec.num_inputs = 1;
    spec.infer = infer_pool;
    spec.cost = [](const Pool2dAttrs& a, std::span<const TensorType> in, std::span<const TensorType> out) {
      return pool_cost(in, out, static_cast<double>(a.kernel[0] * a.kernel[1]));
    };
    spec.residuals = {.inputs = 1, .outputs = 0b11};
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "reference",
                  .run = [](const void* a, std::span<const Buffer> in, std::span<const Buffer> out,
                            const KernelContext&) { pool2d_reference(*static_cast<const Pool2dAttrs*>(a), in, out); }});
    return q;
  }();
  return p;
}

const Primitive& adaptive_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<AdaptivePool2dAttrs> spec;
    spec.name = "adaptive_avg_pool2d";
    spec.num_inputs = 1;
    spec.infer = infer_adaptive;
    spec.cost = [](const AdaptivePool2dAttrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
      return pool_cost(in, out, static_cast<double>(numel_of(in[0].shape)) / std::max<double>(1, numel_of(out[0].shape)));
    };
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "reference",
                  .run = [](const void*, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
                    if (out[0].numel() == 0) return;
                    visit_float(in[0].dtype, [&](auto tag) { adaptive_typed<decltype(tag)>(in[0], out[0]); });
                  }});
    return q;
  }();
  return p;
}

[[maybe_unused]] const bool registered = (pool_def(), adaptive_def(), true);

}  // namespace

int64_t pool_out_size(int64_t in, int64_t k, int64_t s, int64_t p, bool ceil_mode) {
  int64_t num = in + 2 * p - (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
  int64_t o = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
  if (ceil_mode && (o - 1) * s >= in + p) --o;
  return o;
}

void pool2d_reference(const Pool2dAttrs& a, std::span<const Buffer> in, std::span<const Buffer> out) {
  if (out[0].numel() == 0) return;
  visit_float(in[0].dtype, [&](auto tag) { pool_typed<decltype(tag)>(a, in[0], out); });
}

const Primitive& pool2d_primitive() { return pool_def(); }
const Primitive& adaptive_avg_pool2d_primitive() { return adaptive_def(); }

}  // namespace spore::prims
