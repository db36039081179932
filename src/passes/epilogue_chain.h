// SPDX-License-Identifier: Apache-2.0
#pragma once
// The chain of elementwise ops that alone reads a library node's result (a conv's, a matmul's),
// which the conv_epilogue and matmul_epilogue passes fold into the node as post-ops
// (prims/epilogue.h), so the library kernel writes its result once, already activated.
#include <string>
#include <vector>

#include "ir/graph.h"
#include "prims/epilogue.h"
#include "transforms/ir_bridge.h"

namespace spore::passes {

/// Who reads each value of a graph: how many uses (a graph output counts as two, so it is never
/// folded away) and the last reader.
struct ValueReaders {
  std::vector<std::vector<int>> count;
  std::vector<std::vector<int64_t>> reader;
  explicit ValueReaders(const ir::Graph& g);
  int of(ir::ValueRef v) const { return count[static_cast<size_t>(v.node)][static_cast<size_t>(v.index)]; }
};

/// One post-op of a chain, in the old graph's terms.
struct ChainLink {
  prims::PostKind kind = prims::PostKind::Unary;
  std::string op;
  double a = 0, b = 0;
  ir::ValueRef operand;     // Binary: in the old graph
  int64_t batch_norm = -1;  // a batch_norm node, which conv_epilogue emits as two Binary links
};

struct EpilogueChain {
  std::vector<ChainLink> links;
  std::vector<size_t> nodes;  // the library node and every node folded into it, in order
};

/// Extends `c` (whose last node's output 0, of type `t`, is the running value) with each node
/// that alone reads the running value and is a link: a unary float op; add/sub/mul/div/maximum/
/// minimum of the value and a literal of its dtype, or of an operand that broadcasts to it
/// without growing it; clamp by literal bounds (maximum then minimum); and, with
/// `take_batch_norm`, an inference batch_norm whose statistics outputs nobody reads. Every link
/// keeps `t`'s shape and dtype. Stops at a value with another use, a graph output, or a node
/// `folded` marks (another chain's).
void extend_chain(const ir::Graph& g, const ValueReaders& uses, const std::vector<char>& folded, bool take_batch_norm,
                  const ir::TensorType& t, EpilogueChain& c);

/// The literal node `v` comes from, if any.
const transforms::ConstantAttrs* literal_of(const ir::Graph& g, ir::ValueRef v);

/// Appends one post-op to attributes holding the post_kind / post_ops / post_a / post_b fields.
template <class A>
void push_post_op(A& attrs, prims::PostKind kind, const std::string& op, double a, double b) {
  attrs.post_kind.push_back(static_cast<int64_t>(kind));
  attrs.post_ops += (attrs.post_ops.empty() ? "" : ",") + op;
  attrs.post_a.push_back(a);
  attrs.post_b.push_back(b);
}

}  // namespace spore::passes
