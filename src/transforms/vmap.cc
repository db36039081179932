// SPDX-License-Identifier: Apache-2.0
// vmap (spore/vmap.h): check the axes, trace f on per-example types, run the graph batched.
#include "spore/vmap.h"

#include "autodiff/frames.h"
#include "runtime/dispatch.h"
#include "spore/error.h"
#include "spore/ops.h"
#include "transforms/ir_bridge.h"
#include "transforms/trace.h"
#include "transforms/vmap_interpreter.h"

namespace spore::transforms {
namespace {

Tensor move_axis(const Tensor& t, int64_t from, int64_t to) {
  if (from == to) return t;
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (d != from) perm.push_back(d);
  perm.insert(perm.begin() + to, from);
  return ops::permute(t, perm);
}

std::string arg_name(size_t i, size_t leaf, size_t leaves) {
  return leaves > 1 ? detail::cat("argument ", i, " (leaf ", leaf, ")") : detail::cat("argument ", i);
}

struct Batch {
  int64_t size = -1;
  std::string where;  // the first batched argument, for messages
};

// Per argument and leaf: the batch axis (-1: not batched). Checks ranges and batch sizes.
// Matches an axes tree against a value's structure, appending one axis per tensor leaf.
void match_axes(const TensorTree& axes, const TensorTree& value, const std::string& path, const char* what,
                std::vector<int>& out) {
  using K = TensorTree::Kind;
  if (axes.kind() == K::None || axes.kind() == K::Static) {
    int axis = -1;
    if (axes.kind() == K::Static) {
      const auto* v = std::get_if<int64_t>(&axes.static_value());
      SPORE_CHECK(v != nullptr, "[vmap] ", what, path, " is not an integer axis; give an int (-1: not batched)");
      axis = static_cast<int>(*v);
    }
    out.insert(out.end(), value.num_leaves(), axis);
    return;
  }
  SPORE_CHECK(axes.kind() == value.kind() && (axes.is_list() || axes.is_dict()), "[vmap] ", what, path, " has structure ",
              axes.structure_str(), " but the value there is ", value.structure_str(true),
              "; give an int for all of it, or mirror its lists and dicts");
  if (axes.is_list()) {
    SPORE_CHECK(axes.size() == value.size(), "[vmap] ", what, path, " lists ", axes.size(), " axes for a list of ",
                value.size());
    for (size_t k = 0; k < value.size(); ++k) match_axes(axes[k], value[k], detail::cat(path, "[", k, "]"), what, out);
    return;
  }
  for (const auto& [key, sub] : value.items()) {
    bool found = false;
    for (const auto& item : axes.items()) found = found || item.first == key;
    SPORE_CHECK(found, "[vmap] ", what, path, " has no entry for key '", key, "' of the value ", value.structure_str());
    match_axes(axes[key], sub, detail::cat(path, "[", key, "]"), what, out);
  }
  SPORE_CHECK(axes.size() == value.size(), "[vmap] ", what, path, " names keys the value ", value.structure_str(),
              " does not have");
}

std::vector<std::vector<int>> leaf_axes(const std::vector<TensorTree>& args, const VmapAxes& in_axes, Batch& batch) {
  SPORE_CHECK(in_axes.all() || in_axes.size() == args.size(), "[vmap] in_axes has ", in_axes.size(),
              " entries but the function was called with ", args.size(), " argument", args.size() == 1 ? "" : "s",
              "; give one axis per argument (-1: not batched), or one axis for all of them");
  std::vector<std::vector<int>> axes(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const auto leaves = args[i].leaves();
    const std::vector<int> per_leaf = in_axes.leaf_axes(i, args[i], "in_axes");
    for (size_t l = 0; l < leaves.size(); ++l) {
      const Tensor& t = leaves[l];
      const int ax = per_leaf[l];
      SPORE_CHECK(ax >= -1, "[vmap] in_axes[", i, "] is ", ax,
                  "; give a batch axis counted from 0, or -1 for an argument shared by every lane");
      axes[i].push_back(ax);
      if (ax < 0) continue;
      SPORE_CHECK(ax < t.dim(), "[vmap] in_axes[", i, "] = ", ax, " is out of range for ", arg_name(i, l, leaves.size()),
                  " of shape ", shape_str(t.shape()), " (rank ", t.dim(), "); its batch axis must be in [0, ", t.dim(),
                  "), or -1 if it is not batched");
      const int64_t n = t.shape()[ax];
      const std::string here = detail::cat(arg_name(i, l, leaves.size()), " has ", n, " along axis ", ax);
      if (batch.size < 0) {
        batch.size = n;
        batch.where = here;
      }
      SPORE_CHECK(n == batch.size, "[vmap] batch sizes differ: ", batch.where, " but ", here,
                  "; every batched argument must have the same batch size");
    }
  }
  SPORE_CHECK(batch.size >= 0, "[vmap] no argument is batched (every in_axes entry is -1, or the batched arguments "
              "hold no tensors); batch at least one argument");
  return axes;
}

// An empty batch stacks no lanes: every output is empty along its batch axis (no rule runs, so
// none has to handle a zero-size batch).
TensorTree empty_batch(const ir::Graph& g, const TensorTree& out, const std::vector<int>& out_ax) {
  std::vector<Tensor> leaves;
  for (size_t j = 0; j < out_ax.size(); ++j) {
    const TensorType t = from_ir(std::get<ir::TensorType>(g.type_of(g.outputs()[j].value)));
    const int ax = out_ax[j];
    SPORE_CHECK(ax >= 0 && ax <= static_cast<int>(t.shape.size()), "[vmap] out_axes[", j, "] = ", ax,
                " cannot place the batch axis of output ", j, " (per-example shape ", shape_str(t.shape),
                ") for an empty batch; give an axis in [0, ", t.shape.size(), "]");
    Shape s = t.shape;
    s.insert(static_cast<size_t>(ax), 0);
    leaves.push_back(ops::zeros(s, {t.dtype}));
  }
  return out.with_leaves(leaves);
}

// Writes the state a lane function updated in place back into the caller's tensors: a batched
// argument takes each lane's value along its batch axis; a tensor shared by every lane (an
// unbatched argument or a captured tensor) takes a value only if that value is the same for
// every lane.
void write_state(const ir::Graph& g, const std::vector<TensorTree>& args, const std::vector<std::vector<int>>& axes,
                 const std::vector<Tensor>& captured, std::vector<BatchedValue>& result, int64_t batch, size_t n_out) {
  std::vector<Tensor> dst;
  std::vector<int> dst_axis;
  for (size_t i = 0; i < args.size(); ++i) {
    const auto leaves = args[i].leaves();
    for (size_t l = 0; l < leaves.size(); ++l) {
      dst.push_back(leaves[l]);
      dst_axis.push_back(axes[i][l]);
    }
  }
  const size_t n_args = dst.size();
  for (const Tensor& c : captured) {
    dst.push_back(c);
    dst_axis.push_back(-1);
  }
  for (size_t j = n_out; j < g.outputs().size(); ++j) {
    const size_t k = static_cast<size_t>(*g.outputs()[j].updates);
    Tensor& d = dst[k];
    if (dst_axis[k] >= 0) {
      ops::copy_(d, move_axis(materialize(result[j], batch), 0, dst_axis[k]));
      continue;
    }
    SPORE_CHECK(!result[j].batched, "[vmap] the function writes in place into ",
                k < n_args ? detail::cat("an unbatched argument (leaf ", k, ")") : std::string("a captured tensor"),
                ", which every lane shares, a value that differs between lanes; batch that tensor (in_axes), or return "
                "the per-lane values instead of writing them");
    ops::copy_(d, result[j].t);
  }
  result.resize(n_out);
}

}  // namespace

TensorTree vmap_call(const autodiff::TreeFn& f, const std::vector<TensorTree>& args, const VmapAxes& in_axes,
                     const VmapAxes& out_axes) {
  Batch batch;
  const auto axes = leaf_axes(args, in_axes, batch);

  // Trace f once on per-example types. A closed trace: tensors from outside (captured, or
  // traced by an enclosing jit or vmap) become explicit inputs, shared by every lane.
  SymbolicTrace trace("vmap", true);
  trace.allow_state();
  TensorTree out;
  {
    autodiff::FrameGuard open(&trace);
    std::vector<TensorTree> sargs;
    for (size_t i = 0; i < args.size(); ++i) {
      auto leaves = args[i].leaves();
      for (size_t l = 0; l < leaves.size(); ++l) {
        TensorType t = runtime::type_of(leaves[l]);
        if (axes[i][l] >= 0) t.shape.erase(static_cast<size_t>(axes[i][l]));
        leaves[l] = trace.input(t);
      }
      sargs.push_back(args[i].with_leaves(leaves));
    }
    out = f(sargs);
  }
  const ir::GraphPtr g = trace.finish(out.leaves());
  size_t n_out = g->outputs().size();  // the function's results; state updates follow them
  for (size_t j = 0; j < g->outputs().size(); ++j)
    if (g->outputs()[j].updates) n_out = std::min(n_out, j);
  std::vector<int> out_ax;  // per output leaf
  if (out_axes.per_leaf()) {
    SPORE_CHECK(out_axes.size() == 1, "[vmap] out_axes given as trees is one tree for the whole output, got ",
                out_axes.size());
    out_ax = out_axes.leaf_axes(0, out, "out_axes");
  } else {
    SPORE_CHECK(out_axes.all() || out_axes.size() == n_out, "[vmap] out_axes has ", out_axes.size(),
                " entries but the function returned ", n_out, " tensor", n_out == 1 ? "" : "s",
                "; give one axis per output tensor, or one axis for all of them");
    for (size_t j = 0; j < n_out; ++j) out_ax.push_back(out_axes.at(j));
  }
  if (batch.size == 0) return empty_batch(*g, out, out_ax);  // no lane writes anything

  // Run it on the batch: batched arguments with their batch axis in front, the rest shared.
  std::vector<BatchedValue> inputs;
  for (size_t i = 0; i < args.size(); ++i) {
    const auto leaves = args[i].leaves();
    for (size_t l = 0; l < leaves.size(); ++l) {
      const int ax = axes[i][l];
      if (ax >= 0) inputs.push_back({move_axis(leaves[l], ax, 0), true});
      else inputs.push_back({leaves[l], false});
    }
  }
  for (const Tensor& c : trace.captured()) inputs.push_back({c, false});
  auto result = run_batched(*g, inputs, batch.size);
  write_state(*g, args, axes, trace.captured(), result, batch.size, n_out);

  std::vector<Tensor> leaves;
  for (size_t j = 0; j < result.size(); ++j) {
    const int ax = out_ax[j];
    if (ax == -1) {
      SPORE_CHECK(!result[j].batched, "[vmap] out_axes[", j, "] is -1 (not batched) but output ", j,
                  " depends on a batched argument, so it differs between lanes; give it a batch axis");
      leaves.push_back(result[j].t);
      continue;
    }
    const Tensor t = materialize(result[j], batch.size);
    SPORE_CHECK(ax >= 0 && ax < t.dim(), "[vmap] out_axes[", j, "] = ", ax, " is out of range for output ", j,
                " of per-example shape ", shape_str(std::span<const Dim>(t.shape()).subspan(1)),
                "; the batch axis can go at 0 to ", t.dim() - 1, ", or -1 for an output shared by every lane");
    leaves.push_back(move_axis(t, 0, ax));
  }
  return out.with_leaves(leaves);
}

}  // namespace spore::transforms

namespace spore {

std::vector<int> VmapAxes::leaf_axes(size_t i, const TensorTree& value, const char* what) const {
  if (trees_.empty()) return std::vector<int>(value.num_leaves(), at(i));
  std::vector<int> out;
  transforms::match_axes(trees_[i], value, detail::cat("[", i, "]"), what, out);
  return out;
}

}  // namespace spore
