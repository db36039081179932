// SPDX-License-Identifier: Apache-2.0
#include "ir/parser.h"

#include <map>

#include "ir/error.h"
#include "ir/lexer.h"
#include "ir/verifier.h"

namespace spore::ir {
namespace {

// Bounds recursion so hostile text cannot overflow the stack.
constexpr int kMaxDepth = 64;

class Parser {
 public:
  explicit Parser(std::string_view text) : lex_(text) {}

  GraphPtr top() {
    auto g = graph(0);
    if (lex_.peek().kind != Token::Kind::End) lex_.fail("unexpected text after the graph");
    return g;
  }

 private:
  using Names = std::map<std::string, ValueRef>;

  bool at_punct(const char* p) {
    const Token& t = lex_.peek();
    return t.kind == Token::Kind::Punct && t.text == p;
  }
  bool at_ident(const char* w) {
    const Token& t = lex_.peek();
    return t.kind == Token::Kind::Ident && t.text == w;
  }
  void expect_punct(const char* p) {
    if (!at_punct(p)) lex_.fail(cat("expected '", p, "'"));
    lex_.next();
  }
  Token expect(Token::Kind k, const char* what) {
    if (lex_.peek().kind != k) lex_.fail(cat("expected ", what));
    return lex_.next();
  }
  void define(Names& names, const std::string& n, ValueRef v) {
    if (!names.emplace(n, v).second) lex_.fail(cat("value %", n, " is defined twice"));
  }
  ValueRef use(const Names& names) {
    std::string n = expect(Token::Kind::Value, "a value name (%...)").text;
    auto it = names.find(n);
    if (it == names.end())
      lex_.fail(cat("unknown value %", n, "; values must be defined before use, and sub-graphs are closed"));
    return it->second;
  }

  Dim dim(int depth) {
    if (depth > kMaxDepth) lex_.fail("dimension expression nests too deeply");
    const Token& t = lex_.peek();
    if (t.kind == Token::Kind::Int) return Dim(lex_.next().value);
    if (t.kind == Token::Kind::Ident) return Dim::symbol(lex_.next().text);
    expect_punct("(");
    Dim a = dim(depth + 1);
    Token op = expect(Token::Kind::Punct, "+, -, * or //");
    Dim::Kind k = op.text == "+" ? Dim::Kind::Add : op.text == "-" ? Dim::Kind::Sub
                : op.text == "*" ? Dim::Kind::Mul : op.text == "//" ? Dim::Kind::FloorDiv : Dim::Kind::Const;
    if (k == Dim::Kind::Const) lex_.fail(cat("expected +, -, * or // in a dimension, got '", op.text, "'"));
    Dim b = dim(depth + 1);
    expect_punct(")");
    return Dim::expr(k, a, b);
  }

  Type type() {
    bool weak = at_punct("~");
    if (weak) lex_.next();
    std::string name = expect(Token::Kind::Ident, "a type").text;
    if (name == "token" && !weak) return TokenType{};
    auto dt = dtype_from_name(name);
    if (!dt) lex_.fail(cat("unknown type '", name, "'; expected a dtype such as float32, or token"));
    TensorType t{*dt, weak, {}, {}};
    expect_punct("[");
    while (!at_punct("]")) {
      if (!t.shape.empty()) expect_punct(",");
      t.shape.push_back(dim(0));
    }
    lex_.next();
    if (at_punct("<")) {
      lex_.next();
      t.layout = expect(Token::Kind::Ident, "a layout name").text;
      expect_punct(">");
    }
    return t;
  }

  Role role() {
    std::string r = expect(Token::Kind::Ident, "a role").text;
    for (Role x : {Role::Data, Role::Parameter, Role::Buffer, Role::Constant})
      if (r == role_name(x)) return x;
    lex_.fail(cat("unknown role '", r, "'; expected data, parameter, buffer or constant"));
  }

  std::shared_ptr<const void> attrs(const std::string& op) {
    const OpInfo* info = find_op(op);
    if (!info) lex_.fail(cat("unknown op '", op, "'"));
    if (!info->parse_attrs) lex_.fail(cat("op '", op, "' takes no attributes"));
    std::string text = lex_.read_balanced();
    try {
      auto a = info->parse_attrs(text);
      if (!a) lex_.fail(cat("op '", op, "' parsed no attributes from {", text, "}"));
      return a;
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {  // a registered parser's own failure becomes ours
      lex_.fail(cat("bad attributes {", text, "} for '", op, "': ", e.what()));
    }
  }

  NodePtr node(Names& names, int32_t index, int depth) {
    std::vector<std::string> outs;
    do {
      if (!outs.empty()) lex_.next();
      outs.push_back(expect(Token::Kind::Value, "a value name (%...)").text);
    } while (at_punct(","));
    expect_punct("=");
    std::string op = expect(Token::Kind::Ident, "an op name").text;
    std::shared_ptr<const void> a = lex_.at_char('{') ? attrs(op) : nullptr;
    expect_punct("(");
    std::vector<ValueRef> ins;
    while (!at_punct(")")) {
      if (!ins.empty()) expect_punct(",");
      ins.push_back(use(names));
    }
    lex_.next();
    expect_punct(":");
    std::vector<Type> types{type()};
    while (at_punct(",")) {
      lex_.next();
      types.push_back(type());
    }
    if (types.size() != outs.size())
      lex_.fail(cat("node '", op, "' names ", outs.size(), " outputs but gives ", types.size(), " types"));
    std::string scope;
    if (at_ident("scope")) {
      lex_.next();
      scope = expect(Token::Kind::String, "a quoted scope").text;
    }
    std::vector<GraphPtr> subs;
    if (at_punct("{")) {
      lex_.next();
      while (!at_punct("}")) subs.push_back(graph(depth + 1));
      lex_.next();
    }
    for (size_t k = 0; k < outs.size(); ++k) define(names, outs[k], {index, static_cast<int32_t>(k)});
    return std::make_shared<const Node>(op, std::move(a), std::move(ins), std::move(types), std::move(scope),
                                        std::move(subs));
  }

  GraphPtr graph(int depth) {
    if (depth > kMaxDepth) lex_.fail("sub-graphs nest too deeply");
    if (!at_ident("graph")) lex_.fail("expected 'graph'");
    lex_.next();
    std::string name = expect(Token::Kind::Global, "a graph name (@...)").text;
    Names names;  // fresh per graph: a sub-graph cannot see outer values
    std::vector<Param> params;
    expect_punct("(");
    while (!at_punct(")")) {
      if (!params.empty()) expect_punct(",");
      std::string v = expect(Token::Kind::Value, "a parameter name (%...)").text;
      expect_punct(":");
      Role r = role();
      define(names, v, {ValueRef::kParam, static_cast<int32_t>(params.size())});
      params.push_back({type(), r});
    }
    lex_.next();
    expect_punct("{");
    std::vector<NodePtr> nodes;
    while (!at_ident("return")) nodes.push_back(node(names, static_cast<int32_t>(nodes.size()), depth));
    lex_.next();
    std::vector<Output> outputs;
    while (lex_.peek().kind == Token::Kind::Value || (!outputs.empty() && at_punct(","))) {
      if (!outputs.empty()) expect_punct(",");
      Output o{use(names), std::nullopt};
      if (at_ident("updates")) {
        lex_.next();
        ValueRef p = use(names);
        if (p.node != ValueRef::kParam) lex_.fail("'updates' must name a graph parameter");
        o.updates = p.index;
      }
      outputs.push_back(o);
    }
    expect_punct("}");
    auto g = std::make_shared<const Graph>(name, std::move(params), std::move(nodes), std::move(outputs));
    return g;
  }

  Lexer lex_;
};

}  // namespace

GraphPtr parse_graph(std::string_view text) {
  GraphPtr g = Parser(text).top();
  verify(*g);
  return g;
}

}  // namespace spore::ir
