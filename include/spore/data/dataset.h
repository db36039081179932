// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "spore/tensor.h"

/// The data pipeline (MindData-like): sources (sources.h) make Dataset nodes; operations return
/// new nodes, so pipelines chain: `mnist(dir, "train")->map({to_tensor()})->shuffle(60000, 1)->batch(128)`.
/// The output of a pipeline is a function of its seeds and the epoch alone: never of the number
/// of workers, prefetching or timing.
namespace spore::data {

/// One sample: its columns (e.g. image uint8 (28, 28) and label int64 ()). After `batch`, a row
/// holds the batch tensors ((B, 28, 28) and (B)).
using Row = std::vector<Tensor>;

/// Rows stacked along a new leading axis: each column's first dimension is `rows`. Pipelines
/// move blocks, not single rows, so transforms run as one loop over many samples.
struct Block {
  std::vector<Tensor> columns;
  int64_t rows = 0;
};

class TransformOp;
/// A transform applied by `map` (spore/data/transforms.h).
using Transform = std::shared_ptr<const TransformOp>;

/// How `batch` joins rows whose shapes differ: every column is padded at the end of each axis
/// with `value` up to `shape` (empty: the largest shape in the batch).
struct BatchPad {
  double value = 0;
  Shape shape;
};

/// Counters every node keeps (cheap: updated once per block). Read them with Dataset::stats().
struct NodeStats {
  std::atomic<int64_t> work_ns{0};  // time in this node's own work (decode, gather, transforms, joins)
  std::atomic<int64_t> rows{0};     // rows produced
  std::atomic<int64_t> blocks{0};   // blocks produced
};

class BlockStream;  // node contract, src/data/stream.h
struct StreamPlan;
class Iterator;

/// A node of a pipeline: shared and immutable once built (its statistics aside), so one node
/// may feed several pipelines and be iterated by several iterators at once.
class Dataset : public std::enable_shared_from_this<Dataset> {
 public:
  virtual ~Dataset() = default;

  // ---- operations: each returns a new node reading this one ----
  /// Applies `ops` in order to column `column` (negative counts from the end). With
  /// num_parallel_workers > 1, worker threads run blocks of rows and the results are put back
  /// in order. Random transforms draw from (their seed, epoch, sample index) only.
  std::shared_ptr<Dataset> map(std::vector<Transform> ops, int column = 0, int num_parallel_workers = 1) const;
  /// Shuffles with a buffer of `buffer_size` rows (>= size(): a full permutation). The order
  /// depends only on (seed, epoch).
  std::shared_ptr<Dataset> shuffle(int64_t buffer_size, uint64_t seed) const;
  /// Stacks `size` rows into one row of batch tensors; the last smaller batch is dropped when
  /// `drop_remainder`. Rows of different shapes need `pad`.
  std::shared_ptr<Dataset> batch(int64_t size, bool drop_remainder = false,
                                 std::optional<BatchPad> pad = std::nullopt) const;
  /// The data `count` times (-1: forever); each pass draws shuffles and augmentations anew.
  std::shared_ptr<Dataset> repeat(int64_t count = -1) const;
  /// The first `count` rows.
  std::shared_ptr<Dataset> take(int64_t count) const;
  /// All but the first `count` rows.
  std::shared_ptr<Dataset> skip(int64_t count) const;
  /// Rows joined column-wise with `other`'s (the shorter one ends it).
  std::shared_ptr<Dataset> zip(std::shared_ptr<const Dataset> other) const;
  /// This dataset's rows, then `other`'s (same columns).
  std::shared_ptr<Dataset> concat(std::shared_ptr<const Dataset> other) const;
  /// Disjoint subsets with the given fractions of the rows (they must add up to 1); rounding
  /// leftovers go to the first subsets. `randomize` draws which rows go where from `seed`
  /// (fixed across epochs). Needs a random-access dataset of known size.
  std::vector<std::shared_ptr<Dataset>> split(std::vector<double> fractions, uint64_t seed = 0,
                                              bool randomize = true) const;
  /// Same, with row counts that add up to size().
  std::vector<std::shared_ptr<Dataset>> split_sizes(std::vector<int64_t> sizes, uint64_t seed = 0,
                                                    bool randomize = true) const;
  /// Rows shard_id, shard_id + num_shards, ...: the shards partition the data (data parallel).
  std::shared_ptr<Dataset> shard(int64_t num_shards, int64_t shard_id) const;
  /// Runs this pipeline ahead in a background thread, keeping up to `depth` blocks ready.
  std::shared_ptr<Dataset> prefetch(int64_t depth = 2) const;

  /// Number of rows, or -1 when unknown (a generator, an endless repeat).
  virtual int64_t size() const = 0;
  /// Reads one epoch. Pipelines are deterministic: the same epoch gives the same rows.
  Iterator iterate(uint64_t epoch = 0) const;

  /// Per-node statistics of the pipeline ending here, one line per node: rows, blocks, time
  /// in its own work, and per-node notes (time per transform, prefetch queue depth).
  std::string stats() const;
  /// Zeroes the statistics of every node of this pipeline.
  void reset_stats() const;

  // ---- node contract (implemented by the nodes in src/data) ----
  /// "map[to_tensor, normalize] x4", "batch(128)", ... for stats().
  virtual std::string name() const = 0;
  /// True when gather() works: any rows can be read in any order, cheaply.
  virtual bool random_access() const { return false; }
  /// The rows at `indices` (each in [0, size())) as one block; random-access nodes only.
  /// Counts the rows in this node's statistics and calls gather_impl.
  Block gather(std::span<const int64_t> indices, uint64_t epoch) const;
  /// A stream of blocks for one epoch (counted in this node's statistics; calls open_impl).
  std::unique_ptr<BlockStream> open(const StreamPlan& plan) const;
  virtual Block gather_impl(std::span<const int64_t> indices, uint64_t epoch) const;
  /// The default (random-access nodes) gathers blocks of `plan.order` (or 0..size()-1).
  virtual std::unique_ptr<BlockStream> open_impl(const StreamPlan& plan) const;
  /// The nodes this one reads.
  virtual std::vector<std::shared_ptr<const Dataset>> children() const { return {}; }
  /// Extra text for stats() (per-transform time, queue depth).
  virtual std::string stats_note() const { return {}; }
  virtual void reset_note_stats() const {}
  NodeStats& node_stats() const { return stats_; }

 private:
  mutable NodeStats stats_;
};

/// Reads one epoch of a pipeline: `while (auto row = it.next())` or `for (const Row& row : it)`.
/// Owns the pipeline's worker threads; destroying it stops them.
class Iterator {
 public:
  Iterator(std::shared_ptr<const Dataset> dataset, uint64_t epoch);
  ~Iterator();
  Iterator(Iterator&&) noexcept;
  Iterator& operator=(Iterator&&) noexcept;

  /// The next row, or nullopt at the end of the epoch. Errors of worker threads surface here.
  std::optional<Row> next();

  struct End {};
  class RowIter {
   public:
    explicit RowIter(Iterator* it) : it_(it), row_(it->next()) {}
    const Row& operator*() const { return *row_; }
    RowIter& operator++() {
      row_ = it_->next();
      return *this;
    }
    bool operator==(End) const { return !row_.has_value(); }

   private:
    Iterator* it_;
    std::optional<Row> row_;
  };
  RowIter begin() { return RowIter(this); }
  End end() { return {}; }

 private:
  std::shared_ptr<const Dataset> dataset_;
  std::unique_ptr<BlockStream> stream_;
  Block block_;
  int64_t pos_ = 0;
};

}  // namespace spore::data
