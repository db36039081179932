// SPDX-License-Identifier: Apache-2.0
#include "ir/lexer.h"

#include <charconv>

#include "ir/error.h"

namespace spore::ir {
namespace {
bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
}  // namespace

void Lexer::fail(const std::string& what) const {
  int line = 1;
  for (size_t i = 0; i < pos_ && i < text_.size(); ++i) line += text_[i] == '\n';
  throw Error(cat("parse error at line ", line, ": ", what));
}

void Lexer::skip_space() {
  while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t' || text_[pos_] == '\r'))
    ++pos_;
}

const Token& Lexer::peek() {
  if (!peeked_) {
    tok_ = scan();
    peeked_ = true;
  }
  return tok_;
}

Token Lexer::next() {
  peek();
  peeked_ = false;
  return std::move(tok_);
}

Token Lexer::scan() {
  skip_space();
  Token t;
  if (pos_ >= text_.size()) return t;
  char c = text_[pos_];
  auto word = [&] {
    size_t b = pos_;
    while (pos_ < text_.size() && word_char(text_[pos_])) ++pos_;
    return std::string(text_.substr(b, pos_ - b));
  };
  if (c == '%' || c == '@') {
    ++pos_;
    t.kind = c == '%' ? Token::Kind::Value : Token::Kind::Global;
    t.text = word();
    if (t.text.empty()) fail(cat("expected a name after '", c, "'"));
  } else if ((c >= '0' && c <= '9') || (c == '-' && pos_ + 1 < text_.size() && text_[pos_ + 1] >= '0' && text_[pos_ + 1] <= '9')) {
    size_t b = pos_;
    ++pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
    t.kind = Token::Kind::Int;
    auto [p, ec] = std::from_chars(text_.data() + b, text_.data() + pos_, t.value);
    if (ec != std::errc() || p != text_.data() + pos_) fail(cat("integer '", text_.substr(b, pos_ - b), "' is out of range"));
  } else if (word_char(c)) {
    t.kind = Token::Kind::Ident;
    t.text = word();
  } else if (c == '"') {
    ++pos_;
    t.kind = Token::Kind::String;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      if (text_[pos_] == '\n') fail("string runs past the end of the line");
      t.text += text_[pos_++];
    }
    if (pos_ >= text_.size()) fail("unterminated string");
    ++pos_;
  } else {
    t.kind = Token::Kind::Punct;
    t.text = std::string(1, c);
    ++pos_;
    if (c == '/' && pos_ < text_.size() && text_[pos_] == '/') {
      t.text = "//";
      ++pos_;
    }
  }
  return t;
}

std::string Lexer::read_balanced() {
  if (peeked_ || !at_char('{')) fail("expected '{'");
  size_t b = ++pos_;
  int depth = 1;
  while (pos_ < text_.size()) {
    char c = text_[pos_++];
    if (c == '\n') fail("attributes run past the end of the line");
    if (c == '{') ++depth;
    if (c == '}' && --depth == 0) return std::string(text_.substr(b, pos_ - 1 - b));
  }
  fail("unterminated attributes: missing '}'");
}

}  // namespace spore::ir
