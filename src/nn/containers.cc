// SPDX-License-Identifier: Apache-2.0
#include "spore/nn/containers.h"

namespace spore::nn {

SequentialCell::SequentialCell() : UnaryCell("SequentialCell") {}

SequentialCell& SequentialCell::add(std::unique_ptr<UnaryCell> cell) {
  SPORE_CHECK(cell != nullptr, "[SequentialCell] add() got a null cell");
  register_cell(std::to_string(cells_.size()), cell.get());
  cells_.push_back(std::move(cell));
  return *this;
}

UnaryCell& SequentialCell::operator[](size_t i) const {
  SPORE_CHECK(i < cells_.size(), "[SequentialCell] index ", i, " is out of range for ", cells_.size(), " cells");
  return *cells_[i];
}

Tensor SequentialCell::construct(const Tensor& x) {
  Tensor y = x;
  for (auto& c : cells_) y = (*c)(y);
  return y;
}

CellList::CellList() : Cell("CellList") {}

CellList& CellList::append(std::unique_ptr<Cell> cell) {
  SPORE_CHECK(cell != nullptr, "[CellList] append() got a null cell");
  register_cell(std::to_string(cells_.size()), cell.get());
  cells_.push_back(std::move(cell));
  return *this;
}

Cell& CellList::operator[](size_t i) const {
  SPORE_CHECK(i < cells_.size(), "[CellList] index ", i, " is out of range for ", cells_.size(), " cells");
  return *cells_[i];
}

CellDict::CellDict() : Cell("CellDict") {}

CellDict& CellDict::insert(const std::string& key, std::unique_ptr<Cell> cell) {
  SPORE_CHECK(cell != nullptr, "[CellDict] insert('", key, "') got a null cell");
  register_cell(key, cell.get());  // rejects duplicate and dotted keys
  cells_.emplace_back(key, std::move(cell));
  return *this;
}

bool CellDict::contains(const std::string& key) const {
  for (const auto& [k, c] : cells_)
    if (k == key) return true;
  return false;
}

Cell& CellDict::operator[](const std::string& key) const {
  for (const auto& [k, c] : cells_)
    if (k == key) return *c;
  std::string have;
  for (const auto& [k, c] : cells_) have += (have.empty() ? "" : ", ") + k;
  throw Error("[CellDict] no cell named '" + key + "'; keys are: " + (have.empty() ? "(none)" : have));
}

std::vector<std::string> CellDict::keys() const {
  std::vector<std::string> out;
  for (const auto& [k, c] : cells_) out.push_back(k);
  return out;
}

}  // namespace spore::nn
