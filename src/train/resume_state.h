// SPDX-License-Identifier: Apache-2.0
#pragma once
// The parts of a checkpoint that belong to a fit in progress rather than to the model: each
// stateful callback's state ("callback.<name>.") and, for a checkpoint taken inside an epoch,
// the epoch's running metrics and loss sum ("epoch_progress."). Model::restore keeps them until
// the next fit, which knows the callbacks and metrics to hand them to.
#include <memory>
#include <string>
#include <vector>

#include "spore/train/callbacks.h"
#include "spore/train/checkpoint.h"
#include "spore/train/metrics.h"

namespace spore::train {

/// The running totals of the epoch in progress.
struct EpochProgress {
  std::vector<std::unique_ptr<Metric>> metrics;
  double loss_sum = 0;  // sample-weighted
  int64_t loss_count = 0;
};

/// Adds every stateful callback's state under its prefix (Callback::state_name).
void save_callback_states(const std::vector<Callback*>& callbacks, Checkpoint& c);
/// Hands each stateful callback the entries under its prefix; one without any (an older
/// checkpoint, a callback added since) keeps the state it has.
void load_callback_states(const std::vector<Callback*>& callbacks, const Checkpoint& c);

void save_epoch_progress(const EpochProgress& p, Checkpoint& c);
/// Loads what save_epoch_progress wrote; without such entries (an older checkpoint, one at an
/// epoch boundary) the totals stay as they are. A metric the saved run did not have starts at zero.
void load_epoch_progress(EpochProgress& p, const Checkpoint& c);

/// The entries of `c` that belong to the fit (the prefixes above), copied.
Checkpoint fit_entries(const Checkpoint& c);
/// Appends `from`'s entries to `to`.
void append_entries(const Checkpoint& from, Checkpoint& to);

}  // namespace spore::train
