// SPDX-License-Identifier: Apache-2.0
// Symbolic dimensions: a process-wide table of symbols and small expressions. A symbolic Dim is
// kSymbolBase - index. Expressions are interned, so equal expressions compare equal; arithmetic
// on two plain numbers always folds (whatever their sign), so it never produces a symbol.
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "core/attrs.h"
#include "core/dim_expr.h"
#include "spore/error.h"
#include "spore/shape.h"

namespace spore {
namespace {

struct SymEntry {
  char op;  // 's' symbol, '+', '-', '*', '/'
  Dim a, b;
  std::string name;
};

struct SymTable {
  std::mutex mu;
  std::vector<SymEntry> entries;
  std::map<std::tuple<char, Dim, Dim>, Dim> interned;
};

SymTable& table() {
  static SymTable t;
  return t;
}

Dim make_expr(char op, Dim a, Dim b) {
  auto& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto key = std::make_tuple(op, a, b);
  if (auto it = t.interned.find(key); it != t.interned.end()) return it->second;
  t.entries.push_back({op, a, b, {}});
  Dim d = kSymbolBase - static_cast<Dim>(t.entries.size() - 1);
  t.interned.emplace(key, d);
  return d;
}

// When d is the product (x * c) of a symbolic x and a constant c (dim_mul's canonical form).
bool symbol_times_constant(Dim d, Dim& x, Dim& c) {
  if (!is_symbolic(d)) return false;
  auto& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  const size_t i = static_cast<size_t>(kSymbolBase - d);
  if (i >= t.entries.size() || t.entries[i].op != '*' || is_symbolic(t.entries[i].b)) return false;
  x = t.entries[i].a;
  c = t.entries[i].b;
  return true;
}

}  // namespace

Dim new_symbol(const std::string& name) {
  auto& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  t.entries.push_back({'s', 0, 0, name});
  return kSymbolBase - static_cast<Dim>(t.entries.size() - 1);
}

Dim symbol_named(const std::string& name) {
  auto& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  for (size_t i = 0; i < t.entries.size(); ++i)
    if (t.entries[i].op == 's' && t.entries[i].name == name) return kSymbolBase - static_cast<Dim>(i);
  t.entries.push_back({'s', 0, 0, name});
  return kSymbolBase - static_cast<Dim>(t.entries.size() - 1);
}

namespace {
constexpr std::string_view kValuePrefix = "vsize";
std::atomic<int64_t> g_value_symbols{0};
}  // namespace

// A name no symbol of this process has yet (a graph read from a file may hold "vsize0"), so two
// value symbols are never one by name.
Dim new_value_symbol() {
  auto& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  for (;;) {
    const std::string name = std::string(kValuePrefix) + std::to_string(g_value_symbols.fetch_add(1));
    bool taken = false;
    for (const SymEntry& e : t.entries) taken = taken || (e.op == 's' && e.name == name);
    if (taken) continue;
    t.entries.push_back({'s', 0, 0, name});
    return kSymbolBase - static_cast<Dim>(t.entries.size() - 1);
  }
}

bool is_value_size(Dim d) {
  if (!is_symbolic(d)) return false;
  SymEntry e;
  {
    auto& t = table();
    std::lock_guard<std::mutex> lock(t.mu);
    const size_t i = static_cast<size_t>(kSymbolBase - d);
    if (i >= t.entries.size()) return false;
    e = t.entries[i];
  }
  // By name, so a graph read back from text or a file keeps the meaning.
  if (e.op == 's') return e.name.starts_with(kValuePrefix);
  return is_value_size(e.a) || is_value_size(e.b);
}

bool is_plain_symbol(Dim d) {
  if (!is_symbolic(d)) return false;
  auto& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  const size_t i = static_cast<size_t>(kSymbolBase - d);
  return i < t.entries.size() && t.entries[i].op == 's';
}

Dim dim_add(Dim a, Dim b) {
  if (!is_symbolic(a) && !is_symbolic(b)) return a + b;
  if (a == 0) return b;
  if (b == 0) return a;
  return make_expr('+', a, b);
}
Dim dim_sub(Dim a, Dim b) {
  if (!is_symbolic(a) && !is_symbolic(b)) return a - b;
  if (b == 0) return a;
  if (a == b) return 0;
  return make_expr('-', a, b);
}
Dim dim_mul(Dim a, Dim b) {
  if (!is_symbolic(a) && !is_symbolic(b)) return a * b;
  if (a == 1) return b;
  if (b == 1) return a;
  if (a == 0 || b == 0) return 0;
  // Canonical form: constants on the right and merged, (batch * 3) * 4 = batch * 12, so that
  // equal sizes reached in different orders are one interned expression and divide back.
  if (!is_symbolic(a)) std::swap(a, b);
  Dim x, c;
  if (!is_symbolic(b) && symbol_times_constant(a, x, c)) return dim_mul(x, c * b);
  return make_expr('*', a, b);
}
Dim dim_floordiv(Dim a, Dim b) {
  SPORE_CHECK(b != 0, "[shape] division of a dimension by zero");
  if (!is_symbolic(a) && !is_symbolic(b)) {
    Dim q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) --q;
    return q;
  }
  if (b == 1) return a;
  // (x * c) // b = x * (c / b) when b divides c: the -1 of a reshape after a flatten.
  Dim x, c;
  if (!is_symbolic(b) && b > 0 && symbol_times_constant(a, x, c) && c % b == 0) return dim_mul(x, c / b);
  return make_expr('/', a, b);
}

bool dim_parts(Dim d, char& op, Dim& a, Dim& b, std::string& name) {
  if (!is_symbolic(d)) return false;
  auto& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  const auto i = static_cast<uint64_t>(kSymbolBase - d);
  if (i >= t.entries.size()) return false;
  const SymEntry& e = t.entries[i];
  op = e.op;
  a = e.a;
  b = e.b;
  name = e.name;
  return true;
}

bool is_symbol_id(int64_t v) {
  if (!is_symbolic(v)) return false;
  auto& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  return static_cast<uint64_t>(kSymbolBase - v) < t.entries.size();
}

Dim dim_substitute(Dim d, const std::function<bool(Dim, int64_t&)>& bound) {
  if (!is_symbolic(d)) return d;
  SymEntry e;
  {
    auto& t = table();
    std::lock_guard<std::mutex> lock(t.mu);
    const size_t i = static_cast<size_t>(kSymbolBase - d);
    SPORE_ASSERT(i < t.entries.size(), "unknown symbol ", d);
    e = t.entries[i];
  }
  if (e.op == 's') {
    int64_t size = 0;
    return bound(d, size) ? size : d;
  }
  const Dim a = dim_substitute(e.a, bound), b = dim_substitute(e.b, bound);
  switch (e.op) {
    case '+': return dim_add(a, b);
    case '-': return dim_sub(a, b);
    case '*': return dim_mul(a, b);
    default: return dim_floordiv(a, b);
  }
}

namespace {
// dim_str's grammar: INT | NAME | '(' dim OP dim ')' with OP one of + - * /.
Dim parse_dim(std::string_view t, size_t& pos) {
  auto fail = [&](const char* what) -> Dim {
    throw Error(detail::cat("[shape] bad dimension text \"", std::string(t), "\": ", what, " at offset ", pos));
  };
  if (pos >= t.size()) return fail("expected a dimension");
  if (t[pos] == '(') {
    ++pos;
    const Dim a = parse_dim(t, pos);
    if (pos >= t.size()) return fail("expected an operator");
    const char op = t[pos++];
    const Dim b = parse_dim(t, pos);
    if (pos >= t.size() || t[pos] != ')') return fail("expected ')'");
    ++pos;
    switch (op) {
      case '+': return dim_add(a, b);
      case '-': return dim_sub(a, b);
      case '*': return dim_mul(a, b);
      case '/': return b == 0 ? fail("division by zero") : dim_floordiv(a, b);
      default: return fail("unknown operator");
    }
  }
  const size_t b = pos;
  if (std::isdigit(static_cast<unsigned char>(t[pos])) || t[pos] == '-') {
    ++pos;
    while (pos < t.size() && std::isdigit(static_cast<unsigned char>(t[pos]))) ++pos;
    const std::string num(t.substr(b, pos - b));
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(num.c_str(), &end, 10);
    if (errno == ERANGE || end != num.c_str() + num.size() || num == "-") return fail("bad number");
    return v;
  }
  while (pos < t.size() && (std::isalnum(static_cast<unsigned char>(t[pos])) || t[pos] == '_')) ++pos;
  if (pos == b) return fail("expected a number, a name or '('");
  return symbol_named(std::string(t.substr(b, pos - b)));
}
}  // namespace

Dim dim_from_text(std::string_view text) {
  size_t pos = 0;
  const Dim d = parse_dim(text, pos);
  if (pos != text.size())
    throw Error(detail::cat("[shape] bad dimension text \"", std::string(text), "\": trailing characters"));
  return d;
}

std::string dim_str(Dim d) {
  if (!is_symbolic(d)) return std::to_string(d);
  SymEntry e;
  {
    auto& t = table();
    std::lock_guard<std::mutex> lock(t.mu);
    size_t i = static_cast<size_t>(kSymbolBase - d);
    // Not a symbol of this process: a huge negative number from a file or a user, which error
    // messages must print as the number it is.
    if (i >= t.entries.size()) return std::to_string(d);
    e = t.entries[i];
  }
  if (e.op == 's') return e.name;
  std::ostringstream os;  // (not string concatenation: GCC 12 -O3 raises a false -Wrestrict on it)
  os << '(' << dim_str(e.a) << e.op << dim_str(e.b) << ')';
  return os.str();
}

}  // namespace spore
