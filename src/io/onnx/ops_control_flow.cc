// SPDX-License-Identifier: Apache-2.0
// ONNX control flow: If, Loop and Scan onto cond / scan / while_loop (spore/control_flow.h).
// Sub-graphs are imported as traced closures (OpContext::run_subgraph): the outer values they
// read become the control-flow node's captures. What is known at import time is used: an If
// with a known condition imports only the branch taken, and a Loop with a known trip count
// becomes a scan (stacking its scan outputs), unrolled when its body needs the iteration
// number as a number (a Slice at the iteration, say).
#include <algorithm>

#include "io/onnx/op_context.h"
#include "io/onnx/run_time_sizes.h"
#include "spore/control_flow.h"
#include "spore/ops.h"

namespace spore::io::onnx_detail {

namespace {

using Ts = std::vector<Tensor>;
namespace o = spore::ops;

// Loops longer than this are not unrolled (the graph would grow with the trip count).
constexpr int64_t kMaxUnroll = 4096;
// A counted loop becomes a scan over its iteration numbers, a constant of M int64s made at import:
// an untrusted M is bounded first (2^24 iterations, 128 MB of iteration numbers).
constexpr int64_t kMaxCountedTrips = int64_t{1} << 24;
// A loop whose inputs are all known runs now, at import: bound that work too.
constexpr int64_t kMaxFoldedTrips = int64_t{1} << 16;

Tensor scalar_bool(const OpContext& c, const Tensor& t, const char* what) {
  if (numel_of(t.shape()) != 1) c.fail(std::string(what) + " must hold one element, got shape " + shape_str(t.shape()));
  Tensor b = o::reshape(t, Shape{});
  return b.dtype() == DType::Bool ? b : o::not_equal(b, o::zeros_like(b));
}

Ts if_op(const OpContext& c) {
  const auto& then_g = c.graph("then_branch");
  const auto& else_g = c.graph("else_branch");
  if (c.is_constant(0)) {
    const auto v = c.ints_of(0);
    if (v.size() != 1) c.fail("the condition must hold one element, got " + std::to_string(v.size()));
    return c.run_subgraph(v[0] ? then_g : else_g, {});
  }
  const Tensor pred = scalar_bool(c, c.in(0), "the condition");
  TensorTree out = cond(
      pred, [&](const TensorTree&) { return TensorTree(c.run_subgraph(then_g, {})); },
      [&](const TensorTree&) { return TensorTree(c.run_subgraph(else_g, {})); }, TensorTree(Ts{}));
  return out.leaves();
}

// The body's condition output is its condition input, passed through (a for loop).
bool cond_passthrough(const onnx::GraphProto& body) {
  if (body.input_size() < 2 || body.output_size() < 1) return false;
  const std::string& in = body.input(1).name();
  std::string out = body.output(0).name();
  for (int k = body.node_size() - 1; k >= 0; --k) {
    const auto& n = body.node(k);
    if (n.output_size() == 1 && n.output(0) == out && n.op_type() == "Identity" && n.input_size() == 1) out = n.input(0);
  }
  return out == in;
}

Ts loop_op(const OpContext& c) {
  const auto& body = c.graph("body");
  if (c.num_inputs() < 2) c.fail("needs the inputs M and cond (either may be empty)");
  const size_t n_carry = c.num_inputs() - 2;
  if (body.input_size() != static_cast<int>(n_carry) + 2 || body.output_size() < static_cast<int>(n_carry) + 1)
    c.fail("the body takes " + std::to_string(body.input_size()) + " inputs and gives " +
           std::to_string(body.output_size()) + " outputs; with " + std::to_string(n_carry) +
           " loop-carried values it needs " + std::to_string(n_carry + 2) + " inputs and at least " +
           std::to_string(n_carry + 1) + " outputs");
  const size_t n_scan = static_cast<size_t>(body.output_size()) - 1 - n_carry;
  Ts init;
  for (size_t k = 0; k < n_carry; ++k) init.push_back(c.in(k + 2));
  const Tensor yes = at_import([] { return o::scalar_tensor(true, DType::Bool); });
  auto step = [&](const Tensor& i, const Tensor& cond_in, const Ts& carry) {
    Ts args{i, cond_in};
    args.insert(args.end(), carry.begin(), carry.end());
    return c.run_subgraph(body, args);
  };

  const bool known_m = c.has(0) && c.is_constant(0);
  const bool known_cond = !c.has(1) || c.is_constant(1);
  bool inputs_known = true;
  for (size_t k = 0; k < c.num_inputs(); ++k) inputs_known = inputs_known && (!c.has(k) || c.is_constant(k));
  if (inputs_known && !c.has(0))
    c.fail("a Loop whose inputs are all constants runs at import, and without a trip count M it may never stop");
  if (known_m && known_cond) {
    const auto mv = c.ints_of(0);
    if (mv.size() != 1) c.fail("M must hold one element");
    int64_t m = std::max<int64_t>(mv[0], 0);
    if (c.has(1)) {
      const auto cv = c.ints_of(1);
      if (cv.size() != 1) c.fail("cond must hold one element");
      if (!cv[0]) m = 0;
    }
    if (inputs_known && m > kMaxFoldedTrips)
      c.fail("a Loop whose inputs are all constants runs at import, and its trip count " + std::to_string(m) +
             " is over the " + std::to_string(kMaxFoldedTrips) + " iterations allowed there");
    if (cond_passthrough(body) && m > kMaxCountedTrips)
      c.fail("trip count " + std::to_string(m) + " is over the " + std::to_string(kMaxCountedTrips) +
             " iterations a counted Loop may have (its iteration numbers are a constant of the graph)");
    if (cond_passthrough(body)) {
      // A counted loop: a scan over the iteration numbers stacks the scan outputs.
      try {
        auto fn = [&](const TensorTree& carry, const TensorTree& x) {
          Ts outs = step(x.tensor(), yes, carry.leaves());
          Ts nc(outs.begin() + 1, outs.begin() + 1 + static_cast<std::ptrdiff_t>(n_carry));
          Ts ys(outs.begin() + 1 + static_cast<std::ptrdiff_t>(n_carry), outs.end());
          return std::pair<TensorTree, TensorTree>(TensorTree(nc), TensorTree(ys));
        };
        auto [final_carry, ys] = scan(fn, TensorTree(init), TensorTree(at_import([m] { return o::arange(0, m, 1, {DType::Int64}); })));
        Ts out = final_carry.leaves();
        for (const Tensor& y : ys.leaves()) out.push_back(y);
        return out;
      } catch (const Error&) {
        if (m == 0 || m > kMaxUnroll) throw;
        // Fall through: unroll with the iteration number known.
      }
    }
    // Unrolled: each step imports the body with the iteration number as a constant; the
    // condition it computes must be known at import time too.
    if (m <= kMaxUnroll) {
      Ts carry = init;
      std::vector<Ts> ys(n_scan);
      bool go = true;
      for (int64_t i = 0; i < m && go; ++i) {
        Ts outs = step(at_import([i] { return o::scalar_tensor(i, DType::Int64); }), yes, carry);
        Tensor cout = outs[0];
        if (cout.device().type == DeviceType::Meta) {
          if (n_scan) c.fail("the loop condition depends on run-time values and the body has scan outputs, whose length would too");
          go = false;  // hand over to while_loop below from this carry
          carry.assign(outs.begin() + 1, outs.begin() + 1 + static_cast<std::ptrdiff_t>(n_carry));
          Tensor i1 = at_import([i] { return o::scalar_tensor(i + 1, DType::Int64); });
          Tensor mt = at_import([m] { return o::scalar_tensor(m, DType::Int64); });
          Ts all{i1, scalar_bool(c, cout, "the body's condition")};
          all.insert(all.end(), carry.begin(), carry.end());
          TensorTree r = while_loop(
              [&](const TensorTree& t) { return o::logical_and(t[1].tensor(), o::less(t[0].tensor(), mt)); },
              [&](const TensorTree& t) {
                Ts l = t.leaves();
                Ts outs2 = step(l[0], l[1], Ts(l.begin() + 2, l.end()));
                Ts next{o::add(l[0], o::scalar_tensor(int64_t{1}, DType::Int64)), scalar_bool(c, outs2[0], "the body's condition")};
                next.insert(next.end(), outs2.begin() + 1, outs2.begin() + 1 + static_cast<std::ptrdiff_t>(n_carry));
                return TensorTree(next);
              },
              TensorTree(all));
          Ts l = r.leaves();
          return Ts(l.begin() + 2, l.end());
        }
        go = at_import([&] { return o::cast(o::reshape(cout, Shape{}), DType::Int64); }).item<int64_t>() != 0;
        carry.assign(outs.begin() + 1, outs.begin() + 1 + static_cast<std::ptrdiff_t>(n_carry));
        for (size_t k = 0; k < n_scan; ++k) ys[k].push_back(outs[1 + n_carry + k]);
      }
      Ts out = carry;
      for (size_t k = 0; k < n_scan; ++k) {
        if (ys[k].empty()) c.fail("the loop runs no iteration and the body has scan outputs, whose shape is then unknown");
        out.push_back(o::stack(ys[k], 0));
      }
      return out;
    }
    c.fail("trip count " + std::to_string(m) + " is too large to unroll and the body cannot be traced as a scan");
  }

  // A counted loop with a run-time trip count: a scan over 0..M-1, whose length is a value
  // symbol bound when the graph runs (run_time_sizes.h), stacks the scan outputs.
  // The body passes cond through, so the loop runs M times when cond holds, else none.
  if (n_scan && c.has(0) && cond_passthrough(body)) {
    if (c.in(0).numel() != 1) c.fail("M must hold one element, got shape " + shape_str(c.in(0).shape()));
    const Tensor m = o::reshape(o::cast(c.in(0), DType::Int64), Shape{});
    const Tensor zero = at_import([] { return o::scalar_tensor(int64_t{0}, DType::Int64); });
    Tensor n = o::maximum(m, zero);
    if (c.has(1)) n = o::where(scalar_bool(c, c.in(1), "cond"), n, zero);
    auto [iters, len] = iota(n);
    (void)len;
    auto fn = [&](const TensorTree& carry, const TensorTree& x) {
      Ts outs = step(x.tensor(), yes, carry.leaves());
      Ts nc(outs.begin() + 1, outs.begin() + 1 + static_cast<std::ptrdiff_t>(n_carry));
      Ts ys(outs.begin() + 1 + static_cast<std::ptrdiff_t>(n_carry), outs.end());
      return std::pair<TensorTree, TensorTree>(TensorTree(nc), TensorTree(ys));
    };
    try {
      auto [final_carry, ys] = scan(fn, TensorTree(init), TensorTree(iters));
      Ts out = final_carry.leaves();
      for (const Tensor& y : ys.leaves()) out.push_back(y);
      return out;
    } catch (const Error& e) {
      // A body that is not one scan step for every iteration number (its carry changes shape
      // with the iteration) can only be unrolled, which needs M at import time.
      c.fail(std::string("M and cond must be known at import time: the body cannot be traced as a scan step (") + e.what() + ")");
    }
  }
  // Trip count or condition known only at run time: a while loop over (i, cond, carries...).
  if (n_scan)
    c.fail("M and cond must be known at import time when the body has scan outputs (their length depends on them)");
  const bool has_m = c.has(0);
  const Tensor m = has_m ? o::cast(o::reshape(c.in(0), Shape{}), DType::Int64) : Tensor{};
  Ts all{o::scalar_tensor(int64_t{0}, DType::Int64), c.has(1) ? scalar_bool(c, c.in(1), "cond") : yes};
  all.insert(all.end(), init.begin(), init.end());
  TensorTree r = while_loop(
      [&](const TensorTree& t) {
        Tensor k = t[1].tensor();
        return has_m ? o::logical_and(k, o::less(t[0].tensor(), m)) : k;
      },
      [&](const TensorTree& t) {
        Ts l = t.leaves();
        Ts outs = step(l[0], l[1], Ts(l.begin() + 2, l.end()));
        Ts next{o::add(l[0], o::scalar_tensor(int64_t{1}, DType::Int64)), scalar_bool(c, outs[0], "the body's condition")};
        next.insert(next.end(), outs.begin() + 1, outs.begin() + 1 + static_cast<std::ptrdiff_t>(n_carry));
        return TensorTree(next);
      },
      TensorTree(all));
  Ts l = r.leaves();
  return Ts(l.begin() + 2, l.end());
}

// Moves `from` to position `to` (both normalized) keeping the other axes' order.
Tensor move_axis(const Tensor& x, int64_t from, int64_t to) {
  if (from == to) return x;
  std::vector<int64_t> perm;
  for (int64_t k = 0; k < x.dim(); ++k)
    if (k != from) perm.push_back(k);
  perm.insert(perm.begin() + to, from);
  return o::permute(x, perm);
}

// One Scan over states and scan inputs (no batch axis).
Ts scan_once(const OpContext& c, const onnx::GraphProto& body, const Ts& states, Ts xs,
             const std::vector<int64_t>& in_axes, const std::vector<int64_t>& in_dirs,
             const std::vector<int64_t>& out_axes, const std::vector<int64_t>& out_dirs) {
  const size_t ns = states.size();
  for (size_t k = 0; k < xs.size(); ++k) {
    const int64_t ax = axis_of(c, k < in_axes.size() ? in_axes[k] : 0, xs[k].dim());
    xs[k] = move_axis(xs[k], ax, 0);
    if (k < in_dirs.size() && in_dirs[k]) xs[k] = o::flip(xs[k], {0});
  }
  auto fn = [&](const TensorTree& carry, const TensorTree& x) {
    Ts args = carry.leaves();
    for (const Tensor& t : x.leaves()) args.push_back(t);
    Ts outs = c.run_subgraph(body, args);
    if (outs.size() < ns) c.fail("the body gives fewer outputs than there are states");
    return std::pair<TensorTree, TensorTree>(TensorTree(Ts(outs.begin(), outs.begin() + static_cast<std::ptrdiff_t>(ns))),
                                             TensorTree(Ts(outs.begin() + static_cast<std::ptrdiff_t>(ns), outs.end())));
  };
  auto [fin, ys] = scan(fn, TensorTree(states), TensorTree(xs));
  Ts out = fin.leaves();
  Ts yl = ys.leaves();
  for (size_t k = 0; k < yl.size(); ++k) {
    Tensor y = yl[k];
    if (k < out_dirs.size() && out_dirs[k]) y = o::flip(y, {0});
    if (k < out_axes.size()) y = move_axis(y, 0, axis_of(c, out_axes[k], y.dim()));
    out.push_back(y);
  }
  return out;
}

Ts scan_op(const OpContext& c) {
  const auto& body = c.graph("body");
  const int64_t n_in = c.i("num_scan_inputs", -1);
  const bool batched = c.opset() < 9;  // Scan-8: a batch axis 0 and an optional sequence_lens first
  const size_t first = batched ? 1 : 0;
  if (n_in < 1 || static_cast<size_t>(n_in) + first > c.num_inputs())
    c.fail("num_scan_inputs " + std::to_string(n_in) + " does not fit the " + std::to_string(c.num_inputs()) + " inputs");
  if (batched && c.has(0)) c.fail("sequence_lens is not supported (every sequence must have the full length)");
  const size_t ns = c.num_inputs() - first - static_cast<size_t>(n_in);
  Ts states, xs;
  for (size_t k = 0; k < ns; ++k) states.push_back(c.in(first + k));
  for (size_t k = 0; k < static_cast<size_t>(n_in); ++k) xs.push_back(c.in(first + ns + k));
  const auto none = std::vector<int64_t>{};
  if (!batched)
    return scan_once(c, body, states, xs, c.ints("scan_input_axes").value_or(none),
                     c.ints("scan_input_directions").value_or(none), c.ints("scan_output_axes").value_or(none),
                     c.ints("scan_output_directions").value_or(none));
  // Scan-8: every input has the batch axis 0 and scans axis 1; each batch row is one scan.
  const auto dirs = c.ints("directions").value_or(none);
  if (xs[0].dim() < 2) c.fail("scan inputs need a batch and a sequence axis, got " + shape_str(xs[0].shape()));
  const Dim batch = xs[0].shape()[0];
  if (is_symbolic(batch)) c.fail("needs a static batch size, got " + shape_str(xs[0].shape()));
  std::vector<Ts> rows;
  for (int64_t b = 0; b < batch; ++b) {
    Ts s, x;
    for (const Tensor& t : states) s.push_back(o::select(t, 0, b));
    for (const Tensor& t : xs) x.push_back(o::select(t, 0, b));
    rows.push_back(scan_once(c, body, s, x, none, dirs, none, none));
  }
  Ts out;
  for (size_t k = 0; k < rows[0].size(); ++k) {
    Ts col;
    for (const Ts& r : rows) col.push_back(r[k]);
    out.push_back(o::stack(col, 0));
  }
  return out;
}

}  // namespace

void add_control_flow_ops(OpTable& t) {
  const OpTable rows = {
      {"If", 1, 17, if_op},
      {"Loop", 1, 17, loop_op},
      {"Scan", 8, 17, scan_op},
  };
  t.insert(t.end(), rows.begin(), rows.end());
}

}  // namespace spore::io::onnx_detail
