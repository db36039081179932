// SPDX-License-Identifier: Apache-2.0
#pragma once
// Factories of the pipeline's nodes; each node lives in its own file.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "spore/data/dataset.h"

namespace spore::data {

using DatasetPtr = std::shared_ptr<const Dataset>;

std::shared_ptr<Dataset> make_map(DatasetPtr child, std::vector<Transform> ops, int column, int workers);
std::shared_ptr<Dataset> make_shuffle(DatasetPtr child, int64_t buffer_size, uint64_t seed);
std::shared_ptr<Dataset> make_batch(DatasetPtr child, int64_t size, bool drop_remainder, std::optional<BatchPad> pad);
std::shared_ptr<Dataset> make_repeat(DatasetPtr child, int64_t count);
/// Rows [start, start + count) (count -1: to the end): take and skip.
std::shared_ptr<Dataset> make_range(DatasetPtr child, int64_t start, int64_t count);
std::shared_ptr<Dataset> make_shard(DatasetPtr child, int64_t num_shards, int64_t shard_id);
/// The rows `indices` of a random-access child (split).
std::shared_ptr<Dataset> make_subset(DatasetPtr child, std::shared_ptr<const std::vector<int64_t>> indices,
                                     std::string name);
std::shared_ptr<Dataset> make_zip(DatasetPtr a, DatasetPtr b);
std::shared_ptr<Dataset> make_concat(DatasetPtr a, DatasetPtr b);
std::shared_ptr<Dataset> make_prefetch(DatasetPtr child, int64_t depth);
/// In-memory columns (from_tensors and the file sources), named `name` in stats().
std::shared_ptr<Dataset> make_tensor_source(std::vector<Tensor> columns, std::string name);
/// Rows whose shapes may differ (images of several sizes, encoded bytes), served in order from
/// memory. A block is a run of consecutive rows of one shape, at most `max_run` rows. Not
/// random-access: gather could be asked for rows of different shapes, which no block can hold.
std::shared_ptr<Dataset> make_ragged_source(std::vector<Row> rows, std::string name, int64_t max_run);

/// The permutation shuffle uses (exposed for split): a uniform permutation of 0..n-1 when
/// buffer >= n, else the streaming-buffer order, from KeyedRandom(key).
std::vector<int64_t> shuffled_order(int64_t n, int64_t buffer, uint64_t key);

}  // namespace spore::data
