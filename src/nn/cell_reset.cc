// SPDX-License-Identifier: Apache-2.0
// Cell::reset_parameters: every layer redraws its own tensors in its constructor's order, so the
// generator walks the same offsets it walked when the model was built.
#include <set>
#include <sstream>

#include "spore/nn/cell.h"
#include "spore/mode.h"
#include "spore/ops.h"

namespace spore::nn {

void Cell::reset_parameters() {
  SPORE_CHECK(reset_done_ == nullptr, "[", type_name_, ".reset_parameters] called from inside a reset of this "
              "cell; a reset_own() override resets its children with reset_child()");
  std::vector<std::pair<std::string, Tensor*>> slots = parameter_slots(/*include_tied=*/true);
  for (auto& b : buffer_slots()) slots.push_back(b);
  for (const auto& [name, t] : slots)
    SPORE_CHECK(t->device().type != DeviceType::Meta, "[", type_name_, ".reset_parameters] '", name,
                "' is on the meta device and has no memory to fill; call to_empty() first, then reset_parameters()");
  // A tied slot (the same tensor as an earlier slot) gets a private scratch copy for the
  // pass: its layer still draws, as its constructor did before the tie was made, but the draw
  // lands in the scratch and the shared tensor keeps the first slot's.
  // A shared child lists its own slots under each of its names: those are one slot, not a tie.
  std::set<const void*> first;
  std::set<const Tensor*> seen_slots;
  std::vector<std::pair<Tensor*, Tensor>> ties;
  for (auto& [name, t] : slots) {
    if (!seen_slots.insert(t).second || first.insert(t->impl()).second) continue;
    ties.emplace_back(t, *t);
    *t = t->clone();
  }
  // Every parameter must be redrawn: one that keeps its storage version was missed, as when a
  // subclass of a layer adds a parameter but inherits the layer's reset_own(). (Buffers may be
  // kept on purpose: a loss's class weights.)
  std::vector<std::pair<std::string, uint64_t>> before;
  std::vector<Tensor*> params;
  // Inside a trace copy_ is recorded, not run, and moves no version: nothing to check there.
  const bool tracing = transforms::tracing();
  for (auto& [name, t] : parameter_slots(/*include_tied=*/true)) {
    if (t->numel() == 0 || tracing) continue;
    before.emplace_back(name, t->version());
    params.push_back(t);
  }
  std::set<const Cell*> done{this};
  reset_done_ = &done;
  auto retie = [&] {
    reset_done_ = nullptr;
    for (auto& [slot, shared] : ties) *slot = shared;
  };
  std::string missed;
  try {
    reset_own();
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i]->version() == before[i].second) missed += (missed.empty() ? "'" : ", '") + before[i].first + "'";
  } catch (...) {
    retie();
    throw;
  }
  retie();
  SPORE_CHECK(missed.empty(), "[", type_name_, ".reset_parameters] parameter(s) ", missed,
              " were not redrawn: the cell holding them inherits a reset_own() that does not know them (a "
              "subclass of a layer that adds parameters); override reset_own() there to redraw them as its "
              "constructor does");
}

void Cell::reset_child(Cell& child) {
  SPORE_CHECK(reset_done_ != nullptr, "[", type_name_, ".reset_child] called outside reset_parameters(); "
              "reset_child() belongs in a reset_own() override, call reset_parameters() instead");
  if (!reset_done_->insert(&child).second) return;  // a shared child: its constructor ran once
  child.reset_done_ = reset_done_;
  struct Clear {
    Cell& cell;
    ~Clear() { cell.reset_done_ = nullptr; }
  } clear{child};
  child.reset_own();
}

void Cell::reset_own() {
  if (!params_.empty() || !buffers_.empty()) {
    std::string names;
    for (const auto* list : {&params_, &buffers_})
      for (const auto& [n, t] : *list) names += (names.empty() ? "" : ", ") + n;
    std::ostringstream os;
    os << "[" << type_name_ << ".reset_parameters] " << type_name_ << " holds tensors of its own (" << names
       << ") but does not override reset_own(); override it to redraw them as its constructor does, or load "
          "the weights with load_state_dict()";
    throw Error(os.str());
  }
  for (auto& [n, c] : children_) reset_child(*c);
}

}  // namespace spore::nn
