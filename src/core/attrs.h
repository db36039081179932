// SPDX-License-Identifier: Apache-2.0
#pragma once
// Typed attribute structs: each primitive's attributes are a plain struct whose `fields()` lists
// (name, member pointer) pairs. That one list gives hashing, equality and printing here, and
// parsing and serialization in the IR layer, so no attribute is ever looked up by string at run
// time.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <sstream>
#include <string_view>
#include <string>
#include <tuple>
#include <type_traits>

#include "spore/dtype.h"
#include "spore/error.h"
#include "spore/shape.h"
#include "spore/small_vec.h"

namespace spore {

template <class S, class M>
struct Field {
  const char* name;
  M S::*member;
  /// A field added after files were written: printed only when it differs from its default, and
  /// read as the default when the text ends before it (it must come after every other field), so
  /// text IR and model files from before it still load and print the same.
  bool optional = false;
};
template <class S, class M>
constexpr Field<S, M> field(const char* name, M S::*member) {
  return {name, member, false};
}
template <class S, class M>
constexpr Field<S, M> optional_field(const char* name, M S::*member) {
  return {name, member, true};
}

/// Attributes of primitives that have none.
struct NoAttrs {
  static constexpr auto fields() { return std::tuple<>(); }
};

/// The dimension a Dim's text names: a number, a symbol ("batch", made if new: symbol_named) or
/// an expression as dim_str writes it ("(batch*512)"). Throws spore::Error on bad text.
Dim dim_from_text(std::string_view text);
/// True for a symbol or expression of this process's symbol table. Integer attributes also hold
/// sentinels far below any size (a slice's INT64_MIN "from the end"), which are not symbols.
bool is_symbol_id(int64_t v);
/// `d` with every symbol the map binds replaced by its size, folded (unbound symbols stay).
Dim dim_substitute(Dim d, const std::function<bool(Dim symbol, int64_t& size)>& bound);

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

// Attribute equality is on values as printed: floats by bit pattern, so -0.0 differs from 0.0
// (CSE must not merge them) and a NaN equals itself (a graph equals its own round trip).
template <class M>
bool same_value(const M& a, const M& b) {
  if constexpr (std::is_floating_point_v<M>) {
    return std::memcmp(&a, &b, sizeof(M)) == 0;
  } else if constexpr (std::is_enum_v<M> || std::is_arithmetic_v<M> || std::is_same_v<M, std::string>) {
    return a == b;
  } else {  // SmallVec
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!same_value(a[i], b[i])) return false;
    return true;
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
  } else if constexpr (std::is_same_v<M, int64_t>) {
    // A symbolic dimension (a shape attribute traced with a symbolic batch) prints by name, so
    // the text means the same in another process (symbol ids are per process).
    if (is_symbol_id(v)) os << dim_str(v);
    else os << v;
  } else if constexpr (std::is_arithmetic_v<M>) {
    os << +v;
  } else if constexpr (std::is_same_v<M, std::string>) {
    os << '"';
    for (char c : v) {
      if (c == '"' || c == '\\') os << '\\';
      os << c;
    }
    os << '"';
  } else {
    os << '[';
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) os << ", ";
      print_value(os, v[i]);
    }
    os << ']';
  }
}

/// Reads the text print_value wrote; `pos` advances past it. Throws spore::Error on bad text.
class AttrReader {
 public:
  explicit AttrReader(std::string_view s) : s_(s) {}
  void skip_ws() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  bool at_end() {
    skip_ws();
    return pos_ >= s_.size();
  }
  bool eat(char c) {
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  std::string_view token() {  // up to the next ',', ']' or end
    skip_ws();
    size_t b = pos_;
    while (pos_ < s_.size() && s_[pos_] != ',' && s_[pos_] != ']' && s_[pos_] != ' ') ++pos_;
    if (b == pos_) fail("expected a value");
    return s_.substr(b, pos_ - b);
  }
  std::string_view name() {  // a field name up to '='
    skip_ws();
    size_t b = pos_;
    while (pos_ < s_.size() && s_[pos_] != '=') ++pos_;
    if (pos_ >= s_.size()) fail("expected name=value");
    auto n = s_.substr(b, pos_ - b);
    ++pos_;
    return n;
  }
  std::string quoted() {
    expect('"');
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ++pos_;
      out += s_[pos_++];
    }
    if (pos_ >= s_.size()) fail("unterminated string");
    ++pos_;
    return out;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(detail::cat("[attrs] ", what, " at offset ", pos_, " in \"", std::string(s_), "\""));
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

template <class M>
void parse_value(AttrReader& r, M& v) {
  if constexpr (std::is_same_v<M, DType>) {
    std::string t(r.token());
    for (int i = 0; i < kNumDTypes; ++i)
      if (t == dtype_name(static_cast<DType>(i))) {
        v = static_cast<DType>(i);
        return;
      }
    r.fail("unknown dtype " + t);
  } else if constexpr (std::is_enum_v<M>) {
    // A number that fits the enum's type (enums print as numbers); a name such as `max` is no
    // enum value here, and would otherwise be read as a symbolic dimension's int64 encoding.
    std::string t(r.token());
    char* end = nullptr;
    errno = 0;
    long long x = std::strtoll(t.c_str(), &end, 10);
    if (t.empty() || end != t.c_str() + t.size() || errno == ERANGE) r.fail("bad enum value " + t + " (a number)");
    using U = std::underlying_type_t<M>;
    if (x < static_cast<long long>(std::numeric_limits<U>::min()) || x > static_cast<long long>(std::numeric_limits<U>::max()))
      r.fail("enum value out of range " + t);
    v = static_cast<M>(x);
  } else if constexpr (std::is_same_v<M, bool>) {
    auto t = r.token();
    if (t == "true") v = true;
    else if (t == "false") v = false;
    else r.fail("expected true or false");
  } else if constexpr (std::is_floating_point_v<M>) {
    std::string t(r.token());
    char* end = nullptr;
    errno = 0;
    double x = std::strtod(t.c_str(), &end);  // reads nan, inf, -inf and 17-digit decimals exactly
    if (end != t.c_str() + t.size()) r.fail("bad number " + t);
    v = static_cast<M>(x);
  } else if constexpr (std::is_arithmetic_v<M> && std::is_unsigned_v<M>) {
    std::string t(r.token());
    char* end = nullptr;
    errno = 0;
    unsigned long long x = std::strtoull(t.c_str(), &end, 10);
    if (t.empty() || t[0] == '-' || end != t.c_str() + t.size() || errno == ERANGE) r.fail("bad unsigned integer " + t);
    v = static_cast<M>(x);
    if (static_cast<unsigned long long>(v) != x) r.fail("integer out of range " + t);
  } else if constexpr (std::is_arithmetic_v<M>) {
    std::string t(r.token());
    if constexpr (std::is_same_v<M, int64_t>) {
      if (!t.empty() && (t[0] == '(' || t[0] == '_' || std::isalpha(static_cast<unsigned char>(t[0])))) {
        v = dim_from_text(t);
        return;
      }
    }
    char* end = nullptr;
    errno = 0;
    long long x = std::strtoll(t.c_str(), &end, 10);
    if (end != t.c_str() + t.size() || errno == ERANGE) r.fail("bad integer " + t);
    v = static_cast<M>(x);
    if (static_cast<long long>(v) != x) r.fail("integer out of range " + t);
  } else if constexpr (std::is_same_v<M, std::string>) {
    v = r.quoted();
  } else {
    r.expect('[');
    v = M();
    if (r.eat(']')) return;
    do {
      std::decay_t<decltype(v[0])> x{};
      parse_value(r, x);
      v.push_back(x);
    } while (r.eat(','));
    r.expect(']');
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
  return std::apply([&](auto... f) { return (attr_detail::same_value(a.*(f.member), b.*(f.member)) && ...); },
                    A::fields());
}

/// A copy of `a` whose symbolic dimensions (in int64 fields and lists: shape attributes) are
/// passed through `f`; other values never are symbolic, so they are kept.
template <class A>
A attrs_map_dims(const A& a, const std::function<Dim(Dim)>& f) {
  A out = a;
  std::apply(
      [&](auto... fl) {
        auto map_one = [&](auto& m) {
          using M = std::decay_t<decltype(m)>;
          if constexpr (std::is_same_v<M, int64_t>) {
            if (is_symbol_id(m)) m = f(m);
          } else if constexpr (!std::is_arithmetic_v<M> && !std::is_enum_v<M> && !std::is_same_v<M, std::string>) {
            if constexpr (std::is_same_v<std::decay_t<decltype(m[0])>, int64_t>)
              for (auto& x : m)
                if (is_symbol_id(x)) x = f(x);
          }
        };
        (map_one(out.*(fl.member)), ...);
        (void)map_one;  // attribute structs with no fields
      },
      A::fields());
  return out;
}

/// "axes=[0, 1], keepdims=true"
template <class A>
std::string attrs_str(const A& a) {
  std::ostringstream os;
  bool first = true;
  [[maybe_unused]] static const A defaults{};
  auto print_one = [&](const auto& f) {
    if (f.optional && attr_detail::same_value(a.*(f.member), defaults.*(f.member))) return;
    os << (first ? "" : ", ") << f.name << '=';
    attr_detail::print_value(os, a.*(f.member));
    first = false;
  };
  std::apply([&](auto... f) { (print_one(f), ...); }, A::fields());
  (void)print_one;  // attribute structs with no fields
  return os.str();
}

/// Inverse of attrs_str: every field, in order, "name=value" separated by ", ".
template <class A>
A attrs_parse(std::string_view text) {
  A a{};
  attr_detail::AttrReader r(text);
  bool first = true;
  auto parse_one = [&](const auto& f) {
    if (f.optional && r.at_end()) return;
    if (!first) r.expect(',');
    first = false;
    if (r.name() != f.name) r.fail(std::string("expected field ") + f.name);
    attr_detail::parse_value(r, a.*(f.member));
  };
  std::apply([&](auto... f) { (parse_one(f), ...); }, A::fields());
  (void)parse_one;
  if (!r.at_end()) r.fail("unexpected text after the last field");
  return a;
}

}  // namespace spore
