// SPDX-License-Identifier: Apache-2.0
// The transform entry points behind include/spore/autodiff.h: open a frame, hand the function
// fresh aliases of its arguments that the frame tracks, close the frame, then emit the
// derivative with only the outer frames active.
#include <memory>

#include "autodiff/forward.h"
#include "autodiff/tape.h"
#include "runtime/dispatch.h"
#include "spore/autodiff.h"
#include "spore/error.h"
#include "spore/ops.h"

namespace spore {

TensorTree stop_gradient(const TensorTree& t) {
  auto leaves = t.leaves();
  for (auto& l : leaves) l = ops::stop_gradient(l);
  return t.with_leaves(leaves);
}

namespace autodiff {
namespace {

std::string type_str(const TensorType& t) { return detail::cat(dtype_name(t.dtype), shape_str(t.shape)); }

void check_argnums(const char* api, const std::vector<int>& argnums, size_t nargs) {
  SPORE_CHECK(!argnums.empty(), "[", api, "] no argument positions to differentiate; pass at least one");
  for (size_t k = 0; k < argnums.size(); ++k) {
    const int a = argnums[k];
    SPORE_CHECK(a >= 0 && static_cast<size_t>(a) < nargs, "[", api, "] argument position ", a,
                " is out of range for a function called with ", nargs, " argument", nargs == 1 ? "" : "s",
                "; positions count from 0");
    for (size_t j = 0; j < k; ++j)
      SPORE_CHECK(argnums[j] != a, "[", api, "] argument position ", a, " is listed twice");
  }
}

// Splits f's result into (out, aux).
std::pair<TensorTree, TensorTree> split_aux(const char* api, TensorTree r, bool has_aux) {
  if (!has_aux) return {std::move(r), TensorTree()};
  SPORE_ASSERT(r.is_list() && r.size() == 2, api, ": has_aux result is not [out, aux]");
  return {r[0], r[1]};
}

}  // namespace

VjpResult vjp(const char* api, const TreeFn& f, const std::vector<TensorTree>& args, const std::vector<int>& argnums,
              bool has_aux, bool retain) {
  check_argnums(api, argnums, args.size());
  auto tape = std::make_shared<Tape>();
  std::vector<TensorTree> targs = args;
  // The differentiated leaves, per position: their value ids and types.
  std::vector<std::vector<int64_t>> ids(argnums.size());
  std::vector<std::vector<TensorType>> types(argnums.size());
  TensorTree out, aux;
  {
    FrameGuard open(tape.get());
    for (size_t k = 0; k < argnums.size(); ++k) {
      auto leaves = targs[argnums[k]].leaves();
      for (size_t l = 0; l < leaves.size(); ++l) {
        SPORE_CHECK(is_floating(leaves[l].dtype()), "[", api, "] argument ", argnums[k],
                    leaves.size() > 1 ? detail::cat(" (leaf ", l, ")") : std::string(), " is ",
                    dtype_name(leaves[l].dtype()), "; only floating tensors can be differentiated; convert it with "
                    ".to(DType::Float32) or leave its position out of argnums");
        leaves[l] = tape->track(leaves[l]);
        ids[k].push_back(tape->id_of(leaves[l]));
        types[k].push_back(runtime::type_of(leaves[l]));
      }
      targs[argnums[k]] = targs[argnums[k]].with_leaves(leaves);
    }
    std::tie(out, aux) = split_aux(api, f(targs), has_aux);
  }
  // The tape is closed: what the caller gets must not look tracked by it.
  auto out_leaves = out.leaves();
  bool any_float = false;
  for (const Tensor& o : out_leaves) any_float = any_float || is_floating(o.dtype());
  SPORE_CHECK(any_float, "[", api, "] the function returned no floating tensor (", out.structure_str(true),
              "): only floating outputs can be differentiated (integer and bool values carry no gradient); return a "
              "floating value, e.g. .to(DType::Float32) of it");
  std::vector<int64_t> out_ids(out_leaves.size());
  std::vector<TensorType> out_types(out_leaves.size());
  for (size_t i = 0; i < out_leaves.size(); ++i) {
    out_ids[i] = tape->id_of(out_leaves[i]);
    out_types[i] = runtime::type_of(out_leaves[i]);
    out_leaves[i] = without_entry(out_leaves[i], tape->uid());
  }
  VjpResult r;
  r.out = out.with_leaves(out_leaves);
  auto aux_leaves = aux.leaves();
  for (auto& l : aux_leaves) l = without_entry(l, tape->uid());
  r.aux = aux.with_leaves(aux_leaves);
  std::string api_name = api;
  auto shared_used = std::make_shared<bool>(false);
  r.pullback = [tape, ids = std::move(ids), types = std::move(types), out_ids = std::move(out_ids),
                out_types = std::move(out_types), structure = out, api_name, retain,
                shared_used](const TensorTree& ct) {
    SPORE_CHECK(retain || !*shared_used, "[", api_name, "] the pullback was already run and its residuals freed");
    *shared_used = true;
    SPORE_CHECK(ct.same_structure(structure), "[", api_name, "] the cotangent has structure ", ct.structure_str(),
                "; expected the output's structure ", structure.structure_str());
    auto cts = ct.leaves();
    for (size_t i = 0; i < cts.size(); ++i)
      SPORE_CHECK(cts[i].shape() == out_types[i].shape && cts[i].dtype() == out_types[i].dtype, "[", api_name,
                  "] the cotangent of output ", i, " is ", dtype_name(cts[i].dtype()), shape_str(cts[i].shape()),
                  "; it must match the output, ", type_str(out_types[i]));
    std::vector<int64_t> wanted;
    std::vector<TensorType> wanted_types;
    for (size_t k = 0; k < ids.size(); ++k) {
      wanted.insert(wanted.end(), ids[k].begin(), ids[k].end());
      wanted_types.insert(wanted_types.end(), types[k].begin(), types[k].end());
    }
    auto g = tape->backward(out_ids, cts, wanted, wanted_types, !retain);
    std::vector<TensorTree> result;
    size_t pos = 0;
    for (size_t k = 0; k < ids.size(); ++k) {
      std::vector<Tensor> leaves(g.begin() + pos, g.begin() + pos + ids[k].size());
      pos += ids[k].size();
      result.push_back(TensorTree(std::move(leaves)));
    }
    return result;
  };
  // Rebuild each position's structure around its gradient leaves.
  auto pb = std::move(r.pullback);
  std::vector<TensorTree> shapes;
  for (int a : argnums) shapes.push_back(args[a]);
  r.pullback = [pb = std::move(pb), shapes = std::move(shapes)](const TensorTree& ct) {
    auto flat = pb(ct);
    std::vector<TensorTree> out;
    for (size_t k = 0; k < flat.size(); ++k) out.push_back(shapes[k].with_leaves(flat[k].leaves()));
    return out;
  };
  return r;
}

ValueAndGrad value_and_grad(const char* api, const TreeFn& f, const std::vector<TensorTree>& args,
                            const std::vector<int>& argnums, bool has_aux) {
  auto r = vjp(api, f, args, argnums, has_aux, false);
  SPORE_CHECK(r.out.is_tensor(), "[", api, "] the function returned ", r.out.structure_str(true),
              "; ", api, " needs one scalar tensor (a loss); use vjp for other outputs",
              has_aux ? "" : ", or return std::pair<Tensor, TensorTree> to pass an auxiliary output");
  const Tensor& y = r.out.tensor();
  SPORE_CHECK(is_floating(y.dtype()), "[", api, "] the function returned a ", dtype_name(y.dtype()),
              " tensor; only floating outputs can be differentiated (an integer or bool result has no gradient); "
              "compute the loss in floating point");
  SPORE_CHECK(y.numel() == 1, "[", api, "] the function returned a tensor of shape ", shape_str(y.shape()), "; ", api,
              " needs a scalar output. Reduce it (sum or mean), or use vjp(f, x) and pass a cotangent of shape ",
              shape_str(y.shape()));
  ValueAndGrad out;
  out.grads = r.pullback(TensorTree(ops::ones_like(y)));
  out.value = y;
  out.aux = std::move(r.aux);
  return out;
}

std::pair<TensorTree, TensorTree> jvp(const char* api, const TreeFn& f, const std::vector<TensorTree>& args,
                                      const std::vector<TensorTree>& tangents) {
  SPORE_CHECK(tangents.size() == args.size(), "[", api, "] ", tangents.size(), " tangents for ", args.size(),
              " arguments; give one per argument");
  Forward fwd;
  std::vector<TensorTree> targs = args;
  TensorTree out;
  {
    FrameGuard open(&fwd);
    for (size_t k = 0; k < args.size(); ++k) {
      if (tangents[k].is_none()) continue;
      SPORE_CHECK(tangents[k].same_structure(args[k]), "[", api, "] the tangent of argument ", k, " has structure ",
                  tangents[k].structure_str(), "; expected ", args[k].structure_str());
      auto leaves = args[k].leaves();
      auto tl = tangents[k].leaves();
      for (size_t l = 0; l < leaves.size(); ++l) {
        SPORE_CHECK(tl[l].shape() == leaves[l].shape() && tl[l].dtype() == leaves[l].dtype(), "[", api,
                    "] the tangent of argument ", k, " is ", dtype_name(tl[l].dtype()), shape_str(tl[l].shape()),
                    "; it must match the argument, ", dtype_name(leaves[l].dtype()), shape_str(leaves[l].shape()));
        SPORE_CHECK(is_floating(leaves[l].dtype()), "[", api, "] argument ", k, " is ", dtype_name(leaves[l].dtype()),
                    "; only floating tensors have tangents");
        leaves[l] = fwd.track(leaves[l], tl[l]);
      }
      targs[k] = args[k].with_leaves(leaves);
    }
    out = f(targs);
  }
  auto leaves = out.leaves();
  std::vector<Tensor> tl(leaves.size());
  for (size_t i = 0; i < leaves.size(); ++i) {
    tl[i] = fwd.tangent_of(leaves[i]);
    if (!tl[i].defined()) tl[i] = ops::zeros_like(leaves[i]);
    leaves[i] = without_entry(leaves[i], fwd.uid());
  }
  return {out.with_leaves(leaves), out.with_leaves(tl)};
}

Tensor jacrev(const std::function<Tensor(const Tensor&)>& f, const Tensor& x) {
  TreeFn tf = [&f](const std::vector<TensorTree>& a) { return TensorTree(f(a[0].tensor())); };
  auto r = vjp("jacrev", tf, {TensorTree(x)}, {0}, false, true);
  const Tensor& y = r.out.tensor();
  const int64_t m = y.numel();
  std::vector<Tensor> rows;
  rows.reserve(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) {
    Tensor e = ops::one_hot(ops::scalar_tensor(i, DType::Int64), m).to(y.dtype()).reshape(y.shape());
    rows.push_back(r.pullback(TensorTree(e))[0].tensor());
  }
  Shape js = y.shape();
  for (Dim d : x.shape()) js.push_back(d);
  if (m == 0) return ops::zeros(js, {x.dtype()});
  return ops::stack(rows, 0).reshape(js);
}

Tensor jacfwd(const std::function<Tensor(const Tensor&)>& f, const Tensor& x) {
  TreeFn tf = [&f](const std::vector<TensorTree>& a) { return TensorTree(f(a[0].tensor())); };
  const int64_t n = x.numel();
  std::vector<Tensor> cols;
  Tensor y;
  for (int64_t i = 0; i < n; ++i) {
    Tensor e = ops::one_hot(ops::scalar_tensor(i, DType::Int64), n).to(x.dtype()).reshape(x.shape());
    auto [out, t] = jvp("jacfwd", tf, {TensorTree(x)}, {TensorTree(e)});
    y = out.tensor();
    cols.push_back(t.tensor());
  }
  if (n == 0) y = f(x);
  Shape js = y.shape();
  for (Dim d : x.shape()) js.push_back(d);
  if (n == 0) return ops::zeros(js, {x.dtype()});
  // cols[i] has y's shape; stacking on a new last axis puts the input index last.
  return ops::stack(cols, -1).reshape(js);
}

}  // namespace autodiff
}  // namespace spore
