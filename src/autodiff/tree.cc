// SPDX-License-Identifier: Apache-2.0
#include "spore/tree.h"

#include <sstream>

#include "spore/error.h"
#include "spore/shape.h"

namespace spore {
namespace {

const char* kind_name(TensorTree::Kind k) {
  switch (k) {
    case TensorTree::Kind::None: return "none";
    case TensorTree::Kind::Tensor: return "a tensor";
    case TensorTree::Kind::Static: return "a static leaf";
    case TensorTree::Kind::List: return "a list";
    case TensorTree::Kind::Dict: return "a dict";
  }
  return "?";
}

void collect(const TensorTree& t, std::vector<Tensor>& out) {
  switch (t.kind()) {
    case TensorTree::Kind::Tensor: out.push_back(t.tensor()); break;
    case TensorTree::Kind::List:
      for (const auto& c : t.list()) collect(c, out);
      break;
    case TensorTree::Kind::Dict:
      for (const auto& [k, c] : t.items()) collect(c, out);
      break;
    default: break;
  }
}

TensorTree rebuild(const TensorTree& t, std::span<const Tensor> leaves, size_t& pos) {
  switch (t.kind()) {
    case TensorTree::Kind::Tensor: return TensorTree(leaves[pos++]);
    case TensorTree::Kind::List: {
      std::vector<TensorTree> items;
      items.reserve(t.size());
      for (const auto& c : t.list()) items.push_back(rebuild(c, leaves, pos));
      return TensorTree(std::move(items));
    }
    case TensorTree::Kind::Dict: {
      std::vector<TensorTree::Item> items;
      items.reserve(t.size());
      for (const auto& [k, c] : t.items()) items.emplace_back(k, rebuild(c, leaves, pos));
      return TensorTree::dict(std::move(items));
    }
    default: return t;
  }
}

void print(std::ostream& os, const TensorTree& t, bool shapes) {
  switch (t.kind()) {
    case TensorTree::Kind::None: os << "None"; break;
    case TensorTree::Kind::Tensor:
      os << 'T';
      if (shapes) os << shape_str(t.tensor().shape());
      break;
    case TensorTree::Kind::Static:
      // Exact and typed: jit signatures are built from this text, so 0.1 and 0.1000001, or the
      // integer 1 and the double 1.0, must print differently.
      std::visit([&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::string>) {
          os << '"';
          for (char c : v) os << (c == '"' || c == '\\' ? "\\" : "") << c;
          os << '"';
        } else if constexpr (std::is_same_v<V, bool>) {
          os << (v ? "true" : "false");
        } else if constexpr (std::is_same_v<V, double>) {
          std::ostringstream d;
          d.precision(17);
          d << v;
          os << d.str() << 'd';
        } else {
          os << v << 'i';
        }
      }, t.static_value());
      break;
    case TensorTree::Kind::List:
      os << '[';
      for (size_t i = 0; i < t.size(); ++i) {
        if (i) os << ", ";
        print(os, t[i], shapes);
      }
      os << ']';
      break;
    case TensorTree::Kind::Dict:
      os << '{';
      for (size_t i = 0; i < t.size(); ++i) {
        if (i) os << ", ";
        os << t.items()[i].first << ": ";
        print(os, t.items()[i].second, shapes);
      }
      os << '}';
      break;
  }
}

}  // namespace

TensorTree::TensorTree(Tensor t) : kind_(Kind::Tensor), tensor_(std::move(t)) {}
TensorTree::TensorTree(std::vector<Tensor> ts) : kind_(Kind::List) {
  list_.reserve(ts.size());
  for (auto& t : ts) list_.emplace_back(std::move(t));
}
TensorTree::TensorTree(std::vector<TensorTree> items) : kind_(Kind::List), list_(std::move(items)) {}
TensorTree::TensorTree(std::initializer_list<TensorTree> items) : kind_(Kind::List), list_(items) {}
TensorTree::TensorTree(const std::map<std::string, Tensor>& named) : kind_(Kind::Dict) {
  for (const auto& [k, v] : named) dict_.emplace_back(k, TensorTree(v));
}

TensorTree TensorTree::dict(std::vector<Item> items) {
  for (size_t i = 0; i < items.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      SPORE_CHECK(items[i].first != items[j].first, "[TensorTree] dict key \"", items[i].first,
                  "\" appears twice; keys must be unique");
  TensorTree t;
  t.kind_ = Kind::Dict;
  t.dict_ = std::move(items);
  return t;
}

TensorTree TensorTree::leaf(StaticLeaf v) {
  TensorTree t;
  t.kind_ = Kind::Static;
  t.static_ = std::move(v);
  return t;
}

const Tensor& TensorTree::tensor() const {
  SPORE_CHECK(kind_ == Kind::Tensor, "[TensorTree] expected a tensor, found ", kind_name(kind_), " ", structure_str());
  return tensor_;
}
const StaticLeaf& TensorTree::static_value() const {
  SPORE_CHECK(kind_ == Kind::Static, "[TensorTree] expected a static leaf, found ", kind_name(kind_));
  return static_;
}
size_t TensorTree::size() const {
  SPORE_CHECK(kind_ == Kind::List || kind_ == Kind::Dict, "[TensorTree] size() of ", kind_name(kind_),
              "; only lists and dicts have children");
  return kind_ == Kind::List ? list_.size() : dict_.size();
}
const TensorTree& TensorTree::operator[](size_t i) const {
  SPORE_CHECK(kind_ == Kind::List || kind_ == Kind::Dict, "[TensorTree] indexing ", kind_name(kind_), " by position");
  SPORE_CHECK(i < size(), "[TensorTree] index ", i, " out of range for ", size(), " children");
  return kind_ == Kind::List ? list_[i] : dict_[i].second;
}
const TensorTree& TensorTree::operator[](const std::string& key) const {
  SPORE_CHECK(kind_ == Kind::Dict, "[TensorTree] indexing ", kind_name(kind_), " by key \"", key, "\"");
  for (const auto& [k, v] : dict_)
    if (k == key) return v;
  throw Error(detail::cat("[TensorTree] no key \"", key, "\" in ", structure_str()));
}
const std::vector<TensorTree>& TensorTree::list() const {
  SPORE_CHECK(kind_ == Kind::List, "[TensorTree] expected a list, found ", kind_name(kind_));
  return list_;
}
const std::vector<TensorTree::Item>& TensorTree::items() const {
  SPORE_CHECK(kind_ == Kind::Dict, "[TensorTree] expected a dict, found ", kind_name(kind_));
  return dict_;
}

std::vector<Tensor> TensorTree::leaves() const {
  std::vector<Tensor> out;
  collect(*this, out);
  return out;
}

size_t TensorTree::num_leaves() const {
  switch (kind_) {
    case Kind::Tensor: return 1;
    case Kind::List: {
      size_t n = 0;
      for (const auto& c : list_) n += c.num_leaves();
      return n;
    }
    case Kind::Dict: {
      size_t n = 0;
      for (const auto& [k, c] : dict_) n += c.num_leaves();
      return n;
    }
    default: return 0;
  }
}

TensorTree TensorTree::with_leaves(std::span<const Tensor> leaves) const {
  SPORE_CHECK(leaves.size() == num_leaves(), "[TensorTree] ", leaves.size(), " leaves given for a structure with ",
              num_leaves(), ": ", structure_str());
  size_t pos = 0;
  return rebuild(*this, leaves, pos);
}

bool TensorTree::same_structure(const TensorTree& o) const {
  if (kind_ != o.kind_) return false;
  switch (kind_) {
    case Kind::Static: return static_ == o.static_;
    case Kind::List:
      if (list_.size() != o.list_.size()) return false;
      for (size_t i = 0; i < list_.size(); ++i)
        if (!list_[i].same_structure(o.list_[i])) return false;
      return true;
    case Kind::Dict:
      if (dict_.size() != o.dict_.size()) return false;
      for (size_t i = 0; i < dict_.size(); ++i)
        if (dict_[i].first != o.dict_[i].first || !dict_[i].second.same_structure(o.dict_[i].second)) return false;
      return true;
    default: return true;
  }
}

std::string TensorTree::structure_str(bool shapes) const {
  std::ostringstream os;
  print(os, *this, shapes);
  return os.str();
}

}  // namespace spore
