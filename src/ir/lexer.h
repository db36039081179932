// SPDX-License-Identifier: Apache-2.0
#pragma once
// Tokens of the IR text form. Every malformed input ends in ir::Error with the line number.
#include <cstdint>
#include <string>
#include <string_view>

namespace spore::ir {

/// One token of the text form.
struct Token {
  enum class Kind { End, Ident, Value, Global, Int, String, Punct } kind = Kind::End;
  std::string text;  // identifier, name after % or @, string contents, or punctuation
  int64_t value = 0;  // for Int
};

/// Splits IR text into tokens on demand.
class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  /// The next token, without consuming it.
  const Token& peek();
  /// Consumes and returns the next token.
  Token next();
  /// True when the next character (no whitespace skipped) is `c`.
  bool at_char(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  /// Reads `{...}` raw with balanced braces, returning the inside; the next character must be '{'.
  std::string read_balanced();
  /// Throws ir::Error "line N: what".
  [[noreturn]] void fail(const std::string& what) const;

 private:
  Token scan();
  void skip_space();

  std::string_view text_;
  size_t pos_ = 0;
  bool peeked_ = false;
  Token tok_;
};

}  // namespace spore::ir
