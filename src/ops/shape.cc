// SPDX-License-Identifier: Apache-2.0
// Public copying shape ops: concat/stack, split/chunk (views), pad, flip, roll, tile,
// repeat_interleave, tril/triu. Composites reuse views plus one copy where that is natural.
#include <cmath>
#include <numeric>

#include "ops/promote.h"
#include "prims/concat.h"
#include "prims/pad.h"
#include "prims/tri.h"
#include "runtime/dispatch.h"
#include "spore/ops/elementwise.h"
#include "spore/ops/shape.h"

namespace spore::ops {

namespace {
/// Normalized, distinct axes.
std::vector<int64_t> distinct_axes(const std::vector<int64_t>& axes, int64_t rank, const char* op) {
  std::vector<int64_t> out;
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(rank, 1)), false);
  for (int64_t a : axes) {
    int n = normalize_axis(a, std::max<int64_t>(rank, 1), op);
    SPORE_CHECK(!seen[n], "[", op, "] axis ", a, " appears twice; list each axis once");
    seen[n] = true;
    out.push_back(n);
  }
  return out;
}
}  // namespace

Tensor concat(const std::vector<Tensor>& xs_in, int64_t axis) {
  SPORE_CHECK(!xs_in.empty(), "[concat] needs at least one tensor");
  // PyTorch's legacy rule: 1-D empty tensors are skipped when joined with tensors of other ranks.
  std::vector<Tensor> xs;
  for (const Tensor& x : xs_in) {
    SPORE_CHECK(x.defined(), "[concat] an input is an undefined tensor");
    if (!(x.dim() == 1 && x.numel() == 0)) xs.push_back(x);
  }
  if (xs.empty()) xs.push_back(xs_in[0]);
  const int64_t rank = xs[0].dim();
  SPORE_CHECK(rank > 0, "[concat] cannot concatenate 0-d tensors; unsqueeze them first or use stack()");
  const int ax = normalize_axis(axis, rank, "concat");
  DType t = xs[0].dtype();
  for (const Tensor& x : xs) t = promote_types(t, x.dtype());
  std::vector<Tensor> cast_xs;
  cast_xs.reserve(xs.size());
  for (const Tensor& x : xs) cast_xs.push_back(x.dtype() == t ? x : cast(x, t));
  const prims::ConcatAttrs a{ax};
  return std::move(runtime::dispatch(prims::concat_primitive(), &a, std::span<const Tensor>(cast_xs)).t[0]);
}

Tensor stack(const std::vector<Tensor>& xs, int64_t axis) {
  SPORE_CHECK(!xs.empty(), "[stack] needs at least one tensor");
  const int ax = normalize_axis(axis, xs[0].dim() + 1, "stack");
  std::vector<Tensor> us;
  for (size_t i = 0; i < xs.size(); ++i) {
    SPORE_CHECK(xs[i].shape() == xs[0].shape(), "[stack] all tensors must have the same shape: input 0 is ",
                shape_str(xs[0].shape()), " and input ", i, " is ", shape_str(xs[i].shape()));
    us.push_back(unsqueeze(xs[i], ax));
  }
  return concat(us, ax);
}

std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t axis) {
  SPORE_CHECK(x.dim() > 0, "[split] cannot split a 0-d tensor");
  const int ax = normalize_axis(axis, x.dim(), "split");
  int64_t total = 0;
  for (int64_t s : sizes) {
    SPORE_CHECK(s >= 0, "[split] sizes must be non-negative, got ", s);
    total += s;
  }
  SPORE_CHECK(total == x.shape()[ax], "[split] sizes add up to ", total, " but axis ", axis, " has size ",
              x.shape()[ax], "; they must add up to the axis size");
  std::vector<Tensor> out;
  int64_t pos = 0;
  for (int64_t s : sizes) {
    out.push_back(slice(x, ax, pos, pos + s));
    pos += s;
  }
  return out;
}

std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t axis) {
  SPORE_CHECK(chunks > 0, "[chunk] chunks must be positive, got ", chunks);
  SPORE_CHECK(x.dim() > 0, "[chunk] cannot chunk a 0-d tensor");
  const int ax = normalize_axis(axis, x.dim(), "chunk");
  const int64_t n = x.shape()[ax];
  // PyTorch's rule: pieces of ceil(n / chunks), the last one smaller, possibly fewer pieces.
  const int64_t step = std::max<int64_t>(1, (n + chunks - 1) / chunks);
  std::vector<Tensor> out;
  if (n == 0) {
    for (int64_t i = 0; i < chunks; ++i) out.push_back(x);
    return out;
  }
  for (int64_t pos = 0; pos < n; pos += step) out.push_back(slice(x, ax, pos, std::min(n, pos + step)));
  return out;
}

Tensor pad(const Tensor& x_in, const std::vector<int64_t>& pads, PadMode mode, double value) {
  SPORE_CHECK(pads.size() % 2 == 0, "[pad] pads must come in (before, after) pairs, got ", pads.size(), " values");
  const int64_t rank = x_in.dim();
  SPORE_CHECK(static_cast<int64_t>(pads.size()) / 2 <= rank, "[pad] ", pads.size() / 2,
              " pairs of pads for a tensor of rank ", rank, "; give at most one pair per axis");
  if (mode == PadMode::Constant) {
    // The API takes a double; an integral one is checked as the integer the caller most likely
    // wrote (PyTorch lets uint8 take -1 but not -1.0).
    const bool integral = std::trunc(value) == value && std::abs(value) < 0x1p62;
    check_scalar_fits(integral ? Scalar(static_cast<int64_t>(value)) : Scalar(value), x_in.dtype(), "pad");
  }
  Tensor x = x_in;
  prims::PadAttrs a;
  a.before = SmallVec<int64_t, 6>(static_cast<size_t>(rank), int64_t{0});
  a.after = SmallVec<int64_t, 6>(static_cast<size_t>(rank), int64_t{0});
  for (size_t i = 0; i < pads.size() / 2; ++i) {
    const int64_t ax = rank - 1 - static_cast<int64_t>(i);
    int64_t b = pads[2 * i], e = pads[2 * i + 1];
    if (b < 0 || e < 0) {
      SPORE_CHECK(mode == PadMode::Constant, "[pad] negative pads (", b, ", ", e,
                  ") crop and are only allowed in constant mode");
      const int64_t n = x.shape()[ax];
      SPORE_CHECK(n + std::min<int64_t>(b, 0) + std::min<int64_t>(e, 0) >= 0, "[pad] pads (", b, ", ", e,
                  ") crop more than the size ", n, " of axis ", ax);
      x = slice(x, ax, std::max<int64_t>(-b, 0), n - std::max<int64_t>(-e, 0));
    }
    a.before[static_cast<size_t>(ax)] = std::max<int64_t>(b, 0);
    a.after[static_cast<size_t>(ax)] = std::max<int64_t>(e, 0);
  }
  a.mode = mode == PadMode::Constant ? prims::PadKind::Constant
           : mode == PadMode::Reflect ? prims::PadKind::Reflect
                                      : prims::PadKind::Replicate;
  a.value = value;
  // Only constant mode stores the value; an integer dtype reads int_value, checked to fit above.
  a.int_value = mode == PadMode::Constant && is_integral(x.dtype()) ? static_cast<int64_t>(value) : 0;
  return runtime::call(prims::pad_primitive(), a, {x});
}

Tensor flip(const Tensor& x, const std::vector<int64_t>& axes) {
  prims::FlipAttrs a;
  for (int64_t d : distinct_axes(axes, x.dim(), "flip"))
    if (x.dim() > 0) a.axes.push_back(d);
  return runtime::call(prims::flip_primitive(), a, {x});
}

Tensor roll(const Tensor& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& axes) {
  if (x.dim() == 0) return copy(x);
  if (axes.empty()) {
    // PyTorch: no axes rolls the flattened tensor.
    SPORE_CHECK(shifts.size() == 1, "[roll] without axes takes one shift, got ", shifts.size());
    return reshape(roll(flatten(x), shifts, {0}), x.shape());
  }
  SPORE_CHECK(shifts.size() == axes.size(), "[roll] got ", shifts.size(), " shifts for ", axes.size(),
              " axes; give one shift per axis");
  prims::RollAttrs a;
  a.shifts = SmallVec<int64_t, 6>(static_cast<size_t>(std::max<int64_t>(x.dim(), 1)), int64_t{0});
  for (size_t i = 0; i < axes.size(); ++i) a.shifts[normalize_axis(axes[i], std::max<int64_t>(x.dim(), 1), "roll")] += shifts[i];
  return runtime::call(prims::roll_primitive(), a, {x});
}

Tensor tile(const Tensor& x, const std::vector<int64_t>& reps_in) {
  for (int64_t r : reps_in) SPORE_CHECK(r >= 0, "[tile] repetitions must be non-negative, got ", r);
  const size_t rank = std::max<size_t>(reps_in.size(), static_cast<size_t>(x.dim()));
  std::vector<int64_t> reps(rank - reps_in.size(), 1);
  reps.insert(reps.end(), reps_in.begin(), reps_in.end());
  Shape s(rank - static_cast<size_t>(x.dim()), 1);
  for (Dim d : x.shape()) s.push_back(d);
  // View as (1, s0, 1, s1, ...), broadcast to (r0, s0, r1, s1, ...), copy once, merge pairs.
  Shape inter, big, out;
  for (size_t i = 0; i < rank; ++i) {
    inter.push_back(1);
    inter.push_back(s[i]);
    big.push_back(reps[i]);
    big.push_back(s[i]);
    out.push_back(reps[i] * s[i]);
  }
  return reshape(copy(broadcast_to(reshape(broadcast_to(x, s), inter), big)), out);
}

Tensor repeat_interleave(const Tensor& x_in, int64_t repeats, int64_t axis) {
  SPORE_CHECK(repeats >= 0, "[repeat_interleave] repeats must be non-negative, got ", repeats);
  Tensor x = x_in.dim() == 0 ? reshape(x_in, {1}) : x_in;
  const int ax = normalize_axis(axis, x.dim(), "repeat_interleave");
  Shape big = x.shape(), out = x.shape();
  big.insert(static_cast<size_t>(ax) + 1, repeats);
  out[ax] *= repeats;
  return reshape(copy(broadcast_to(unsqueeze(x, ax + 1), big)), out);
}

Tensor tril(const Tensor& x, int64_t diagonal) {
  SPORE_CHECK(x.dim() >= 2, "[tril] needs a tensor of rank >= 2, got ", shape_str(x.shape()));
  return runtime::call(prims::tri_primitive(), prims::TriAttrs{diagonal, false}, {x});
}

Tensor triu(const Tensor& x, int64_t diagonal) {
  SPORE_CHECK(x.dim() >= 2, "[triu] needs a tensor of rank >= 2, got ", shape_str(x.shape()));
  return runtime::call(prims::tri_primitive(), prims::TriAttrs{diagonal, true}, {x});
}

}  // namespace spore::ops
