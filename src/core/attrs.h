// SPDX-License-Identifier: Apache-2.0
#pragma once
// Typed attribute structs: each primitive's attributes are a plain struct whose `fields()` lists
// (name, member pointer) pairs. That one list gives hashing, equality and printing here, and
// parsing and serialization in the IR layer, so no attribute is ever looked up by string at run
// time.
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>

#include "spore/dtype.h"
#include "spore/small_vec.h"

namespace spore {

template <class S, class M>
struct Field {
  const char* name;
  M S::*member;
};
template <class S, class M>
constexpr Field<S, M> field(const char* name, M S::*member) {
  return {name, member};
}

/// Attributes of primitives that have none.
struct NoAttrs {
  static constexpr auto fields() { return std::tuple<>(); }
};

namespace attr_detail {
inline void hash_combine(size_t& h, size_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); }

template <class M>
size_t hash_value(const M& v) {
  if constexpr (std::is_enum_v<M>) {
    return std::hash<std::underlying_type_t<M>>{}(static_cast<std::underlying_type_t<M>>(v));
  } else if constexpr (std::is_arithmetic_v<M>) {
    return std::hash<M>{}(v);
  } else if constexpr (std::is_same_v<M, std::string>) {
    return std::hash<std::string>{}(v);
  } else {  // SmallVec
    size_t h = v.size();
    for (auto x : v) hash_combine(h, hash_value(x));
    return h;
  }
}

template <class M>
void print_value(std::ostream& os, const M& v) {
  if constexpr (std::is_same_v<M, DType>) {
    os << dtype_name(v);
  } else if constexpr (std::is_enum_v<M>) {
    os << static_cast<int64_t>(v);
  } else if constexpr (std::is_same_v<M, bool>) {
    os << (v ? "true" : "false");
  } else if constexpr (std::is_floating_point_v<M>) {
    os.precision(17);
    os << v;
  } else if constexpr (std::is_arithmetic_v<M>) {
    os << +v;
  } else if constexpr (std::is_same_v<M, std::string>) {
    os << '"' << v << '"';
  } else {
    os << '[';
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) os << ", ";
      print_value(os, v[i]);
    }
    os << ']';
  }
}
}  // namespace attr_detail

template <class A>
size_t attrs_hash(const A& a) {
  size_t h = 0;
  std::apply([&](auto... f) { (attr_detail::hash_combine(h, attr_detail::hash_value(a.*(f.member))), ...); },
             A::fields());
  return h;
}

template <class A>
bool attrs_equal(const A& a, const A& b) {
  return std::apply([&](auto... f) { return ((a.*(f.member) == b.*(f.member)) && ...); }, A::fields());
}

/// "axes=[0, 1], keepdims=true"
template <class A>
std::string attrs_str(const A& a) {
  std::ostringstream os;
  bool first = true;
  std::apply(
      [&](auto... f) {
        ((os << (first ? "" : ", ") << f.name << '=', attr_detail::print_value(os, a.*(f.member)),
          first = false),
         ...);
      },
      A::fields());
  return os.str();
}

}  // namespace spore
