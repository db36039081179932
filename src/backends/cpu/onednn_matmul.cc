// SPDX-License-Identifier: Apache-2.0
// oneDNN kernel for the matmul primitive (float32, bfloat16). The input strides go to oneDNN
// as they are, so transposed or strided operands need no copy; batch broadcasting uses
// oneDNN's size-1 batch dims. The dnnl::matmul is created once per call signature and stride
// pattern and kept in the prepared kernel: no primitive creation on the per-call path.
// matmul_fused (prims/matmul_fused.h) runs its epilogue as the GEMM's post-ops.
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "backends/cpu/onednn_common.h"
#include "backends/cpu/onednn_post_ops.h"
#include "prims/matmul.h"
#include "prims/matmul_fused.h"

namespace spore::cpu::onednn {
namespace {

using prims::MatmulAttrs;
using prims::MatmulGeometry;

// Dims/strides of one operand as oneDNN wants them: D dims, broadcast batch dims (stride 0)
// as size 1, size-1 dims given a harmless stride (oneDNN checks strides even where unused).
dnnl::memory::desc operand_desc(const Shape& batch, const Strides& bstrides, int64_t r, int64_t c, int64_t rs,
                                int64_t cs, DType t) {
  std::vector<int64_t> dims, strides;
  for (size_t i = 0; i < batch.size(); ++i) {
    dims.push_back(bstrides[i] == 0 ? 1 : batch[i]);
    strides.push_back(bstrides[i]);
  }
  dims.push_back(r), dims.push_back(c);
  strides.push_back(rs), strides.push_back(cs);
  int64_t extent = 1;
  for (size_t i = 0; i < dims.size(); ++i) extent = std::max(extent, dims[i] * std::max<int64_t>(strides[i], 1));
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] == 1) strides[i] = extent;
  return strided_desc(dims, strides, t);
}

// A batched product with an unbatched right operand (x (..., M, K) @ w (K, N), the shape of every
// linear layer on a 3-D activation) whose batch and row dims walk both a and the plain result
// with one stride each becomes one 2-D product with batch x M rows: oneDNN would otherwise run
// one M-row product per batch entry, and M = 1 (a (seq, 1, d) view of a batch-1 transformer's
// activation) is a matrix-vector product per entry at a third of the GEMM rate. (Swapping a
// batch dim inner to M in a with M, for the (seq, batch, d) views of batch 16, measured no
// faster: oneDNN's gemm:jit either way.)
void fold_batch_into_rows(MatmulGeometry& g, bool use_bias) {
  if (g.batch.empty()) return;
  for (size_t i = 0; i < g.batch.size(); ++i)
    if (g.b_batch[i] != 0 || (use_bias && g.bias_batch[i] != 0)) return;
  if (use_bias && g.bias_m != 0) return;  // a per-row bias repeats per batch entry
  // (size, stride in a, stride in the result) of the batch dims and M, outer to inner, size-1
  // dims left out (they have no stride to match).
  struct D { int64_t n, sa, sc; };
  std::vector<D> dims;
  for (size_t i = 0; i < g.batch.size(); ++i)
    if (g.batch[i] != 1) dims.push_back({g.batch[i], g.a_batch[i], g.c_batch[i]});
  if (g.M != 1) dims.push_back({g.M, g.a_m, g.N});
  if (dims.empty() || dims.back().sc != g.N) return;  // the result's rows must be its plain rows
  for (size_t i = 0; i + 1 < dims.size(); ++i)
    if (dims[i].sa != dims[i + 1].sa * dims[i + 1].n || dims[i].sc != dims[i + 1].sc * dims[i + 1].n) return;
  int64_t rows = 1;
  for (const D& d : dims) rows *= d.n;
  g.M = rows;
  g.a_m = dims.back().sa;
  g.batch.clear();
  g.a_batch.clear(), g.b_batch.clear(), g.c_batch.clear(), g.bias_batch.clear();
}

// matmul_fused: its attributes and resolved post-ops (held by the kernel).
struct Fused {
  prims::MatmulFusedAttrs attrs;
  prims::Epilogue epilogue;
};

bool post_ops_always() {
  const char* v = std::getenv("SPORE_MATMUL_POST_OPS");
  if (!v || !*v || std::string_view(v) == "auto") return false;
  SPORE_CHECK(std::string_view(v) == "always", "[matmul_fused] SPORE_MATMUL_POST_OPS is '", v,
              "'; set it to 'always' (oneDNN post-ops on every matmul kernel) or 'auto', or unset it");
  return true;
}

// A buffer's type as a post-op mapping reads it (matmul operands are row-major).
TensorType type_of(const Buffer& b) {
  TensorType t;
  t.dtype = b.dtype;
  t.shape = Shape(std::span<const Dim>(b.shape, static_cast<size_t>(b.ndim)));
  return t;
}

class MatmulKernel final : public PreparedKernel {
 public:
  explicit MatmulKernel(const MatmulAttrs& a, std::shared_ptr<const Fused> fused = nullptr)
      : attrs_(a), fused_(std::move(fused)) {}

  // The dispatch cache keys on shapes, not strides: one primitive per stride pattern seen,
  // the contiguous one created by prepare.
  const auto& entry(std::span<const Buffer> in, const Buffer& c) const {
    for (Entry& x : cache_)
      if (same_strides(x.key, in)) return x;
    std::vector<int64_t> key;
    for (const Buffer& b : in) key.insert(key.end(), b.strides, b.strides + b.ndim);
    return create(std::move(key), in, c);
  }

  // The post-ops the primitive for these buffers keeps (matmul_fused).
  size_t mapped_post_ops(std::span<const Buffer> in, const Buffer& c) const {
    const Entry& e = entry(in, c);
    return e.prim ? e.post.mapped : 0;
  }

  void run(std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext& ctx) const override {
    const Buffer& c = out[0];
    if (c.numel() == 0) return;
    const std::span<const Buffer> product = fused_ ? in.first(fused_->attrs.first_operand()) : in;
    const Entry* e = &entry(in, c);
    if (!e->prim) {
      prims::matmul_reference(attrs_, product, out);
      if (fused_) prims::run_epilogue(fused_->attrs.post_list(), fused_->epilogue, 0, in, c, ctx);
      return;
    }
    std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, wrap(e->src, in[0].data)},
                                                  {DNNL_ARG_WEIGHTS, wrap(e->wei, in[1].data)},
                                                  {DNNL_ARG_DST, wrap(e->dst, c.data)}};
    if (e->native_bias) args.emplace(DNNL_ARG_BIAS, wrap(e->bias, in[2].data));
    else if (e->post_bias) args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, wrap(e->bias, in[2].data));
    for (size_t k = 0; k < e->post.operands.size(); ++k) {
      const PostOpPlan::Operand& o = e->post.operands[k];
      args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(o.index) | DNNL_ARG_SRC_1, wrap(e->operand_descs[k], in[o.input].data));
    }
    e->prim->execute(stream(), args);
    stream().wait();
    if (fused_ && e->post.mapped < fused_->attrs.num_post())
      prims::run_epilogue(fused_->attrs.post_list(), fused_->epilogue, e->post.mapped, in, c, ctx);
  }

 private:
  struct Entry {
    std::vector<int64_t> key;
    std::optional<dnnl::matmul> prim;  // empty: oneDNN refused, use the reference kernel
    dnnl::memory::desc src, wei, dst, bias;
    bool native_bias = false, post_bias = false;
    PostOpPlan post;  // matmul_fused: the post-ops in the primitive (the rest run after it)
    std::vector<dnnl::memory::desc> operand_descs;  // of its mapped Binary post-ops, in order
  };

  Entry& create(std::vector<int64_t> key, std::span<const Buffer> in, const Buffer& c) const {
    Entry e;
    e.key = std::move(key);
    const std::span<const Buffer> product = fused_ ? in.first(fused_->attrs.first_operand()) : in;
    const MatmulGeometry plain = prims::matmul_geometry(attrs_, product, c);
    const bool use_bias = plain.has_bias && attrs_.beta != 0;
    MatmulGeometry folded = plain;
    fold_batch_into_rows(folded, use_bias);
    if (plain.K > 0) {
      try {
        // Post-op operands are described in the result's shape: a batch folded into the rows
        // keeps them describable only when each is the full result or one row broadcast. When
        // no post-op stays in the primitive, the product is built as the unfused one is.
        if (fused_) {
          const bool fold = operands_fold(in, c);
          const MatmulGeometry& g = fold ? folded : plain;
          const bool rows = fold && folded.batch.empty() && c.ndim > 2;
          add_post_ops(e, describe(e, g, c), in, c, rows ? std::optional(std::pair(g.M, g.N)) : std::nullopt);
        }
        if (!e.prim) {
          dnnl::primitive_attr pa;
          const dnnl::matmul::desc d = describe(e, folded, c, &pa);
          e.prim.emplace(dnnl::matmul::primitive_desc(d, pa, engine()));
        }
      } catch (const dnnl::error&) {
        e.prim.reset();  // e.g. two operands broadcast over one batch dim: reference kernel
        e.post = PostOpPlan{};
        e.operand_descs.clear();
      }
    }
    cache_.push_back(std::move(e));
    return cache_.back();
  }

  // The product's descriptors for geometry `g` (into `e`); with `pa`, alpha and beta other than
  // 1 as an output scale and post-ops (a fused node has neither: it keeps alpha = beta = 1).
  dnnl::matmul::desc describe(Entry& e, const MatmulGeometry& g, const Buffer& c, dnnl::primitive_attr* pa = nullptr) const {
    const DType t = c.dtype;
    const bool use_bias = g.has_bias && attrs_.beta != 0;
    e.src = operand_desc(g.batch, g.a_batch, g.M, g.K, g.a_m, g.a_k, t);
    e.wei = operand_desc(g.batch, g.b_batch, g.K, g.N, g.b_k, g.b_n, t);
    e.dst = g.batch.empty() ? plain_desc({g.M, g.N}, t) : plain_desc(dims_of(c), t);
    if (use_bias) e.bias = operand_desc(g.batch, g.bias_batch, g.bias_m ? g.M : 1, g.bias_n ? g.N : 1, g.bias_m, g.bias_n, t);
    e.native_bias = use_bias && attrs_.alpha == 1 && attrs_.beta == 1;
    e.post_bias = false;
    if (!e.native_bias && pa) {
      // dst = beta * ((alpha / beta) * ab + bias): output scale, binary add, linear.
      dnnl::post_ops po;
      float scale = static_cast<float>(use_bias ? attrs_.alpha / attrs_.beta : attrs_.alpha);
      if (scale != 1.0f) pa->set_output_scales(0, {scale});
      if (use_bias) {
        e.post_bias = true;
        po.append_binary(dnnl::algorithm::binary_add, e.bias);
        if (attrs_.beta != 1) po.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, float(attrs_.beta), 0.f);
      }
      pa->set_post_ops(po);
    }
    return e.native_bias ? dnnl::matmul::desc(e.src, e.wei, e.bias, e.dst) : dnnl::matmul::desc(e.src, e.wei, e.dst);
  }

  // matmul_fused: the longest prefix of its post-ops that oneDNN takes after the product, with
  // the primitive (a fused node keeps alpha = beta = 1: no output scale or bias post-op to keep).
  // Each post-op operand is the product's full shape or one row (every dim but the last 1).
  bool operands_fold(std::span<const Buffer> in, const Buffer& c) const {
    for (size_t j = fused_->attrs.first_operand(); j < in.size(); ++j) {
      const Buffer& b = in[j];
      bool full = b.ndim == c.ndim, row = b.ndim <= c.ndim;
      for (int i = 0; i < b.ndim; ++i) {
        full = full && b.shape[i] == c.shape[i];
        row = row && (i == b.ndim - 1 || b.shape[i] == 1);
      }
      if (!full && !row) return false;
    }
    return true;
  }

  // The post-op that reads input `input` (a Binary post-op's operand).
  size_t post_op_reading(size_t input) const {
    size_t seen = fused_->attrs.first_operand();
    for (size_t k = 0; k < fused_->attrs.num_post(); ++k)
      if (static_cast<prims::PostKind>(fused_->attrs.post_kind[k]) == prims::PostKind::Binary && seen++ == input) return k;
    return fused_->attrs.num_post();
  }

  // `rows`: the (rows, N) the batch was folded into (operands_fold held), described so. Leaves
  // `e.prim` empty when no post-op is worth keeping in the primitive.
  void add_post_ops(Entry& e, const dnnl::matmul::desc& d, std::span<const Buffer> in, const Buffer& c,
                    std::optional<std::pair<int64_t, int64_t>> rows) const {
    std::vector<TensorType> types;
    for (const Buffer& b : in) types.push_back(type_of(b));
    TensorType out = type_of(c);
    if (rows) {
      out.shape = {rows->first, rows->second};
      for (size_t j = fused_->attrs.first_operand(); j < types.size(); ++j) {
        Shape& s = types[j].shape;
        if (s.size() == static_cast<size_t>(c.ndim) && numel_of(s) == rows->first * rows->second) s = out.shape;
        else if (!s.empty()) s = {s.back()};
      }
    }
    const bool always = post_ops_always();
    for (size_t limit = fused_->attrs.num_post(); limit > 0;) {
      size_t tried = limit;
      try {
        PostOpPlan p = map_post_ops(fused_->attrs.post_list(), fused_->epilogue, types, out, limit, /*allow_sum=*/false);
        if (p.mapped == 0) return;
        tried = p.mapped;
        // An operand not laid out as described at this stride pattern: stop before its post-op.
        if (const auto bad = std::find_if(p.operands.begin(), p.operands.end(),
                                          [&](const PostOpPlan::Operand& o) { return !operand_matches(o, in); });
            bad != p.operands.end()) {
          limit = std::min(limit - 1, post_op_reading(bad->input));
          continue;
        }
        // A fresh attribute: copying a dnnl::primitive_attr shares its handle.
        dnnl::primitive_attr pa;
        pa.set_post_ops(p.ops);
        const dnnl::matmul::primitive_desc pd(d, pa, engine());
        // Only oneDNN's brgemm kernels (AVX-512 and up) apply post-ops as the GEMM stores its
        // tiles. Its gemm-based matmul (the CPUs without, such as the bench machine) runs them
        // in a pass of its own after the GEMM, slower than ours: 0.7 ms for a residual add on a
        // (2048, 256) result where our add takes 0.16 ms, 0.66 ms for a ReLU on (2048, 1024)
        // against 0.4-0.55 ms (bench/RESULTS.md); the reference kernel is slower still. There
        // the epilogue runs after the product through the unfused kernels.
        // SPORE_MATMUL_POST_OPS=always keeps them on every kernel (tests of the mapping here).
        if (!std::string_view(pd.impl_info_str()).starts_with("brg") && !always) return;
        std::vector<dnnl::memory::desc> descs;
        for (const PostOpPlan::Operand& o : p.operands) {
          dnnl::algorithm alg;
          dnnl::memory::desc od;
          p.ops.get_params_binary(o.index, alg, od);
          descs.push_back(od);
        }
        e.prim.emplace(pd);
        e.operand_descs = std::move(descs);
        e.post = std::move(p);
        return;
      } catch (const dnnl::error&) {  // a post-op list this kernel lacks: drop post-ops from the end
        limit = tried - 1;
      }
    }
  }

  MatmulAttrs attrs_;
  std::shared_ptr<const Fused> fused_;
  mutable std::vector<Entry> cache_;  // per thread (the dispatch cache is thread-local)
};

bool supports(const void*, std::span<const TensorType> in) {
  DType t = in[0].dtype;
  if (t != DType::Float32 && t != DType::BFloat16) return false;
  for (auto& x : in)
    if (x.dtype != t || x.shape.size() > DNNL_MAX_NDIMS) return false;
  return true;
}

std::shared_ptr<PreparedKernel> prepare(const void* attrs, std::span<const TensorType> in,
                                        std::span<const TensorType> out) {
  auto k = std::make_shared<MatmulKernel>(*static_cast<const MatmulAttrs*>(attrs));
  TypeBuffers ib(in), ob(out);
  if (ob.buffers[0].numel() > 0) k->entry(ib.buffers, ob.buffers[0]);
  return k;
}

std::shared_ptr<MatmulKernel> make_fused(const void* attrs, std::span<const TensorType> in,
                                         std::span<const TensorType> out) {
  (void)post_ops_always();  // a bad SPORE_MATMUL_POST_OPS fails here, not at the first post-op
  const auto& fa = *static_cast<const prims::MatmulFusedAttrs*>(attrs);
  auto fused = std::make_shared<Fused>(Fused{fa, prims::resolve_epilogue(fa.post_list())});
  auto k = std::make_shared<MatmulKernel>(fa.matmul(), std::move(fused));
  TypeBuffers ib(in), ob(out);
  if (ob.buffers[0].numel() > 0) k->entry(ib.buffers, ob.buffers[0]);
  return k;
}

std::shared_ptr<PreparedKernel> prepare_fused(const void* attrs, std::span<const TensorType> in,
                                              std::span<const TensorType> out) {
  return make_fused(attrs, in, out);
}

// KernelDef::fused_post_ops: the post-ops the primitive for contiguous operands of these types
// keeps (0 on oneDNN's gemm-based matmul, where they would run after the GEMM).
size_t fused_post_ops(const void* attrs, std::span<const TensorType> in) {
  OutTypes out;
  prims::matmul_fused_primitive().infer(attrs, in, out);
  const std::span<const TensorType> result(out.t.data(), 1);
  TypeBuffers ib(in), ob(result);
  if (ob.buffers[0].numel() == 0) return 0;
  return make_fused(attrs, in, result)->mapped_post_ops(ib.buffers, ob.buffers[0]);
}

[[maybe_unused]] const bool registered = [] {
  prims::matmul_primitive();  // make sure they are registered before we add to them
  prims::matmul_fused_primitive();
  find_primitive("matmul")->add_kernel(
      {.device = DeviceType::CPU, .name = "onednn", .priority = 10, .supports = supports, .prepare = prepare});
  find_primitive(prims::kMatmulFusedOp)->add_kernel({.device = DeviceType::CPU, .name = "onednn", .priority = 10,
                                                     .supports = supports, .prepare = prepare_fused,
                                                     .fused_post_ops = fused_post_ops});
  return true;
}();

}  // namespace
}  // namespace spore::cpu::onednn
