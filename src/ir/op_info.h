// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the IR knows about an op, registered by name. Attributes are an opaque payload (in Spore,
// a primitive's typed attribute struct); the IR prints, parses and compares them only through
// these functions, so src/ir never includes the primitive headers. The primitive registry fills
// this table at start-up (tracing layer); tests register their own ops.
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "ir/type.h"

namespace spore::ir {

class Graph;

/// What an op does besides computing outputs from inputs (mirrors spore::Effect). I/O and
/// collective ops are ordered by tokens: they take and return one.
enum class Effect : uint8_t { Pure, Random, State, IO, Collective };

/// True for effects whose nodes must take and return a token.
inline bool needs_token(Effect e) { return e == Effect::IO || e == Effect::Collective; }

/// The part of a node that an op's type check sees.
struct NodeSig {
  std::string_view op;
  const void* attrs;  // null when the op has no attributes
  std::span<const Type> inputs;
  std::span<const Type> outputs;
  std::span<const std::shared_ptr<const Graph>> subgraphs;
};

/// An op's entry in the IR registry.
struct OpInfo {
  Effect effect = Effect::Pure;
  /// Attribute text (no newlines, balanced braces); null when the op takes no attributes.
  std::function<std::string(const void*)> print_attrs;
  /// Inverse of print_attrs; throws ir::Error on bad text.
  std::function<std::shared_ptr<const void>(std::string_view)> parse_attrs;
  /// Attribute equality.
  std::function<bool(const void*, const void*)> equal_attrs;
  /// Type check of a node (arity, input and output types, sub-graph signatures); throws
  /// ir::Error naming the op. Null: any types are accepted.
  std::function<void(const NodeSig&)> check;
};

/// Registers (or replaces) an op; call at start-up, before graphs are built.
void register_op(const std::string& name, OpInfo info);
/// The op's entry, or null when it is not registered.
const OpInfo* find_op(std::string_view name);

}  // namespace spore::ir
