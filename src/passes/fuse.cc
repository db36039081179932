// SPDX-License-Identifier: Apache-2.0
#include "passes/fuse.h"

#include <algorithm>
#include <optional>

#include "codegen/fused.h"
#include "codegen/loop_program.h"
#include "passes/dce.h"
#include "passes/fuse_rows.h"
#include "passes/graph_editor.h"
#include "spore/error.h"
#include "transforms/ir_bridge.h"

namespace spore::passes {
namespace {

using transforms::kConstantOp;

struct Member {
  bool ok = false;
  DType dtype = DType::Bool;  // the float type it computes in, Bool when only bools
  std::vector<ir::Dim> shape;
  int rdims = 0;                  // a row reduction: the trailing dims it reduces
  std::vector<ir::Dim> in_shape;  // a row reduction: its operand's shape
  bool emitted = true;            // has a port in the C++ emitter (row groups hold only those)
};

bool compatible(DType a, DType b) { return a == b || a == DType::Bool || b == DType::Bool; }

using fuse_rows::Desc;
using fuse_rows::merge;
using fuse_rows::row_shape;

class Fuser {
 public:
  explicit Fuser(const ir::GraphPtr& g) : g_(g), nodes_(g->nodes()), n_(nodes_.size()) {}

  ir::GraphPtr run() {
    classify();
    find_users();
    group();
    absorb_row_producers();
    split();
    return emit();
  }

 private:
  bool literal(ir::ValueRef v) const { return v.node != ir::ValueRef::kParam && nodes_[v.node]->op() == kConstantOp; }

  void classify() {
    cand_.resize(n_);
    for (size_t k = 0; k < n_; ++k) {
      const ir::Node& n = *nodes_[k];
      std::vector<ir::Type> in;
      for (ir::ValueRef v : n.inputs()) in.push_back(g_->type_of(v));
      const auto& out = std::get<ir::TensorType>(n.outputs()[0]).shape;
      if (const int r = codegen::row_reduction_dims(n, in); r > 0) {
        const auto& operand = std::get<ir::TensorType>(in[0]).shape;
        if (fuse_rows::worth_a_row_group(operand, r))
          cand_[k] = {true, transforms::from_ir(std::get<ir::TensorType>(in[0]).dtype), out, r, operand, true};
        continue;
      }
      if (!codegen::lowering_problem(n, in).empty()) continue;
      cand_[k] = {true, codegen::compute_dtype_of(n, in), out, 0, {}, fuse_rows::emitted(*g_, k)};
    }
  }

  // Whether the groups in `gs` and node k can become one group: the new group may not depend on
  // itself through anything outside it. The walk goes backward from the group's inputs; other
  // groups count as one unit (a fused node depends on all its members' inputs), so a path that
  // enters another group at one member and leaves it at another is seen too. A node outside
  // every group before the set's first member cannot depend on the set, so the walk stops
  // there (a grouped one may: its group may have later members).
  bool acyclic(const std::vector<int>& gs, size_t k) {
    std::vector<size_t> set{k};
    for (int gi : gs) set.insert(set.end(), members_[gi].begin(), members_[gi].end());
    const size_t lo = *std::min_element(set.begin(), set.end());
    for (size_t m : set) mark_[m] = 1;
    std::vector<size_t> stack, touched;
    auto visit = [&](size_t p) {
      if ((p >= lo || group_of_[p] >= 0) && !seen_[p] && !mark_[p]) {
        seen_[p] = 1;
        touched.push_back(p);
        stack.push_back(p);
      }
    };
    auto inputs_of = [&](size_t m) {
      bool ok = true;
      for (ir::ValueRef v : nodes_[m]->inputs()) {
        if (v.node == ir::ValueRef::kParam) continue;
        const auto p = static_cast<size_t>(v.node);
        if (mark_[p] && !mark_[m]) ok = false;  // an outside node depends on the set
        visit(p);
      }
      return ok;
    };
    bool ok = true;
    for (size_t m : set) inputs_of(m);
    while (ok && !stack.empty()) {
      const size_t w = stack.back();
      stack.pop_back();
      ok = inputs_of(w);
      if (const int gw = group_of_[w]; gw >= 0)
        for (size_t m : members_[gw]) visit(m);
    }
    for (size_t m : set) mark_[m] = 0;
    for (size_t p : touched) seen_[p] = 0;
    return ok;
  }

  // Whether bool node k should stay out of producer group gi: every value it reads from gi is
  // also read by an op that is not elementwise (a conv, a matmul, a pool: such ops keep their
  // inputs for their backward), so that value is written and kept anyway. (The test does not ask
  // the autodiff rules' residuals: they may not be installed, and the grouping must not depend on
  // that.) Joining would only add k's mask as one more result of gi, written in the forward pass
  // and kept until its readers run, typically a backward pass's where: ReLU's mask `y <= 0`
  // beside y itself. Left out, k joins its readers' group and is recomputed from y there, as
  // PyTorch's threshold_backward does. (A y read only by elementwise ops may die in the forward
  // pass: its mask, a quarter of its size, is then the cheaper thing to keep, and k fuses with
  // its producer as before.)
  bool mask_of_materialized(size_t k, int gi) const {
    if (std::get<ir::TensorType>(nodes_[k]->outputs()[0]).dtype != ir::DType::Bool) return false;
    for (ir::ValueRef v : nodes_[k]->inputs()) {
      if (v.node == ir::ValueRef::kParam || group_of_[static_cast<size_t>(v.node)] != gi) continue;
      bool kept = false;
      for (size_t u : users_[static_cast<size_t>(v.node)]) kept = kept || !cand_[u].ok;
      if (!kept) return false;
    }
    return true;
  }

  // Who reads each node (users_), and which nodes are graph outputs.
  void find_users() {
    users_.assign(n_, {});
    used_by_output_.assign(n_, false);
    for (size_t k = 0; k < n_; ++k)
      for (ir::ValueRef v : nodes_[k]->inputs())
        if (v.node != ir::ValueRef::kParam) users_[static_cast<size_t>(v.node)].push_back(k);
    for (const ir::Output& o : g_->outputs())
      if (o.value.node != ir::ValueRef::kParam) used_by_output_[static_cast<size_t>(o.value.node)] = true;
  }

  void group() {
    group_of_.assign(n_, -1);
    mark_.assign(n_, 0);
    seen_.assign(n_, 0);
    for (size_t k = 0; k < n_; ++k) {
      if (!cand_[k].ok) continue;
      std::vector<int> chosen;
      DType dt = cand_[k].dtype;
      Desc desc = cand_[k].rdims > 0 ? Desc{cand_[k].in_shape, cand_[k].rdims} : Desc{cand_[k].shape, 0};
      bool unported = !cand_[k].emitted;
      for (ir::ValueRef v : nodes_[k]->inputs()) {
        if (v.node == ir::ValueRef::kParam) continue;
        const int gi = group_of_[static_cast<size_t>(v.node)];
        if (gi < 0 || std::count(chosen.begin(), chosen.end(), gi)) continue;
        if (mask_of_materialized(k, gi)) continue;
        const std::optional<Desc> both = merge(desc, desc_[gi]);
        if (!both || !compatible(dtype_[gi], dt)) continue;
        if (both->rdims > 0 && (unported || unported_[gi])) continue;
        std::vector<int> trial = chosen;
        trial.push_back(gi);
        if (!acyclic(trial, k)) continue;
        chosen = std::move(trial);
        desc = *both;
        unported = unported || unported_[gi];
        if (dt == DType::Bool) dt = dtype_[gi];
      }
      int target;
      if (chosen.empty()) {
        target = static_cast<int>(members_.size());
        members_.emplace_back();
        desc_.push_back(desc);
        dtype_.push_back(dt);
        unported_.push_back(unported);
      } else {
        target = chosen[0];
        for (size_t i = 1; i < chosen.size(); ++i) {
          for (size_t m : members_[chosen[i]]) {
            group_of_[m] = target;
            members_[target].push_back(m);
          }
          members_[chosen[i]].clear();
        }
        dtype_[target] = dt;
        desc_[target] = desc;
        unported_[target] = unported;
      }
      group_of_[k] = target;
      members_[target].push_back(k);
      std::sort(members_[target].begin(), members_[target].end());
    }
  }

  // A group of per-row values (1 / sqrt(var + eps) of a per-row input) forms before any row
  // reduction says which dims are the rows, so it cannot join the full-size ops reading it when
  // they are grouped; once a row group exists, it takes such producers in.
  void absorb_row_producers() {
    for (size_t gi = 0; gi < members_.size(); ++gi) {
      if (desc_[gi].rdims == 0) continue;
      const std::vector<ir::Dim> row = row_shape(desc_[gi].shape, desc_[gi].rdims);
      for (bool more = true; more;) {
        more = false;
        for (size_t mi = 0; mi < members_[gi].size() && !more; ++mi) {
          const size_t m = members_[gi][mi];
          for (ir::ValueRef v : nodes_[m]->inputs()) {
            if (v.node == ir::ValueRef::kParam) continue;
            const int h = group_of_[static_cast<size_t>(v.node)];
            if (h < 0 || h == static_cast<int>(gi) || desc_[h].rdims != 0 || desc_[h].shape != row || unported_[h] ||
                !compatible(dtype_[h], dtype_[gi]) || !acyclic({static_cast<int>(gi), h}, m))
              continue;
            for (size_t x : members_[h]) {
              group_of_[x] = static_cast<int>(gi);
              members_[gi].push_back(x);
            }
            members_[h].clear();
            if (dtype_[gi] == DType::Bool) dtype_[gi] = dtype_[h];
            std::sort(members_[gi].begin(), members_[gi].end());
            more = true;
            break;
          }
        }
      }
    }
  }

  // Values of `chunk` (sorted) used outside it: by other nodes or as graph outputs.
  std::vector<size_t> outputs_of(const std::vector<size_t>& chunk) const {
    std::vector<size_t> outs;
    for (size_t m : chunk) {
      bool used = used_by_output_[m];
      for (size_t u : users_[m]) used = used || !std::binary_search(chunk.begin(), chunk.end(), u);
      if (used) outs.push_back(m);
    }
    return outs;
  }

  // Whether a chunk computes or reads a float value: a chunk of a float group cut off with only
  // bool comparisons and logic on bools (e.g. logical_and of two compares) has nothing for the
  // loop program to compute in, so it stays unfused.
  bool has_float(const std::vector<size_t>& chunk) const {
    auto is_float = [](const ir::Type& t) {
      if (ir::is_token(t)) return false;
      const ir::DType d = std::get<ir::TensorType>(t).dtype;
      return d == ir::DType::Float32 || d == ir::DType::Float64;
    };
    for (size_t m : chunk) {
      if (is_float(nodes_[m]->outputs()[0])) return true;
      for (ir::ValueRef v : nodes_[m]->inputs())
        if (is_float(g_->type_of(v))) return true;
    }
    return false;
  }

  // Whether a chunk of a row group is still one kernel: it holds a row reduction (a row
  // program), or its values all have one shape (an elementwise program).
  bool one_kernel(const std::vector<size_t>& chunk) const {
    if (std::any_of(chunk.begin(), chunk.end(), [&](size_t m) { return cand_[m].rdims > 0; })) return true;
    return std::all_of(chunk.begin(), chunk.end(), [&](size_t m) { return cand_[m].shape == cand_[chunk[0]].shape; });
  }

  // Final groups: two ops or more computing a float type, each with at most kMaxOutputs
  // outputs (dispatch returns that many); a group with more is cut in topological order, which
  // cannot create a cycle since no outside node sits between its members.
  void split() {
    chunk_of_.assign(n_, -1);
    for (size_t gi = 0; gi < members_.size(); ++gi) {
      if (members_[gi].size() < 2 || dtype_[gi] == DType::Bool) continue;
      // The whole group when its outputs fit: a prefix of it may have more values read by later
      // members than the whole has results (a row group's per-row values), so cutting greedily
      // would split groups that need no split.
      std::vector<std::vector<size_t>> chunks(1);
      if (outputs_of(members_[gi]).size() <= static_cast<size_t>(kMaxOutputs)) {
        chunks[0] = members_[gi];
      } else {
        for (size_t m : members_[gi]) {
          auto trial = chunks.back();
          trial.push_back(m);
          if (outputs_of(trial).size() <= static_cast<size_t>(kMaxOutputs)) chunks.back() = std::move(trial);
          else chunks.push_back({m});
        }
      }
      for (auto& c : chunks) {
        if (c.size() < 2 || !has_float(c) || !one_kernel(c)) continue;
        for (size_t m : c) chunk_of_[m] = static_cast<int>(chunks_.size());
        chunks_.push_back(std::move(c));
      }
    }
  }

  // Units to emit: node k is unit k, chunk c is unit n + c.
  size_t unit_of(size_t k) const { return chunk_of_[k] >= 0 ? n_ + static_cast<size_t>(chunk_of_[k]) : k; }

  std::vector<size_t> deps(size_t u) const {
    std::vector<size_t> d;
    if (u < n_) {
      for (ir::ValueRef v : nodes_[u]->inputs())
        if (v.node != ir::ValueRef::kParam) d.push_back(unit_of(static_cast<size_t>(v.node)));
      return d;
    }
    for (size_t m : chunks_[u - n_])
      for (ir::ValueRef v : nodes_[m]->inputs())
        if (v.node != ir::ValueRef::kParam && !literal(v) && unit_of(static_cast<size_t>(v.node)) != u)
          d.push_back(unit_of(static_cast<size_t>(v.node)));
    return d;
  }

  void emit_node(GraphEditor& ed, size_t k) const {
    ir::NodePtr n = nodes_[k];
    if (n->op() == codegen::kFusedOp) n = codegen::bind_fused(n);
    else n = map_subgraphs(n, &fuse_elementwise);
    ed.bind_node(k, ed.add(with_inputs(n, ed.map_inputs(*n))));
  }

  void emit_chunk(GraphEditor& ed, const std::vector<size_t>& chunk) const {
    std::vector<ir::ValueRef> inputs;
    std::vector<size_t> literals;
    for (size_t m : chunk)
      for (ir::ValueRef v : nodes_[m]->inputs()) {
        if (v.node != ir::ValueRef::kParam && std::binary_search(chunk.begin(), chunk.end(), static_cast<size_t>(v.node))) continue;
        if (literal(v)) {
          if (!std::count(literals.begin(), literals.end(), static_cast<size_t>(v.node))) literals.push_back(static_cast<size_t>(v.node));
        } else if (!std::count(inputs.begin(), inputs.end(), v)) {
          inputs.push_back(v);
        }
      }
    // The sub-graph: parameters are the group's inputs, then its literals, then its ops.
    std::vector<ir::Param> params;
    std::vector<std::pair<ir::ValueRef, ir::ValueRef>> local;  // old value -> sub-graph value
    for (size_t i = 0; i < inputs.size(); ++i) {
      params.push_back({g_->type_of(inputs[i]), ir::Role::Data});
      local.push_back({inputs[i], {ir::ValueRef::kParam, static_cast<int32_t>(i)}});
    }
    std::vector<ir::NodePtr> sub;
    auto here = [&](ir::ValueRef v) {
      for (const auto& [o, nv] : local)
        if (o == v) return nv;
      SPORE_ASSERT(false, "fusion: value of node ", v.node, " missing from its group's sub-graph");
      return v;
    };
    auto add_sub = [&](size_t k, std::vector<ir::ValueRef> ins) {
      const ir::Node& n = *nodes_[k];
      local.push_back({{static_cast<int32_t>(k), 0}, {static_cast<int32_t>(sub.size()), 0}});
      sub.push_back(std::make_shared<const ir::Node>(n.op(), n.attrs_ptr(), std::move(ins), n.outputs(), n.scope()));
    };
    for (size_t k : literals) add_sub(k, {});
    for (size_t m : chunk) {
      std::vector<ir::ValueRef> ins;
      for (ir::ValueRef v : nodes_[m]->inputs()) ins.push_back(here(v));
      add_sub(m, std::move(ins));
    }
    const std::vector<size_t> outs = outputs_of(chunk);
    std::vector<ir::Output> results;
    std::vector<ir::Type> types;
    for (size_t m : outs) {
      results.push_back({here({static_cast<int32_t>(m), 0}), std::nullopt});
      types.push_back(nodes_[m]->outputs()[0]);
    }
    auto graph = std::make_shared<const ir::Graph>("fused", std::move(params), std::move(sub), std::move(results));
    std::vector<ir::ValueRef> operands;
    for (ir::ValueRef v : inputs) operands.push_back(ed.map(v));
    // The group takes the scope of its last op, where its result is defined.
    auto node = std::make_shared<const ir::Node>(codegen::kFusedOp, codegen::fused_attrs(graph), std::move(operands),
                                                 std::move(types), nodes_[chunk.back()]->scope(),
                                                 std::vector<ir::GraphPtr>{graph});
    const std::vector<ir::ValueRef> now = ed.add_checked(node);
    for (size_t j = 0; j < outs.size(); ++j) ed.bind_node(outs[j], std::span<const ir::ValueRef>(&now[j], 1));
  }

  // Emits every unit after the units it depends on (a group may have to come before nodes that
  // preceded its last member), in the original order otherwise.
  ir::GraphPtr emit() {
    GraphEditor ed(g_);
    std::vector<char> done(n_ + chunks_.size(), 0);
    std::vector<std::pair<size_t, bool>> stack;
    for (size_t k = 0; k < n_; ++k) {
      stack.push_back({unit_of(k), false});
      while (!stack.empty()) {
        auto [u, expanded] = stack.back();
        stack.pop_back();
        if (done[u]) continue;
        if (expanded) {
          if (u < n_) emit_node(ed, u);
          else emit_chunk(ed, chunks_[u - n_]);
          done[u] = 1;
          continue;
        }
        stack.push_back({u, true});
        for (size_t d : deps(u))
          if (!done[d]) stack.push_back({d, false});
      }
    }
    ir::GraphPtr out = ed.finish();
    // Literals copied into groups may be dead now.
    return out == g_ ? out : eliminate_dead_code(out);
  }

  const ir::GraphPtr& g_;
  const std::vector<ir::NodePtr>& nodes_;
  size_t n_;
  std::vector<Member> cand_;
  std::vector<int> group_of_;
  std::vector<std::vector<size_t>> members_;
  std::vector<Desc> desc_;
  std::vector<char> unported_;  // per group: holds an op without an emitted port
  std::vector<DType> dtype_;
  std::vector<char> mark_, seen_;
  std::vector<std::vector<size_t>> users_;
  std::vector<bool> used_by_output_;
  std::vector<int> chunk_of_;
  std::vector<std::vector<size_t>> chunks_;
};

}  // namespace

ir::GraphPtr fuse_elementwise(const ir::GraphPtr& g) {
  codegen::register_fused_ir_op();
  return Fuser(g).run();
}

}  // namespace spore::passes
