// SPDX-License-Identifier: Apache-2.0
// Symbolic dimensions: a process-wide table of symbols and small expressions. A symbolic Dim is
// kSymbolBase - index. Expressions are interned, so equal expressions compare equal; arithmetic
// on two plain numbers always folds (whatever their sign), so it never produces a symbol.
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

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
  return make_expr('/', a, b);
}

std::string dim_str(Dim d) {
  if (!is_symbolic(d)) return std::to_string(d);
  SymEntry e;
  {
    auto& t = table();
    std::lock_guard<std::mutex> lock(t.mu);
    size_t i = static_cast<size_t>(kSymbolBase - d);
    SPORE_ASSERT(i < t.entries.size(), "unknown symbol ", d);
    e = t.entries[i];
  }
  if (e.op == 's') return e.name;
  std::ostringstream os;  // (not string concatenation: GCC 12 -O3 raises a false -Wrestrict on it)
  os << '(' << dim_str(e.a) << e.op << dim_str(e.b) << ')';
  return os.str();
}

}  // namespace spore
