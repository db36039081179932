// SPDX-License-Identifier: Apache-2.0
#include "spore/nn/cell.h"

#include <map>
#include <set>
#include <sstream>

#include "spore/ops.h"

namespace spore::nn {
namespace {
std::string dt(DType t) { return std::string(dtype_name(t)); }
}  // namespace

Cell::Cell(std::string type_name) : type_name_(std::move(type_name)) {}
Cell::~Cell() = default;

void Cell::check_new_name(const std::string& name, const char* what) const {
  SPORE_CHECK(!name.empty() && name.find('.') == std::string::npos, "[", type_name_, "] ", what, " name '", name,
              "' is empty or contains '.'; dots separate the levels of a dotted name");
  auto taken = [&](const auto& v) {
    for (const auto& [n, p] : v)
      if (n == name) return true;
    return false;
  };
  SPORE_CHECK(!taken(params_) && !taken(buffers_) && !taken(children_), "[", type_name_, "] ", what, " name '", name,
              "' is already registered; every parameter, buffer and child needs its own name");
}

void Cell::register_parameter(std::string name, Tensor* slot) {
  check_new_name(name, "parameter");
  SPORE_CHECK(slot != nullptr && slot->defined(), "[", type_name_, "] parameter '", name,
              "' is undefined; create the tensor before registering it (skip optional ones, e.g. bias=false)");
  SPORE_CHECK(is_floating(slot->dtype()), "[", type_name_, "] parameter '", name, "' has dtype ",
              dtype_name(slot->dtype()), "; parameters must be floating (register integer state as a buffer)");
  params_.emplace_back(std::move(name), slot);
}

void Cell::register_buffer(std::string name, Tensor* slot) {
  check_new_name(name, "buffer");
  SPORE_CHECK(slot != nullptr && slot->defined(), "[", type_name_, "] buffer '", name, "' is undefined");
  buffers_.emplace_back(std::move(name), slot);
}

void Cell::register_cell(std::string name, Cell* child) {
  check_new_name(name, "child cell");
  SPORE_CHECK(child != nullptr && child != this, "[", type_name_, "] child cell '", name, "' is null or the cell itself");
  if (child->scope_name_.empty()) child->scope_name_ = name;
  children_.emplace_back(std::move(name), child);
}

template <class Fn>
void Cell::walk(const std::string& prefix, bool buffers, Fn&& fn) const {
  for (const auto& [n, slot] : buffers ? buffers_ : params_) fn(prefix + n, slot);
  for (const auto& [n, c] : children_) c->walk(prefix + n + ".", buffers, fn);
}

namespace {
// Tied parameters: one tensor (the same handle) in several slots counts once, as in PyTorch.
struct Seen {
  std::set<const void*> impls;
  bool first(const Tensor& t) { return impls.insert(t.impl()).second; }
};
}  // namespace

std::vector<std::pair<std::string, Tensor>> Cell::named_parameters() const {
  std::vector<std::pair<std::string, Tensor>> out;
  Seen seen;
  walk("", false, [&](const std::string& n, Tensor* t) {
    if (seen.first(*t)) out.emplace_back(n, *t);
  });
  return out;
}

std::vector<Tensor> Cell::parameters() const {
  std::vector<Tensor> out;
  Seen seen;
  walk("", false, [&](const std::string&, Tensor* t) {
    if (seen.first(*t)) out.push_back(*t);
  });
  return out;
}

std::vector<std::pair<std::string, Tensor>> Cell::named_buffers() const {
  std::vector<std::pair<std::string, Tensor>> out;
  walk("", true, [&](const std::string& n, Tensor* t) { out.emplace_back(n, *t); });
  return out;
}

std::vector<std::pair<std::string, Cell*>> Cell::named_cells() const { return children_; }

std::vector<std::pair<std::string, Tensor*>> Cell::parameter_slots(bool include_tied) {
  std::vector<std::pair<std::string, Tensor*>> out;
  Seen seen;
  walk("", false, [&](const std::string& n, Tensor* t) {
    if (seen.first(*t) || include_tied) out.emplace_back(n, t);
  });
  return out;
}

std::vector<std::pair<std::string, Tensor*>> Cell::buffer_slots() {
  std::vector<std::pair<std::string, Tensor*>> out;
  walk("", true, [&](const std::string& n, Tensor* t) { out.emplace_back(n, t); });
  return out;
}

void Cell::to_empty(Device device) {
  SPORE_CHECK(device.type != DeviceType::Meta, "[", type_name_, ".to_empty] the target must be a real device");
  std::map<const void*, Tensor> done;  // tied slots get the same new tensor
  auto fill = [&](std::vector<std::pair<std::string, Tensor*>> slots) {
    for (auto& [n, t] : slots) {
      if (t->device().type != DeviceType::Meta) continue;
      auto it = done.find(t->impl());
      if (it == done.end()) it = done.emplace(t->impl(), ops::zeros(t->shape(), {t->dtype(), device})).first;
      *t = it->second;
    }
  };
  fill(parameter_slots(/*include_tied=*/true));
  fill(buffer_slots());
}

void Cell::train(bool on) {
  training_.set(on);
  for (auto& [n, c] : children_) c->train(on);
}

std::vector<std::pair<std::string, Tensor>> Cell::state_dict() const {
  auto out = named_parameters();
  auto b = named_buffers();
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

void Cell::load_state_dict(const std::vector<std::pair<std::string, Tensor>>& sd, bool strict) {
  std::map<std::string, Tensor*> slots;
  for (auto& p : parameter_slots()) slots.emplace(p);
  for (auto& p : buffer_slots()) slots.emplace(p);
  std::vector<std::string> problems;
  std::set<std::string> seen;
  std::vector<std::pair<Tensor*, const Tensor*>> writes;
  for (const auto& [name, value] : sd) {
    if (!seen.insert(name).second) {
      problems.push_back("duplicate key '" + name + "'");
      continue;
    }
    auto it = slots.find(name);
    if (it == slots.end()) {
      if (strict) problems.push_back("unexpected key '" + name + "'");
      continue;
    }
    const Tensor& have = *it->second;
    if (!value.defined()) {
      problems.push_back("key '" + name + "' holds an undefined tensor");
    } else if (value.shape() != have.shape()) {
      problems.push_back("key '" + name + "' has shape " + shape_str(value.shape()) + " but the cell's is " +
                         shape_str(have.shape()));
    } else if (value.dtype() != have.dtype()) {
      problems.push_back("key '" + name + "' has dtype " + dt(value.dtype()) + " but the cell's is " +
                         dt(have.dtype()) + " (convert the cell with to(dtype) or the value first)");
    } else {
      writes.emplace_back(it->second, &value);
    }
  }
  if (strict)
    for (const auto& [name, slot] : slots)
      if (!seen.count(name)) problems.push_back("missing key '" + name + "'");
  if (!problems.empty()) {
    std::ostringstream os;
    os << "[" << type_name_ << ".load_state_dict] " << problems.size() << " problem(s), nothing was loaded:";
    for (const auto& p : problems) os << "\n  " << p;
    throw Error(os.str());
  }
  for (auto& [slot, value] : writes) {
    if (slot->device().type == DeviceType::Meta) *slot = value->contiguous().clone();
    else ops::copy_(*slot, *value);
  }
}

void Cell::to(DType dtype) {
  SPORE_CHECK(is_floating(dtype), "[", type_name_, ".to] target dtype ", dtype_name(dtype),
              " is not floating; cells convert their floating parameters and buffers only");
  for (auto* slots : {&params_, &buffers_})
    for (auto& [n, t] : *slots)
      if (is_floating(t->dtype())) *t = t->to(dtype);
  for (auto& [n, c] : children_) c->to(dtype);
}

TensorTree Cell::parameter_tree() const {
  std::vector<TensorTree::Item> items;
  for (auto& [n, t] : named_parameters()) items.emplace_back(n, TensorTree(t));
  return TensorTree::dict(std::move(items));
}

int64_t Cell::num_parameters() const {
  int64_t n = 0;
  for (const Tensor& t : parameters()) n += t.numel();
  return n;
}

namespace detail {

ParameterSwap::ParameterSwap(Cell& cell, const TensorTree& params) {
  auto slots = cell.parameter_slots();
  const std::string where = "[functional_call] " + cell.type_name() + ": ";
  SPORE_CHECK(params.is_dict(), where, "params must be a dict like cell.parameter_tree(), got ",
              params.structure_str());
  std::map<std::string, const TensorTree*> by_name;
  for (const auto& [k, v] : params.items()) by_name.emplace(k, &v);
  std::vector<std::string> problems;
  for (const auto& [name, slot] : slots) {
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      problems.push_back("missing '" + name + "'");
      continue;
    }
    if (!it->second->is_tensor()) {
      problems.push_back("'" + name + "' is not a tensor");
      continue;
    }
    const Tensor& t = it->second->tensor();
    if (t.shape() != slot->shape() || t.dtype() != slot->dtype())
      problems.push_back("'" + name + "' is " + dt(t.dtype()) + shape_str(t.shape()) + ", the parameter " +
                         dt(slot->dtype()) + shape_str(slot->shape()));
    by_name.erase(it);
  }
  for (const auto& [k, v] : by_name) problems.push_back("unexpected '" + k + "'");
  if (!problems.empty()) {
    std::ostringstream os;
    os << where << "params do not match the cell's parameters:";
    for (const auto& p : problems) os << "\n  " << p;
    throw Error(os.str());
  }
  // Every slot, tied ones included, takes the entry of the first slot holding its tensor.
  auto all = cell.parameter_slots(/*include_tied=*/true);
  std::map<const void*, std::string> first_name;
  for (const auto& [name, slot] : slots) first_name.emplace(slot->impl(), name);
  saved_.reserve(all.size());
  for (const auto& [name, slot] : all) saved_.emplace_back(slot, *slot);
  for (const auto& [name, slot] : all) *slot = params[first_name.at(slot->impl())].tensor();
}

ParameterSwap::~ParameterSwap() {
  for (auto& [slot, original] : saved_) *slot = std::move(original);
}

}  // namespace detail
}  // namespace spore::nn
