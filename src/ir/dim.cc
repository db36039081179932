// SPDX-License-Identifier: Apache-2.0
#include "ir/dim.h"

#include <cstdint>

#include "ir/error.h"

namespace spore::ir {

bool is_identifier(const std::string& s) {
  if (s.empty()) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!alpha(s[0])) return false;
  for (char c : s)
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  return true;
}

Dim Dim::symbol(const std::string& name) {
  if (!is_identifier(name))
    throw Error(cat("symbol name '", name, "' is not an identifier; use letters, digits and _"));
  Dim d;
  d.kind_ = Kind::Symbol;
  d.name_ = name;
  return d;
}

Dim Dim::expr(Kind op, const Dim& a, const Dim& b) {
  internal_check(op != Kind::Const && op != Kind::Symbol, "Dim::expr needs a binary operator");
  if (op == Kind::FloorDiv && b.is_const() && b.value() == 0)
    throw Error(cat("dimension ", a.str(), " // 0 divides by zero"));
  if (a.is_const() && b.is_const()) {
    int64_t x = a.value(), y = b.value(), r = 0;
    // Folding must not overflow: parsed text may hold any int64.
    bool over = op == Kind::Add   ? __builtin_add_overflow(x, y, &r)
                : op == Kind::Sub ? __builtin_sub_overflow(x, y, &r)
                : op == Kind::Mul ? __builtin_mul_overflow(x, y, &r)
                                  : (x == INT64_MIN && y == -1);
    if (over) throw Error(cat("dimension ", a.str(), " and ", b.str(), " overflow int64"));
    if (op != Kind::FloorDiv) return Dim(r);
    int64_t q = x / y;
    return Dim((x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q);
  }
  Dim d;
  d.kind_ = op;
  d.args_ = std::make_shared<const std::pair<Dim, Dim>>(a, b);
  return d;
}

bool Dim::operator==(const Dim& o) const {
  if (kind_ != o.kind_) return false;
  switch (kind_) {
    case Kind::Const: return value_ == o.value_;
    case Kind::Symbol: return name_ == o.name_;
    default: return lhs() == o.lhs() && rhs() == o.rhs();
  }
}

std::string Dim::str() const {
  switch (kind_) {
    case Kind::Const: return std::to_string(value_);
    case Kind::Symbol: return name_;
    case Kind::Add: return cat("(", lhs().str(), " + ", rhs().str(), ")");
    case Kind::Sub: return cat("(", lhs().str(), " - ", rhs().str(), ")");
    case Kind::Mul: return cat("(", lhs().str(), " * ", rhs().str(), ")");
    case Kind::FloorDiv: return cat("(", lhs().str(), " // ", rhs().str(), ")");
  }
  return {};
}

Dim operator+(const Dim& a, const Dim& b) { return Dim::expr(Dim::Kind::Add, a, b); }
Dim operator-(const Dim& a, const Dim& b) { return Dim::expr(Dim::Kind::Sub, a, b); }
Dim operator*(const Dim& a, const Dim& b) { return Dim::expr(Dim::Kind::Mul, a, b); }
Dim floordiv(const Dim& a, const Dim& b) { return Dim::expr(Dim::Kind::FloorDiv, a, b); }

}  // namespace spore::ir
