// SPDX-License-Identifier: Apache-2.0
#pragma once
// IR dimensions. Unlike spore::Dim (an int64 indexing a process-wide symbol table), an IR Dim
// carries its own expression tree with symbols by name, so a graph is self-contained: it prints,
// parses and compares without any table. The tracing layer maps one to the other.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace spore::ir {

/// A dimension: a constant, a named symbol, or a small expression (+ - * floordiv) of them.
/// Arithmetic on two constants folds; nothing else is simplified, so text round-trips exactly.
class Dim {
 public:
  /// The shape of the expression tree.
  enum class Kind : uint8_t { Const, Symbol, Add, Sub, Mul, FloorDiv };

  /// A constant dimension (implicit, so shapes can be written as {2, Dim::symbol("n")}).
  Dim(int64_t value = 0) : value_(value) {}  // NOLINT(google-explicit-constructor)
  /// A named symbol; the name must be an identifier ([A-Za-z_][A-Za-z0-9_]*).
  static Dim symbol(const std::string& name);
  /// The expression `a op b` (folded when both are constants); op is Add, Sub, Mul or FloorDiv.
  static Dim expr(Kind op, const Dim& a, const Dim& b);

  Kind kind() const { return kind_; }
  bool is_const() const { return kind_ == Kind::Const; }
  /// The constant's value (only for Kind::Const).
  int64_t value() const { return value_; }
  /// The symbol's name (only for Kind::Symbol).
  const std::string& name() const { return name_; }
  /// Operands of an expression (only for Add, Sub, Mul, FloorDiv).
  const Dim& lhs() const { return args_->first; }
  const Dim& rhs() const { return args_->second; }

  /// Structural equality: same tree, same names and constants.
  bool operator==(const Dim& o) const;
  /// Text form: `4`, `n`, `(n + 1)`; binary expressions are always parenthesized.
  std::string str() const;

 private:
  Kind kind_ = Kind::Const;
  int64_t value_ = 0;
  std::string name_;
  std::shared_ptr<const std::pair<Dim, Dim>> args_;  // shared: Dims are immutable
};

Dim operator+(const Dim& a, const Dim& b);
Dim operator-(const Dim& a, const Dim& b);
Dim operator*(const Dim& a, const Dim& b);
/// Floor division (rounds toward negative infinity, like Python's //).
Dim floordiv(const Dim& a, const Dim& b);

/// True for a valid identifier, the spelling of symbols, layouts and graph names.
bool is_identifier(const std::string& s);

}  // namespace spore::ir
