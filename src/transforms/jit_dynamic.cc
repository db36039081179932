// SPDX-License-Identifier: Apache-2.0
#include "transforms/jit_dynamic.h"

#include <charconv>

#include <cctype>
#include <functional>
#include <string_view>
#include <optional>

#include "core/primitive.h"
#include "spore/error.h"
#include "spore/shape.h"
#include "transforms/ir_bridge.h"

namespace spore::transforms {
namespace {

class Generalizer {
 public:
  Generalizer(int64_t a, int64_t b, const std::string& name) : a_(a), b_(b), name_(name) {}

  // The generalized IR dimension of a pair of constant sizes.
  std::optional<ir::Dim> ir_dim(const ir::Dim& x, const ir::Dim& y) const {
    if (x == y) return x;
    if (!x.is_const() || !y.is_const()) return std::nullopt;
    const auto kc = affine(x.value(), y.value());
    if (!kc) return std::nullopt;
    ir::Dim d = ir::Dim::symbol(name_);
    if (kc->first != 1) d = ir::Dim::expr(ir::Dim::Kind::Mul, d, kc->first);
    if (kc->second != 0) d = ir::Dim::expr(ir::Dim::Kind::Add, d, kc->second);
    return d;
  }
  // The same for the process-wide dimensions of attributes.
  std::optional<Dim> core_dim(Dim x, Dim y) const {
    if (x == y) return x;
    if (is_symbolic(x) || is_symbolic(y)) return std::nullopt;
    const auto kc = affine(x, y);
    if (!kc) return std::nullopt;
    return dim_add(dim_mul(symbol_named(name_), kc->first), kc->second);
  }
  std::optional<ir::TensorType> type(const ir::TensorType& x, const ir::TensorType& y) const {
    if (x.dtype != y.dtype || x.weak != y.weak || x.layout != y.layout || x.shape.size() != y.shape.size())
      return std::nullopt;
    ir::TensorType t = x;
    for (size_t d = 0; d < x.shape.size(); ++d) {
      auto g = ir_dim(x.shape[d], y.shape[d]);
      if (!g) return std::nullopt;
      t.shape[d] = *g;
    }
    return t;
  }

 private:
  // (k, c) with x = k * a + c and y = k * b + c.
  std::optional<std::pair<int64_t, int64_t>> affine(int64_t x, int64_t y) const {
    if ((x - y) % (a_ - b_) != 0) return std::nullopt;
    const int64_t k = (x - y) / (a_ - b_), c = x - k * a_;
    if (k < 1 || c < 0) return std::nullopt;
    return std::pair{k, c};
  }
  int64_t a_, b_;
  std::string name_;
};

// The next token of attribute text at `i`: an integer literal ([-]digits), or one character.
std::string_view token(std::string_view s, size_t i) {
  size_t j = i;
  if (j < s.size() && s[j] == '-' && j + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[j + 1]))) ++j;
  if (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) {
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    // Part of a float ("1.5", "2e-05"), or of a name: not an integer of its own.
    if (j < s.size() && (s[j] == '.' || s[j] == 'e' || s[j] == 'E' || std::isalpha(static_cast<unsigned char>(s[j]))))
      return {};
    if (i > 0 && (std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_' || s[i - 1] == '.')) return {};
    return s.substr(i, j - i);
  }
  return s.substr(i, 1);
}

// Generalized attributes of two nodes of primitive `p`, or null when they differ in more than
// integers that fit the sizes' pattern. Attributes hold sizes as plain integers (a fill's
// shape, a reshape's), indistinguishable from other integers but by their values, so the two
// texts are compared token by token; the generalized text is parsed back, which refuses a
// dimension where the field is not an integer.
std::shared_ptr<const void> attrs(const Primitive& p, const ir::Node& x, const ir::Node& y, const Generalizer& gen,
                                  bool& ok) {
  ok = false;
  if (x.attrs() == nullptr || y.attrs() == nullptr) {
    ok = x.attrs() == y.attrs();
    return x.attrs_ptr();
  }
  if (p.attrs.equal && p.attrs.equal(x.attrs(), y.attrs())) {
    ok = true;
    return x.attrs_ptr();
  }
  if (!p.attrs.str || !p.attrs.parse) return nullptr;
  const std::string sx = p.attrs.str(x.attrs()), sy = p.attrs.str(y.attrs());
  std::string out;
  size_t i = 0, j = 0;
  while (i < sx.size() && j < sy.size()) {
    std::string_view a = token(sx, i), b = token(sy, j);
    if (a.empty()) a = std::string_view(sx).substr(i, 1);
    if (b.empty()) b = std::string_view(sy).substr(j, 1);
    i += a.size(), j += b.size();
    if (a == b) {
      out += a;
      continue;
    }
    auto integer = [](std::string_view t) { return std::isdigit(static_cast<unsigned char>(t.back())) != 0; };
    if (!integer(a) || !integer(b)) return nullptr;
    // Any integer field goes through here (a seed, an offset): one outside int64 is no size.
    auto parse = [](std::string_view t, int64_t& v) {
      auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      return ec == std::errc() && end == t.data() + t.size();
    };
    int64_t va = 0, vb = 0;
    if (!parse(a, va) || !parse(b, vb)) return nullptr;
    auto d = gen.core_dim(va, vb);
    if (!d) return nullptr;
    out += dim_str(*d);
  }
  if (i != sx.size() || j != sy.size()) return nullptr;
  try {
    auto r = p.attrs.parse(out);
    ok = r != nullptr;
    return r;
  } catch (const Error&) {
    return nullptr;  // a dimension where the field takes a float or an enum
  }
}

}  // namespace

ir::GraphPtr generalize_traces(const ir::Graph& a, const ir::Graph& b, const std::string& name) {
  if (a.params().size() != b.params().size() || a.nodes().size() != b.nodes().size() ||
      a.outputs() != b.outputs())
    return nullptr;
  // The one pair of sizes the parameters differ by.
  std::optional<std::pair<int64_t, int64_t>> pair;
  for (size_t i = 0; i < a.params().size(); ++i) {
    const auto* x = std::get_if<ir::TensorType>(&a.params()[i].type);
    const auto* y = std::get_if<ir::TensorType>(&b.params()[i].type);
    if (!x || !y || a.params()[i].role != b.params()[i].role || x->shape.size() != y->shape.size()) return nullptr;
    for (size_t d = 0; d < x->shape.size(); ++d) {
      if (x->shape[d] == y->shape[d]) continue;
      if (!x->shape[d].is_const() || !y->shape[d].is_const()) return nullptr;
      const std::pair<int64_t, int64_t> p{x->shape[d].value(), y->shape[d].value()};
      if (pair && *pair != p) return nullptr;
      pair = p;
    }
  }
  if (!pair) return nullptr;
  const Generalizer gen(pair->first, pair->second, name);
  std::vector<ir::Param> params;
  for (size_t i = 0; i < a.params().size(); ++i) {
    auto t = gen.type(std::get<ir::TensorType>(a.params()[i].type), std::get<ir::TensorType>(b.params()[i].type));
    if (!t) return nullptr;
    params.push_back({*t, a.params()[i].role});
  }
  std::vector<ir::NodePtr> nodes;
  for (size_t k = 0; k < a.nodes().size(); ++k) {
    const ir::Node &x = *a.nodes()[k], &y = *b.nodes()[k];
    if (x.op() != y.op() || x.inputs() != y.inputs() || x.scope() != y.scope() || !x.subgraphs().empty() ||
        !y.subgraphs().empty() || x.outputs().size() != y.outputs().size())
      return nullptr;
    std::vector<ir::Type> outs;
    for (size_t i = 0; i < x.outputs().size(); ++i) {
      const auto* tx = std::get_if<ir::TensorType>(&x.outputs()[i]);
      const auto* ty = std::get_if<ir::TensorType>(&y.outputs()[i]);
      if (!tx || !ty) {
        if (x.outputs()[i] != y.outputs()[i]) return nullptr;
        outs.push_back(x.outputs()[i]);
        continue;
      }
      auto t = gen.type(*tx, *ty);
      if (!t) return nullptr;
      outs.emplace_back(*t);
    }
    std::shared_ptr<const void> at;
    if (x.op() == kConstantOp) {
      // A literal is a value, not a size: the same in both or the traces stay per size.
      if (!(x == y)) return nullptr;
      at = x.attrs_ptr();
    } else {
      const Primitive* p = find_primitive(x.op());
      if (p == nullptr) return nullptr;
      bool ok = false;
      at = attrs(*p, x, y, gen, ok);
      if (!ok) return nullptr;
    }
    nodes.push_back(std::make_shared<const ir::Node>(x.op(), at, x.inputs(), std::move(outs), x.scope()));
  }
  return std::make_shared<const ir::Graph>(a.name(), std::move(params), std::move(nodes), a.outputs());
}

}  // namespace spore::transforms
