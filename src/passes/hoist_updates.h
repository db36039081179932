// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "ir/graph.h"

namespace spore::passes {

/// Moves state updates up to where their operands are ready, so that a training step's
/// gradients die as soon as the optimizer has read them instead of all living until the step's
/// end (a ResNet-18 step held its last layers' gradients, 30 MB, across its peak).
///
/// An update node is a pure node (a fused group counts by its body) whose every result is read only by graph
/// outputs that update a parameter (`Output::updates`) or by other update nodes: the optimizer's
/// arithmetic, unfused or fused. Each goes right after the last node it must follow: the
/// producers of its inputs and, when it makes the new value of parameter j, every other reader
/// of parameter j (so the value can still be written into j's buffer in place). Update nodes
/// keep their relative order. Pure one-element values computed from graph inputs alone (directly
/// or through other such values) that an update reads go first of all (a scheduled momentum's
/// float32 cast that every update reads); every other node keeps its place. Top level only.
ir::GraphPtr hoist_updates(const ir::GraphPtr& g);

}  // namespace spore::passes
