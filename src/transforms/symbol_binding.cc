// SPDX-License-Identifier: Apache-2.0
#include "transforms/symbol_binding.h"

#include <functional>

#include "core/attrs.h"
#include "spore/error.h"

namespace spore::transforms {

SymbolSizes bind_symbols(const ir::Graph& g, std::span<const Tensor> inputs, const char* who) {
  SymbolSizes bound;
  for (size_t i = 0; i < inputs.size() && i < g.params().size(); ++i) {
    const auto& want = std::get<ir::TensorType>(g.params()[i].type);
    for (size_t d = 0; d < want.shape.size() && d < static_cast<size_t>(inputs[i].dim()); ++d) {
      if (want.shape[d].kind() != ir::Dim::Kind::Symbol) continue;
      const int64_t have = inputs[i].size(static_cast<int64_t>(d));
      auto [it, fresh] = bound.emplace(symbol_named(want.shape[d].name()), have);
      SPORE_CHECK(fresh || it->second == have, "[", who, "] dimension '", want.shape[d].name(), "' of @", g.name(), " is ",
                  it->second, " in one input and ", have, " in input ", i, "; a symbol has one size per call");
    }
  }
  return bound;
}

std::shared_ptr<const void> bind_attrs(const Primitive& p, const void* attrs, const SymbolSizes& sizes) {
  if (sizes.empty() || attrs == nullptr || p.attrs.map_dims == nullptr) return nullptr;
  auto lookup = [&sizes](Dim sym, int64_t& size) {
    auto it = sizes.find(sym);
    if (it == sizes.end()) return false;
    size = it->second;
    return true;
  };
  const std::function<Dim(Dim)> bind = [&lookup](Dim d) { return dim_substitute(d, lookup); };
  std::shared_ptr<const void> bound = p.attrs.map_dims(attrs, bind);
  // Unchanged (no dimension of the attributes names a bound symbol): the node's own, so that
  // lowerings at different sizes share the attributes of every size-independent step.
  if (p.attrs.equal != nullptr && p.attrs.equal(bound.get(), attrs)) return nullptr;
  return bound;
}

}  // namespace spore::transforms
