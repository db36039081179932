// SPDX-License-Identifier: Apache-2.0
// Post-op lists shared by conv_fused and matmul_fused: resolution to the unfused primitives'
// kernels, the operand check, and the epilogue run through those kernels.
#include "prims/epilogue.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "prims/binary.h"
#include "prims/unary.h"

namespace spore::prims {
namespace {

using cpu::BinaryOp;
using cpu::UnaryOp;

// The stateless CPU kernel of an elementwise primitive (the one its unfused node runs).
KernelRunFn cpu_run(const Primitive& p) {
  for (const KernelDef& k : p.kernels[static_cast<int>(DeviceType::CPU)])
    if (k.run != nullptr && k.supports == nullptr) return k.run;
  SPORE_ASSERT(false, "primitive ", p.name, " has no stateless cpu kernel");
  return nullptr;
}

std::vector<std::string_view> split_names(std::string_view s) {
  std::vector<std::string_view> r;
  if (s.empty()) return r;
  for (size_t b = 0;;) {
    const size_t e = s.find(',', b);
    r.push_back(s.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b));
    if (e == std::string_view::npos) return r;
    b = e + 1;
  }
}

// A 0-d buffer holding `v` in dtype `t` (BinaryScalar's literal, as the unfused constant holds it).
struct Scalar {
  alignas(8) unsigned char bytes[8] = {};
  Buffer buffer(const PostOpList& p, double v, DType t) {
    visit_dtype(t, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
        const T x = static_cast<T>(static_cast<std::conditional_t<std::is_same_v<T, double>, double, float>>(v));
        std::memcpy(bytes, &x, sizeof x);
      } else {
        SPORE_ASSERT(false, p.op, " epilogue on ", dtype_name(t));
      }
    });
    Buffer b;
    b.data = bytes;
    b.dtype = t;
    return b;
  }
};

// A buffer seen in another dim order: the elementwise kernels want a row-major output, and a
// plan may store the result channels-last, so each epilogue step runs over its buffers with
// the dims in the result's memory order (an operand right-aligned to the result's rank).
struct Reordered {
  Dim shape[kMaxEpilogueRank];
  int64_t strides[kMaxEpilogueRank];
  Buffer b;
};

struct DimOrder {
  int d[kMaxEpilogueRank];
};

DimOrder memory_order(const Buffer& out) {
  SPORE_ASSERT(out.ndim <= kMaxEpilogueRank, "epilogue of rank ", out.ndim);
  DimOrder perm;
  for (int d = 0; d < out.ndim; ++d) perm.d[d] = d;
  std::stable_sort(perm.d, perm.d + out.ndim, [&](int a, int b) { return out.strides[a] > out.strides[b]; });
  return perm;
}

void reorder_dims(const Buffer& b, const Buffer& out, const DimOrder& perm, Reordered& r) {
  r.b = b;
  const int off = out.ndim - b.ndim;
  for (int i = 0; i < out.ndim; ++i) {
    const int d = perm.d[i], bd = d - off;
    r.shape[i] = bd < 0 ? 1 : b.shape[bd];
    r.strides[i] = bd < 0 || b.shape[bd] == 1 ? 0 : b.strides[bd];
  }
  r.b.ndim = b.ndim == 0 ? 0 : out.ndim;
  r.b.shape = r.shape;
  r.b.strides = r.strides;
}

}  // namespace

size_t PostOpList::num_operands() const {
  size_t n = 0;
  for (size_t i = 0; i < size(); ++i) n += kind(i) == PostKind::Binary;
  return n;
}

std::optional<UnaryOp> unary_op_named(std::string_view name) {
  for (int i = 0; i < cpu::kNumUnaryOps; ++i)
    if (unary_primitive(static_cast<UnaryOp>(i)).name == name) return static_cast<UnaryOp>(i);
  return std::nullopt;
}

std::optional<BinaryOp> binary_op_named(std::string_view name) {
  for (int i = 0; i < cpu::kNumBinaryOps; ++i)
    if (binary_primitive(static_cast<BinaryOp>(i)).name == name) return static_cast<BinaryOp>(i);
  return std::nullopt;
}

Epilogue resolve_epilogue(const PostOpList& p) {
  const size_t k = p.size();
  const std::vector<std::string_view> names = split_names(p.names);
  SPORE_CHECK(names.size() == k && p.a.size() == k && p.b.size() == k, "[", p.op,
              "] post_kind, post_ops, post_a and post_b need one entry per post-op, got ", k, ", ", names.size(), ", ",
              p.a.size(), ", ", p.b.size());
  Epilogue e;
  for (size_t i = 0; i < k; ++i) {
    Epilogue::Step st{p.kind(i), 0, nullptr, p.a[i], p.b[i]};
    // The operand-order flag: post_a of a Binary post-op, post_b of a BinaryScalar one.
    const double flag = p.kind(i) == PostKind::Binary ? p.a[i] : p.b[i];
    SPORE_CHECK(p.kind(i) == PostKind::Unary || flag == 0 || flag == 1, "[", p.op, "] post-op ", i, " (", names[i],
                ") has operand-order flag ", flag, "; it is 0 (the node's value first) or 1 (the operand first)");
    switch (p.kind(i)) {
      case PostKind::Unary: {
        const auto op = unary_op_named(names[i]);
        SPORE_CHECK(op.has_value(), "[", p.op, "] post-op ", i, " is '", names[i], "', not a unary float op");
        st.code = static_cast<int>(*op);
        st.run = cpu_run(unary_primitive(*op));
        break;
      }
      case PostKind::Binary:
      case PostKind::BinaryScalar: {
        const auto op = binary_op_named(names[i]);
        SPORE_CHECK(op.has_value(), "[", p.op, "] post-op ", i, " is '", names[i], "', not a binary float op");
        st.code = static_cast<int>(*op);
        st.run = cpu_run(binary_primitive(*op));
        break;
      }
      default:
        SPORE_CHECK(false, "[", p.op, "] post-op ", i, " has kind ", p.kinds[i], "; kinds are 0 (unary), ",
                    "1 (binary with an operand) and 2 (binary with a literal)");
    }
    e.steps.push_back(st);
  }
  return e;
}

void check_post_operands(const PostOpList& p, std::span<const TensorType> in, const Shape& y, DType t) {
  for (size_t j = p.first_operand; j < in.size(); ++j) {
    const Shape& s = in[j].shape;
    bool ok = in[j].dtype == t && s.size() <= y.size();
    for (size_t d = 0; ok && d < s.size(); ++d) {
      const Dim want = y[y.size() - s.size() + d];
      ok = s[d] == 1 || s[d] == want;
    }
    SPORE_CHECK(ok, "[", p.op, "] operand ", j - p.first_operand, " is ", dtype_name(in[j].dtype), shape_str(s),
                "; a post-op operand has the node's dtype (", dtype_name(t), ") and broadcasts to its result ",
                shape_str(y), " without growing it");
  }
}

void run_epilogue(const PostOpList& p, const Epilogue& e, size_t first, std::span<const Buffer> in, const Buffer& out,
                  const KernelContext& ctx) {
  if (out.numel() == 0) return;
  size_t operand = p.first_operand;
  for (size_t i = 0; i < first; ++i) operand += e.steps[i].kind == PostKind::Binary;
  const DimOrder perm = memory_order(out);
  Reordered ro, rop;
  reorder_dims(out, out, perm, ro);
  const std::span<const Buffer> self(&ro.b, 1);
  auto arg = [&](size_t input) {
    reorder_dims(in[input], out, perm, rop);
    return rop.b;
  };
  for (size_t i = first; i < e.steps.size(); ++i) {
    const Epilogue::Step& st = e.steps[i];
    // Each post-op writes over the value it reads, element by element, as the unfused kernels
    // do when the executor runs them in place.
    switch (st.kind) {
      case PostKind::Unary: {
        const UnaryAttrs ua{st.a, st.b};
        st.run(&ua, self, self, ctx);
        break;
      }
      case PostKind::Binary: {
        const Buffer x = arg(operand);
        const Buffer args[2] = {st.a == 1 ? x : ro.b, st.a == 1 ? ro.b : x};
        st.run(nullptr, std::span<const Buffer>(args, 2), self, ctx);
        ++operand;
        break;
      }
      case PostKind::BinaryScalar: {
        Scalar s;
        const Buffer lit = s.buffer(p, st.a, out.dtype);
        const Buffer args[2] = {st.b == 1 ? lit : ro.b, st.b == 1 ? ro.b : lit};
        st.run(nullptr, std::span<const Buffer>(args, 2), self, ctx);
        break;
      }
    }
  }
}

Cost epilogue_cost(Cost base, const PostOpList& p, std::span<const TensorType> in, const TensorType& out) {
  for (size_t j = p.first_operand; j < in.size(); ++j)
    base.bytes += static_cast<double>(numel_of(in[j].shape)) * dtype_size(in[j].dtype);
  base.flops += static_cast<double>(p.size()) * static_cast<double>(numel_of(out.shape));
  return base;
}

}  // namespace spore::prims
