// SPDX-License-Identifier: Apache-2.0
#pragma once
// Containers that own their cells: SequentialCell (a chain of UnaryCells), CellList and CellDict.
// Children are named by position ("0", "1", ...) or by key, so parameters read "2.weight".
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "spore/nn/cell.h"

namespace spore::nn {

/// Applies its cells in order: `net.add(std::make_unique<Dense>(4, 8)).add(std::make_unique<ReLU>());`.
/// The variadic constructor takes cells already built; layers constructed inside its argument
/// list draw their weights in an order the compiler picks (GCC: last to first), so the same seed
/// gives other weights under another compiler and reset_parameters() cannot reproduce them.
class SequentialCell : public UnaryCell {
 public:
  SequentialCell();
  template <class... Cs>
  explicit SequentialCell(std::unique_ptr<Cs>... cells) : SequentialCell() {
    (add(std::move(cells)), ...);
  }
  /// Appends a cell (named by its position).
  SequentialCell& add(std::unique_ptr<UnaryCell> cell);
  size_t size() const { return cells_.size(); }
  UnaryCell& operator[](size_t i) const;
  Tensor construct(const Tensor& x) override;

 private:
  std::vector<std::unique_ptr<UnaryCell>> cells_;
};

/// A list of cells of any kind (e.g. transformer layers); the owner calls them.
class CellList : public Cell {
 public:
  CellList();
  CellList& append(std::unique_ptr<Cell> cell);
  size_t size() const { return cells_.size(); }
  Cell& operator[](size_t i) const;
  /// The i-th cell as its concrete type (a clear error when it is another type).
  template <class T>
  T& at(size_t i) const {
    auto* p = dynamic_cast<T*>(&(*this)[i]);
    SPORE_CHECK(p != nullptr, "[CellList] element ", i, " is a ", (*this)[i].type_name(), ", not the type asked for");
    return *p;
  }

 private:
  std::vector<std::unique_ptr<Cell>> cells_;
};

/// Cells by name, in insertion order.
class CellDict : public Cell {
 public:
  CellDict();
  CellDict& insert(const std::string& key, std::unique_ptr<Cell> cell);
  bool contains(const std::string& key) const;
  Cell& operator[](const std::string& key) const;
  std::vector<std::string> keys() const;
  size_t size() const { return cells_.size(); }

 private:
  std::vector<std::pair<std::string, std::unique_ptr<Cell>>> cells_;
};

}  // namespace spore::nn
