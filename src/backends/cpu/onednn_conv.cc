// SPDX-License-Identifier: Apache-2.0
// oneDNN kernels for conv and conv_transpose (float32, bfloat16). The primitive is created in
// prepare with format_tag::any, so oneDNN picks its own layouts (nhwc for its brgemm kernels,
// nChw16c for some: ~1.5x faster than plain NCHW here, PERF-NOTES); the prepared kernel
// reorders x and w in and the result out through scratch memory when the buffers' layout
// differs. Inside plans the layout pass stores conv chains channels-last, so those reorders
// vanish (passes/plan_layout.h). Weights may change between calls (training): they are reordered
// on every call unless the caller's stamps show them unchanged (KernelContext::input_stamps).
// conv_fused (prims/conv_fused.h) runs its epilogue as post-ops.
//
// A conv whose kernel covers more positions than its output is a weight gradient in disguise
// (autodiff's conv_weight_grad: batch and channels swapped, the cotangent as the kernel).
// oneDNN's forward kernels are slow on such shapes (~20 GFLOP/s for LeNet's 28x28 kernel);
// its backward-weights primitive is built for them. Such a conv runs as that primitive with
// the first two dims of x, w and the result swapped back, through strided descriptors: the
// same sums, computed as oneDNN computes weight gradients.
#include <algorithm>
#include <cstdlib>
#include <deque>
#include <optional>
#include <unordered_map>

#include "backends/cpu/onednn_conv.h"

#include "backends/cpu/onednn_common.h"
#include "backends/cpu/onednn_post_ops.h"
#include "backends/cpu/onednn_weight_cache.h"
#include "prims/conv.h"
#include "prims/conv_fused.h"
#include "prims/conv_weight_grad.h"
#include "runtime/profile.h"

namespace spore::cpu::onednn {
namespace {

using prims::ConvAttrs;
using prims::ConvTransposeAttrs;
using dims = dnnl::memory::dims;
using tag = dnnl::memory::format_tag;

dims to_dims(const prims::IntList& v, int64_t minus = 0) {
  dims d;
  for (int64_t x : v) d.push_back(x - minus);
  return d;
}

size_t align64(size_t n) { return (n + 63) / 64 * 64; }

// What differs between conv and conv_transpose: how the user's weight tensor maps onto
// oneDNN's (G, O/G, I/G, *K) weights, and the reference kernel to fall back to.
struct Variant {
  bool transpose = false;
  bool winograd = false;          // the primitive is oneDNN's Winograd kernel (winograd_shape)
  size_t scratchpad = 0;          // the primitive's scratchpad (user mode: in the kernel's scratch)
  bool weight_grad_form = false;  // run as convolution_backward_weights, dims 0 and 1 swapped
  bool backward_weights = false;  // conv_weight_grad: x, dy in the src/weights slots, dW the result
  int64_t groups = 1;
  bool has_bias = false;
  // conv_fused: its attributes, and the post-ops the primitive computes (the rest run after it).
  const prims::ConvFusedAttrs* fused = nullptr;
  prims::Epilogue epilogue;
  PostOpPlan post;
  void (*reference)(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out,
                    const KernelContext& ctx) = nullptr;  // null for conv_fused (run_reference)
  std::shared_ptr<const void> attrs;
};

class ConvKernel final : public PreparedKernel {
 public:
  ConvKernel(Variant v, std::optional<dnnl::primitive> prim, dnnl::memory::desc src, dnnl::memory::desc wei,
             dnnl::memory::desc dst, dnnl::memory::desc bias)
      : v_(std::move(v)), prim_(std::move(prim)), src_(src), wei_(wei), dst_(dst), bias_(bias) {
    for (size_t k = 0; k < v_.post.operands.size(); ++k) {
      dnnl::algorithm alg;
      dnnl::memory::desc d;
      v_.post.ops.get_params_binary(v_.post.operands[k].index, alg, d);
      operand_descs_.push_back(d);
    }
  }

  // Reordered operands, then oneDNN's own scratchpad (Winograd's transformed tiles, a blocked
  // kernel's reduction buffers): planned in the arena with every other kernel's scratch, not
  // held per primitive by oneDNN.
  size_t scratch_bytes() const override {
    if (!prim_) return 0;
    return align64(src_.get_size()) + align64(wei_.get_size()) + align64(dst_.get_size()) + align64(v_.scratchpad);
  }

  // The reorders for the strides of x, w, the result and a summed residual (the dispatch cache
  // keys on shapes only); prepare creates those of the types it was prepared for.
  const auto& layouts_for(std::span<const Buffer> in, const Buffer& out) const {
    Buffer b[4] = {in[0], in[1], out, out};
    const size_t n = v_.post.sum_input >= 0 ? 4 : 3;
    if (n == 4) b[3] = in[static_cast<size_t>(v_.post.sum_input)];
    for (const Layouts& x : layouts_)
      if (same_strides(x.key, std::span<const Buffer>(b, n))) return x;
    std::vector<int64_t> key;
    for (size_t i = 0; i < n; ++i) key.insert(key.end(), b[i].strides, b[i].strides + b[i].ndim);
    return make_layouts(std::move(key), in, out);
  }

  void run(std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext& ctx) const override {
    if (out[0].numel() == 0) return;
    if (!prim_ || (v_.has_bias && in[2].strides[0] != 1 && in[2].shape[0] > 1) || !operands_match(v_.post, in))
      return run_reference(in, out, ctx);
    const auto* l = &layouts_for(in, out[0]);
    if (!l->ok) return run_reference(in, out, ctx);
    SPORE_ASSERT(ctx.scratch_bytes >= scratch_bytes(), "conv kernel given ", ctx.scratch_bytes,
                 " bytes of scratch, needs ", scratch_bytes());
    auto& s = stream();
    char* scratch = static_cast<char*>(ctx.scratch);
    auto place = [&](const dnnl::memory::desc& d, const dnnl::memory::desc& user, const void* p,
                     const std::optional<dnnl::reorder>& r, size_t& off) {
      if (!r) return wrap(user, p);
      dnnl::memory m = wrap(d, scratch + off);
      off += align64(d.get_size());
      return m;
    };
    size_t off = 0;
    dnnl::memory src_user = wrap(l->src_user, in[0].data), wei_user = wrap(l->wei_user, in[1].data);
    dnnl::memory src = place(src_, l->src_user, in[0].data, l->src_r, off);
    dnnl::memory wei = place(wei_, l->wei_user, in[1].data, l->wei_r, off);
    const bool wei_ready = l->wei_r && !v_.backward_weights &&
                           weight_cache_.use(in[1], ctx.input_stamps ? ctx.input_stamps[1] : 0, l, l->wei_user, wei_, wei);
    dnnl::memory dst_user = wrap(l->dst_user, out[0].data);
    dnnl::memory dst = place(dst_, l->dst_user, out[0].data, l->dst_r, off);
    if (l->src_r) l->src_r->execute(s, src_user, src);
    if (l->wei_r && !wei_ready) l->wei_r->execute(s, wei_user, wei);
    if (l->sum_r) {  // the residual goes where the conv accumulates (the `sum` post-op)
      dnnl::memory res = wrap(l->sum_user, in[static_cast<size_t>(v_.post.sum_input)].data);
      l->sum_r->execute(s, res, dst);
    }
    std::unordered_map<int, dnnl::memory> args =
        v_.weight_grad_form || v_.backward_weights
            ? std::unordered_map<int, dnnl::memory>{{DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, wei}, {DNNL_ARG_DIFF_WEIGHTS, dst}}
            : std::unordered_map<int, dnnl::memory>{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}};
    if (v_.has_bias) args.emplace(DNNL_ARG_BIAS, wrap(bias_, in[2].data));
    if (v_.scratchpad > 0) {
      const size_t pad_at = align64(src_.get_size()) + align64(wei_.get_size()) + align64(dst_.get_size());
      args.emplace(DNNL_ARG_SCRATCHPAD, wrap(dnnl::memory::desc({static_cast<int64_t>(v_.scratchpad)},
                                                                dnnl::memory::data_type::u8, tag::x),
                                             scratch + pad_at));
    }
    for (size_t k = 0; k < v_.post.operands.size(); ++k) {
      const PostOpPlan::Operand& o = v_.post.operands[k];
      args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(o.index) | DNNL_ARG_SRC_1, wrap(operand_descs_[k], in[o.input].data));
    }
    // SPORE_PROFILE=plan's rows (and tests) tell the Winograd kernel from the direct one.
    runtime::profile::note_variant(v_.winograd ? "onednn winograd" : nullptr);
    prim_->execute(s, args);
    if (l->dst_r) l->dst_r->execute(s, dst, dst_user);
    s.wait();
    if (v_.fused && v_.post.mapped < v_.fused->num_post())
      prims::run_epilogue(v_.fused->post_list(), v_.epilogue, v_.post.mapped, in, out[0], ctx);
  }

  void run_reference(std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext& ctx) const {
    if (!v_.fused) return v_.reference(v_.attrs.get(), in, out, ctx);
    prims::conv_reference(v_.fused->conv(), in.first(v_.fused->first_operand()), out);
    prims::run_epilogue(v_.fused->post_list(), v_.epilogue, 0, in, out[0], ctx);
  }

 private:
  struct Layouts {
    std::vector<int64_t> key;
    bool ok = false;
    dnnl::memory::desc src_user, wei_user, dst_user, sum_user;
    std::optional<dnnl::reorder> src_r, wei_r, dst_r, sum_r;
  };

  // The buffer with dims 0 and 1 trading places (a view: only the descriptor changes).
  static dnnl::memory::desc swapped_desc(const Buffer& b) {
    std::vector<int64_t> d = dims_of(b), st = strides_of(b);
    std::swap(d[0], d[1]);
    std::swap(st[0], st[1]);
    return strided_desc(d, st, b.dtype);
  }

  dnnl::memory::desc user_weights(const Buffer& w) const {
    const int64_t g = v_.groups, nsp = w.ndim - 2;
    dims d, st;
    if (!v_.transpose) {  // (O, I/G, *K) -> (G, O/G, I/G, *K)
      d = {g, w.shape[0] / g, w.shape[1]};
      st = {w.strides[0] * (w.shape[0] / g), w.strides[0], w.strides[1]};
    } else {  // (I, O/G, *K) -> (G, O/G, I/G, *K)
      d = {g, w.shape[1], w.shape[0] / g};
      st = {w.strides[0] * (w.shape[0] / g), w.strides[1], w.strides[0]};
    }
    for (int64_t i = 0; i < nsp; ++i) d.push_back(w.shape[i + 2]), st.push_back(w.strides[i + 2]);
    if (g == 1) d.erase(d.begin()), st.erase(st.begin());
    return strided_desc(d, st, w.dtype);
  }

  const Layouts& make_layouts(std::vector<int64_t> key, std::span<const Buffer> in, const Buffer& out) const {
    Layouts l;
    l.key = std::move(key);
    try {
      if (v_.weight_grad_form) {
        l.src_user = swapped_desc(in[0]);
        l.wei_user = swapped_desc(in[1]);
        l.dst_user = swapped_desc(out);
      } else if (v_.backward_weights) {
        l.src_user = buffer_desc(in[0]);
        l.wei_user = buffer_desc(in[1]);
        l.dst_user = user_weights(out);
      } else {
        l.src_user = buffer_desc(in[0]);
        l.wei_user = user_weights(in[1]);
        l.dst_user = buffer_desc(out);
      }
      if (l.src_user != src_) l.src_r.emplace(dnnl::reorder::primitive_desc(engine(), l.src_user, engine(), src_));
      if (l.wei_user != wei_) l.wei_r.emplace(dnnl::reorder::primitive_desc(engine(), l.wei_user, engine(), wei_));
      if (l.dst_user != dst_) l.dst_r.emplace(dnnl::reorder::primitive_desc(engine(), dst_, engine(), l.dst_user));
      if (v_.post.sum_input >= 0) {
        l.sum_user = buffer_desc(in[static_cast<size_t>(v_.post.sum_input)]);
        l.sum_r.emplace(dnnl::reorder::primitive_desc(engine(), l.sum_user, engine(), dst_));
      }
      l.ok = true;
    } catch (const dnnl::error&) {
      l.ok = false;  // e.g. stride-0 inputs: the reference kernel handles them
    }
    layouts_.push_back(std::move(l));
    return layouts_.back();
  }

  Variant v_;
  std::optional<dnnl::primitive> prim_;  // empty: oneDNN refused these attributes
  dnnl::memory::desc src_, wei_, dst_, bias_;
  std::vector<dnnl::memory::desc> operand_descs_;  // of the mapped Binary post-ops, in order
  // Per thread in PyNative (the dispatch cache) and per workspace in plans (a concurrent call of
  // a plan gets its own prepared kernels), so never used by two calls at once.
  mutable std::deque<Layouts> layouts_;  // a deque: entries stay put (the weight cache's key)
  mutable WeightCache weight_cache_;
};

dnnl::memory::desc any_desc(const Shape& s, DType t) {
  return dnnl::memory::desc(dims(s.begin(), s.end()), dnnl_type(t), tag::any);
}

dims weight_dims(const Shape& w, int64_t g, bool transpose) {
  dims d = transpose ? dims{g, w[1], w[0] / g} : dims{g, w[0] / g, w[1]};
  for (size_t i = 2; i < w.size(); ++i) d.push_back(w[i]);
  if (g == 1) d.erase(d.begin());
  return d;
}

// Winograd F(4x4, 3x3) (oneDNN's jit_wino_4x3) for float32 3x3 convs of stride 1, dilation 1,
// one group, batch >= 8, >= 64 channels: 1.2-1.9x faster than the direct kernels here for
// ResNet's 3x3 convs at batch 16, forward, backward-data and backward-weights, its reorders from
// and to channels-last included (bench/RESULTS.md). Its transforms cost more than they save on
// few channels (16: 0.3-0.6x) or a small batch (the weight transform runs every call: batch 1
// at 256 channels 14x14, 0.5x), hence the thresholds.
// It rounds differently: max abs error 3-6x the direct kernel's against exact sums (7e-6 of the
// largest output forward, 4e-5 for a weight gradient), and an infinite input becomes NaN in
// its tiles (inf - inf in the transform); docs/graph-mode.md's tolerance table. SPORE_CONV_ALGO=direct turns it off (the
// direct kernel, PyTorch's on CPU). Where oneDNN refuses it (no AVX-512, a post-op list), the
// direct kernel runs.
bool winograd_on() {
  static const bool on = [] {
    const char* e = std::getenv("SPORE_CONV_ALGO");
    return !(e && std::string(e) == "direct");
  }();
  return on;
}

}  // namespace

// Winograd's scratchpad (its transformed tiles and, for weight gradients, per-thread transformed
// weight sums) lives in the plan's arena while it runs; on ResNet-18's 512-channel layers it is
// 54 MB forward and 131 MB for the weight gradient, at the training step's memory peak (the
// start of the backward pass), which it raised from 343 to 473 MB for a 1.1x faster layer.
// Convs whose Winograd scratchpad would exceed this run direct.
constexpr size_t kWinogradMaxScratchpad = size_t{40} << 20;

bool winograd_available() {
  // Asked of oneDNN itself (a small Winograd primitive): its ISA enum is a bit set, not an order.
  static const bool available = [] {
    try {
      const dnnl::memory::desc x({8, 64, 8, 8}, dnnl::memory::data_type::f32, tag::any),
          w({64, 64, 3, 3}, dnnl::memory::data_type::f32, tag::any);
      dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_winograd, x,
                                        w, x, {1, 1}, {1, 1}, {1, 1});
      dnnl::convolution_forward::primitive_desc pd(d, engine());
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return winograd_on() && available;
}

namespace {

// `kernel`, `stride`, `dilation` as oneDNN takes them (dilation 0 = none); the problem: batch n,
// channels c in and o out, output h x w.
bool winograd_shape(const dims& kernel, const dims& stride, const dims& dilation, int64_t groups, DType t, int64_t n,
                    int64_t c, int64_t o, int64_t h, int64_t w) {
  if (!winograd_on() || t != DType::Float32 || groups != 1 || kernel.size() != 2) return false;
  for (size_t i = 0; i < 2; ++i)
    if (kernel[i] != 3 || stride[i] != 1 || dilation[i] != 0) return false;
  const int64_t tiles = n * ((h + 3) / 4) * ((w + 3) / 4);
  // The weights are transformed on every call (forward_primitive): a batch of 8 or more pays for it.
  return n >= 8 && c >= 64 && o >= 64 && h >= 7 && w >= 7 && tiles * std::min(c, o) >= 2048;
}

// conv (x: N, C, H, W -> y: N, O, H', W') and conv_transpose (x: N, O, H', W' -> y: N, C, H, W,
// the data gradient of such a conv).
template <class Attrs>
bool winograd_fits(const Attrs& a, std::span<const TensorType> in, std::span<const TensorType> out, DType t) {
  const Shape &x = in[0].shape, &w = in[1].shape, &y = out[0].shape;
  if (w.size() != 4 || x.size() != 4 || y.size() != 4) return false;
  return winograd_shape({w[2], w[3]}, to_dims(a.stride), to_dims(a.dilation, 1), a.groups, t, y[0], x[1], y[1], y[2],
                        y[3]);
}

// The conv (N, C, *S) x (O, C, *K) -> (N, O, *Q) as oneDNN's backward-weights problem: src
// (C, N, *S), diff_dst (C, O, *K), diff_weights (O, N, *Q), where stride and dilation trade
// places. Returns false when the shapes do not fit that problem exactly (an input tail that no
// window reads) or oneDNN refuses it; the caller then builds the forward primitive.
bool prepare_weight_grad_form(const ConvAttrs& a, std::span<const TensorType> in, std::span<const TensorType> out,
                              dnnl::memory::desc& src, dnnl::memory::desc& wei, dnnl::memory::desc& dst,
                              std::optional<dnnl::primitive>& prim, size_t& scratchpad) {
  const Shape &x = in[0].shape, &w = in[1].shape, &y = out[0].shape;
  if (a.groups != 1 || in.size() != 2 || x.size() < 3 || !prims::conv_is_weight_gradient_shaped(x, w, y)) return false;
  for (size_t i = 2; i < x.size(); ++i) {
    const size_t j = i - 2;
    const int64_t span = x[i] + a.pad_l[j] + a.pad_r[j] - 1 - a.stride[j] * (y[i] - 1);
    if (span < 0 || span % a.dilation[j] != 0 || span / a.dilation[j] + 1 != w[i]) return false;
  }
  auto swapped = [](const Shape& s, DType t) {
    dims d(s.begin(), s.end());
    std::swap(d[0], d[1]);
    return dnnl::memory::desc(d, dnnl_type(t), tag::any);
  };
  const DType t = in[0].dtype;
  auto s = swapped(x, t), g = swapped(w, t), dw = swapped(y, t);
  const dims stride = to_dims(a.dilation), dilation = to_dims(a.stride, 1);
  try {
    dnnl::convolution_forward::desc fd(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, s, dw, g,
                                       stride, dilation, to_dims(a.pad_l), to_dims(a.pad_r));
    dnnl::convolution_forward::primitive_desc fpd(fd, engine());
    dnnl::convolution_backward_weights::desc bd(dnnl::algorithm::convolution_direct, s, dw, g, stride, dilation,
                                                to_dims(a.pad_l), to_dims(a.pad_r));
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::convolution_backward_weights::primitive_desc bpd(bd, attr, engine(), fpd);
    src = bpd.src_desc(), wei = bpd.diff_dst_desc(), dst = bpd.diff_weights_desc();
    scratchpad = bpd.scratchpad_desc().get_size();
    prim.emplace(dnnl::convolution_backward_weights(bpd));
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

// The forward primitive of conv or conv_transpose with `attr` (conv_fused's post-ops); nullopt
// when oneDNN refuses it (bf16 on a CPU without it, negative right padding, a post-op list).
template <class Attrs>
std::optional<dnnl::primitive> forward_primitive(const Attrs& a, dnnl::primitive_attr attr, DType t,
                                                 dnnl::memory::desc& src, dnnl::memory::desc& wei,
                                                 dnnl::memory::desc& dst, const dnnl::memory::desc& bias,
                                                 bool winograd, size_t& scratchpad) {
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // the plan's arena holds it
  try {
    // Winograd runs its training form, which takes blocked weights and transforms them inside
    // the call: its inference form keeps them pre-transformed, and oneDNN's reorder into that
    // format took 45 ms per call for a 512x512x3x3 weight here (a training step's weights
    // change every call; the two forms also round differently, so switching per call is out).
    const auto pk = winograd ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference;
    if constexpr (std::is_same_v<Attrs, ConvAttrs>) {
      const auto alg = winograd ? dnnl::algorithm::convolution_winograd : dnnl::algorithm::convolution_direct;
      dnnl::convolution_forward::desc d(pk, alg, src, wei, bias, dst,
                                        to_dims(a.stride), to_dims(a.dilation, 1), to_dims(a.pad_l), to_dims(a.pad_r));
      dnnl::convolution_forward::primitive_desc pd(d, attr, engine());
      if (winograd && pd.scratchpad_desc().get_size() > kWinogradMaxScratchpad) return std::nullopt;
      src = pd.src_desc(), wei = pd.weights_desc(), dst = pd.dst_desc();
      scratchpad = pd.scratchpad_desc().get_size();
      return dnnl::convolution_forward(pd);
    } else {
      dims pad_r = to_dims(a.padding);
      for (size_t i = 0; i < pad_r.size(); ++i) pad_r[i] -= a.output_padding[i];
      const auto alg = winograd ? dnnl::algorithm::deconvolution_winograd : dnnl::algorithm::deconvolution_direct;
      dnnl::deconvolution_forward::desc d(pk, alg, src, wei, bias, dst,
                                          to_dims(a.stride), to_dims(a.dilation, 1), to_dims(a.padding), pad_r);
      dnnl::deconvolution_forward::primitive_desc pd(d, attr, engine());
      if (winograd && pd.scratchpad_desc().get_size() > kWinogradMaxScratchpad) return std::nullopt;
      src = pd.src_desc(), wei = pd.weights_desc(), dst = pd.dst_desc();
      scratchpad = pd.scratchpad_desc().get_size();
      return dnnl::deconvolution_forward(pd);
    }
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

// `in`: the node's inputs, of which the first two or three (x, w, bias) are the conv's.
template <class Attrs>
std::shared_ptr<PreparedKernel> prepare_any(const Attrs& a, std::span<const TensorType> in,
                                            std::span<const TensorType> out, bool transpose, Variant v) {
  DType t = in[0].dtype;
  auto src = any_desc(in[0].shape, t), dst = any_desc(out[0].shape, t);
  auto wei = dnnl::memory::desc(weight_dims(in[1].shape, a.groups, transpose), dnnl_type(t), tag::any);
  dnnl::memory::desc bias;
  if (v.has_bias) bias = plain_desc({in[2].shape[0]}, t);
  std::optional<dnnl::primitive> prim;
  if constexpr (std::is_same_v<Attrs, ConvAttrs>) {
    v.weight_grad_form = !transpose && !v.fused && prepare_weight_grad_form(a, in, out, src, wei, dst, prim, v.scratchpad);
    // Under 16 input channels a blocked src is mostly padding: oneDNN's kernel for a plain src
    // with a blocked dst is ~10% faster here (LeNet's convs) and skips the reorder. (Depthwise
    // convs have 1 channel per group but many channels: their kernels want an nhwc src.) Not
    // when the plan keeps the result channels-last: there oneDNN's nhwc kernel reads the image
    // reordered to nhwc and writes the result in place, where the plain-src kernel's blocked
    // result needs a reorder as slow as the conv (ResNet-18's stem at batch 16: 9.7 ms + a
    // 1 ms input reorder, against 12 + 9.4 ms).
    if (!v.weight_grad_form && in[0].shape[1] < 16 && !out[0].channels_last) src = type_desc(in[0]);
  }
  if (!v.weight_grad_form) {
    const dnnl::memory::desc src0 = src, wei0 = wei, dst0 = dst;
    // The algorithm follows from the shape alone (winograd_fits), never from the post-op list, so
    // a fused conv runs the kernel its unfused conv runs. oneDNN may refuse a post-op list
    // (Winograd takes fewer kinds; an operand layout a kernel lacks): post-ops are dropped from
    // the end until it accepts; those left run after the conv (prims::run_epilogue).
    const bool wino = winograd_fits(a, in, out, t);
    for (const bool w : {true, false}) {
      if (prim || (w && !wino)) continue;
      for (size_t limit = v.fused ? v.fused->num_post() : 0; !prim && limit > 0;) {
        v.post = map_post_ops(v.fused->post_list(), v.epilogue, in, out[0], limit);
        if (v.post.mapped == 0) break;
        dnnl::primitive_attr attr;
        attr.set_post_ops(v.post.ops);
        src = src0, wei = wei0, dst = dst0;
        prim = forward_primitive(a, attr, t, src, wei, dst, bias, w, v.scratchpad);
        limit = v.post.mapped - 1;
      }
      if (!prim) {  // no post-ops, or oneDNN refused them all: every post-op runs after the conv
        v.post = PostOpPlan{};
        src = src0, wei = wei0, dst = dst0;
        prim = forward_primitive(a, dnnl::primitive_attr(), t, src, wei, dst, bias, w, v.scratchpad);
      }
      v.winograd = w && prim.has_value();
    }
  }
  v.transpose = transpose;
  v.groups = a.groups;
  const bool ok = prim.has_value();
  auto k = std::make_shared<ConvKernel>(std::move(v), std::move(prim), src, wei, dst, bias);
  TypeBuffers ib(in), ob(out);
  if (ok && ob.buffers[0].numel() > 0) k->layouts_for(ib.buffers, ob.buffers[0]);
  return k;
}

// conv_weight_grad as oneDNN's backward-weights primitive, in layouts of oneDNN's choosing
// (nChw16c here; ConvKernel reorders x and dy in). It declares no channels-last operands: in a
// ResNet-18 step its nhwc kernel took 15 ms where the blocked one takes 13 for the 64-channel
// layers, more than the reorders cost.
std::shared_ptr<PreparedKernel> prepare_backward_weights(const prims::ConvWeightGradAttrs& a,
                                                         std::span<const TensorType> in,
                                                         std::span<const TensorType> out) {
  Variant v;
  v.backward_weights = true;
  v.groups = a.groups;
  v.attrs = std::make_shared<prims::ConvWeightGradAttrs>(a);
  v.reference = [](const void* at, std::span<const Buffer> i, std::span<const Buffer> o, const KernelContext&) {
    prims::conv_weight_grad_reference(*static_cast<const prims::ConvWeightGradAttrs*>(at), i, o);
  };
  const DType t = in[0].dtype;
  dnnl::memory::desc src = any_desc(in[0].shape, t), ddst = any_desc(in[1].shape, t);
  dnnl::memory::desc dw(weight_dims(out[0].shape, a.groups, false), dnnl_type(t), tag::any);
  std::optional<dnnl::primitive> prim;
  const dims stride = to_dims(a.stride), dilation = to_dims(a.dilation, 1), pl = to_dims(a.pad_l), pr = to_dims(a.pad_r);
  // x (N, C, H, W), dy (N, O, H', W')
  const Shape &xs = in[0].shape, &dys = in[1].shape;
  const bool wino = a.kernel.size() == 2 && xs.size() == 4 && dys.size() == 4 &&
                    winograd_shape({a.kernel[0], a.kernel[1]}, stride, dilation, a.groups, t, xs[0], xs[1], dys[1],
                                   dys[2], dys[3]);
  for (const auto alg : {dnnl::algorithm::convolution_winograd, dnnl::algorithm::convolution_direct}) {
    if (prim || (alg == dnnl::algorithm::convolution_winograd && !wino)) continue;
    try {
      dnnl::memory::desc s0 = src, d0 = ddst, w0 = dw;
      dnnl::convolution_forward::desc fd(dnnl::prop_kind::forward_training, alg, s0, w0, d0, stride, dilation, pl, pr);
      dnnl::convolution_forward::primitive_desc fpd(fd, engine());
      dnnl::convolution_backward_weights::desc bd(alg, s0, w0, d0, stride, dilation, pl, pr);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::convolution_backward_weights::primitive_desc bpd(bd, attr, engine(), fpd);
      if (alg == dnnl::algorithm::convolution_winograd && bpd.scratchpad_desc().get_size() > kWinogradMaxScratchpad)
        continue;
      src = bpd.src_desc(), ddst = bpd.diff_dst_desc(), dw = bpd.diff_weights_desc();
      v.scratchpad = bpd.scratchpad_desc().get_size();
      prim.emplace(dnnl::convolution_backward_weights(bpd));
      v.winograd = alg == dnnl::algorithm::convolution_winograd;
    } catch (const dnnl::error&) {
      prim.reset();  // winograd refused: direct; direct refused (negative right padding): the reference kernel
    }
  }
  const bool ok = prim.has_value();
  auto k = std::make_shared<ConvKernel>(std::move(v), std::move(prim), src, ddst, dw, dnnl::memory::desc());
  TypeBuffers ib(in), ob(out);
  if (ok && ob.buffers[0].numel() > 0) k->layouts_for(ib.buffers, ob.buffers[0]);
  return k;
}

bool supports(const void*, std::span<const TensorType> in) {
  DType t = in[0].dtype;
  if (t != DType::Float32 && t != DType::BFloat16) return false;
  for (auto& x : in)
    if (x.dtype != t) return false;
  return true;
}

// A forward conv of float32/bfloat16 over 1-3 spatial dims runs as a oneDNN forward primitive,
// whose fastest kernels here (brgconv, brgconv_1x1, brdgmm_dw) compute channels-last; a conv
// shaped like a weight gradient runs as backward-weights over swapped dims, in NCHW.
// x (input 0) with 16 or more channels (fewer: oneDNN's kernel reads NCHW), the result (-1), and
// operands of the result's shape.
bool conv_takes_channels_last(const ConvAttrs& a, std::span<const TensorType> in, size_t nconv, int input) {
  if (!supports(nullptr, in) || in[0].shape.size() < 3 || in[0].shape.size() > 5) return false;
  OutTypes out;
  prims::conv_primitive().infer(&a, in.first(nconv), out);
  if (prims::conv_is_weight_gradient_shaped(in[0].shape, in[1].shape, out.t[0].shape)) return false;
  if (input == -1) return true;
  if (input == 0) return in[0].shape[1] >= 16;
  return static_cast<size_t>(input) >= nconv && in[static_cast<size_t>(input)].shape == out.t[0].shape;
}


[[maybe_unused]] const bool registered = [] {
  prims::conv_primitive();
  prims::conv_transpose_primitive();
  prims::conv_fused_primitive();
  find_primitive("conv")->add_kernel(
      {.device = DeviceType::CPU, .name = "onednn", .priority = 10, .supports = supports,
       .prepare = [](const void* a, std::span<const TensorType> in, std::span<const TensorType> out) {
         Variant v;
         v.has_bias = in.size() == 3;
         v.attrs = std::make_shared<ConvAttrs>(*static_cast<const ConvAttrs*>(a));
         v.reference = [](const void* at, std::span<const Buffer> i, std::span<const Buffer> o, const KernelContext&) {
           prims::conv_reference(*static_cast<const ConvAttrs*>(at), i, o);
         };
         return prepare_any(*static_cast<const ConvAttrs*>(a), in, out, false, std::move(v));
       },
       .takes_channels_last = [](const void* a, std::span<const TensorType> in, int input) {
         return conv_takes_channels_last(*static_cast<const ConvAttrs*>(a), in, in.size(), input);
       }});
  find_primitive("conv_transpose")->add_kernel(
      {.device = DeviceType::CPU, .name = "onednn", .priority = 10, .supports = supports,
       .prepare = [](const void* a, std::span<const TensorType> in, std::span<const TensorType> out) {
         Variant v;
         v.has_bias = in.size() == 3;
         v.attrs = std::make_shared<ConvTransposeAttrs>(*static_cast<const ConvTransposeAttrs*>(a));
         v.reference = [](const void* at, std::span<const Buffer> i, std::span<const Buffer> o, const KernelContext&) {
           prims::conv_transpose_reference(*static_cast<const ConvTransposeAttrs*>(at), i, o);
         };
         return prepare_any(*static_cast<const ConvTransposeAttrs*>(a), in, out, true, std::move(v));
       }});
  prims::conv_weight_grad_primitive();
  find_primitive("conv_weight_grad")->add_kernel(
      {.device = DeviceType::CPU, .name = "onednn", .priority = 10, .supports = supports,
       .prepare = [](const void* a, std::span<const TensorType> in, std::span<const TensorType> out) {
         return prepare_backward_weights(*static_cast<const prims::ConvWeightGradAttrs*>(a), in, out);
       }});
  find_primitive(prims::kConvFusedOp)->add_kernel(
      {.device = DeviceType::CPU, .name = "onednn", .priority = 10, .supports = supports,
       .prepare = [](const void* a, std::span<const TensorType> in, std::span<const TensorType> out) {
         const auto& fa = *static_cast<const prims::ConvFusedAttrs*>(a);
         auto held = std::make_shared<prims::ConvFusedAttrs>(fa);
         Variant v;
         v.has_bias = fa.has_bias;
         v.fused = held.get();
         v.epilogue = prims::resolve_epilogue(fa.post_list());
         v.attrs = held;
         return prepare_any(fa.conv(), in, out, false, std::move(v));
       },
       .takes_channels_last = [](const void* a, std::span<const TensorType> in, int input) {
         const auto& f = *static_cast<const prims::ConvFusedAttrs*>(a);
         return conv_takes_channels_last(f.conv(), in, f.first_operand(), input);
       }});
  return true;
}();

}  // namespace
}  // namespace spore::cpu::onednn
