// SPDX-License-Identifier: Apache-2.0
#pragma once
// TensorTree: nested lists and named maps of tensors plus static leaves. One type serves every
// place that takes "a structure of tensors": the arguments a transform differentiates (argnums),
// in_axes/out_axes, jit signatures, a Cell's parameters and optimizer state. Transforms work on
// its flat leaf list and rebuild the same structure around new leaves.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "spore/tensor.h"

namespace spore {

/// A leaf that is not a tensor (a step count, a flag, a name): part of a tree's structure, so it
/// is compared by value and never differentiated.
using StaticLeaf = std::variant<bool, int64_t, double, std::string>;

class TensorTree {
 public:
  enum class Kind : uint8_t { None, Tensor, Static, List, Dict };
  using Item = std::pair<std::string, TensorTree>;

  /// None: an empty slot (e.g. "no aux output").
  TensorTree() = default;
  TensorTree(Tensor t);                                          // NOLINT: a tensor is a tree
  TensorTree(std::vector<Tensor> ts);                            // NOLINT: a list of tensor leaves
  TensorTree(std::vector<TensorTree> items);                     // NOLINT: a list
  TensorTree(std::initializer_list<TensorTree> items);           // a list
  TensorTree(const std::map<std::string, Tensor>& named);        // NOLINT: a dict (key order)
  static TensorTree dict(std::vector<Item> items);               // a dict in the given order
  static TensorTree leaf(StaticLeaf v);                          // a static leaf

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_tensor() const { return kind_ == Kind::Tensor; }
  bool is_list() const { return kind_ == Kind::List; }
  bool is_dict() const { return kind_ == Kind::Dict; }
  /// The tensor of a tensor leaf (throws naming the actual kind otherwise).
  const Tensor& tensor() const;
  const StaticLeaf& static_value() const;
  /// Number of children of a list or dict.
  size_t size() const;
  const TensorTree& operator[](size_t i) const;
  const TensorTree& operator[](const std::string& key) const;
  const std::vector<TensorTree>& list() const;
  const std::vector<Item>& items() const;

  /// Tensor leaves, depth first in order.
  std::vector<Tensor> leaves() const;
  size_t num_leaves() const;
  /// The same structure around new tensor leaves (static leaves kept); sizes must match.
  TensorTree with_leaves(std::span<const Tensor> leaves) const;
  /// Same kinds, sizes, keys and static values; tensors are not compared.
  bool same_structure(const TensorTree& o) const;
  /// The structure for messages: `[T, {w: T, b: T}, 3]`, with T[2, 3] when `shapes`.
  std::string structure_str(bool shapes = false) const;

 private:
  Kind kind_ = Kind::None;
  Tensor tensor_;
  StaticLeaf static_;
  std::vector<TensorTree> list_;
  std::vector<Item> dict_;
};

}  // namespace spore
