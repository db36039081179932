// SPDX-License-Identifier: Apache-2.0
#include "spore/data/dataset.h"
#include "spore/data/random.h"

#include <cmath>
#include <cstdio>
#include <numeric>

#include "data/block.h"
#include "data/nodes.h"
#include "data/stream.h"

namespace spore::data {
namespace {

/// Reads a random-access node block by block through gather_impl.
class GatherStream : public BlockStream {
 public:
  GatherStream(const Dataset& ds, StreamPlan plan) : ds_(ds), plan_(std::move(plan)), n_(plan_rows(ds, plan_)) {}
  std::optional<Block> next() override {
    if (pos_ >= n_) return std::nullopt;
    const int64_t stop = std::min(n_, pos_ + std::max<int64_t>(1, plan_.block));
    plan_indices(plan_, pos_, stop, idx_);
    pos_ = stop;
    return ds_.gather_impl(idx_, plan_.epoch);
  }

 private:
  const Dataset& ds_;
  StreamPlan plan_;
  int64_t n_;
  int64_t pos_ = 0;
  std::vector<int64_t> idx_;
};

/// Counts what a node's stream yields.
class CountingStream : public BlockStream {
 public:
  CountingStream(NodeStats& stats, std::unique_ptr<BlockStream> inner) : stats_(stats), inner_(std::move(inner)) {}
  std::optional<Block> next() override {
    auto b = inner_->next();
    if (b) {
      stats_.rows.fetch_add(b->rows, std::memory_order_relaxed);
      stats_.blocks.fetch_add(1, std::memory_order_relaxed);
    }
    return b;
  }

 private:
  NodeStats& stats_;
  std::unique_ptr<BlockStream> inner_;
};

void stats_lines(const Dataset& ds, int depth, std::string& out) {
  const NodeStats& s = ds.node_stats();
  char line[160];
  std::snprintf(line, sizeof line, "%-*s%-*s %10lld rows %8lld blocks %10.2f ms", depth * 2, "",
                std::max(1, 40 - depth * 2), ds.name().c_str(), static_cast<long long>(s.rows.load()),
                static_cast<long long>(s.blocks.load()), static_cast<double>(s.work_ns.load()) * 1e-6);
  out += line;
  const std::string note = ds.stats_note();
  if (!note.empty()) out += "  " + note;
  out += '\n';
  for (const auto& c : ds.children()) stats_lines(*c, depth + 1, out);
}

void reset_all(const Dataset& ds) {
  NodeStats& s = ds.node_stats();
  s.work_ns = 0;
  s.rows = 0;
  s.blocks = 0;
  ds.reset_note_stats();
  for (const auto& c : ds.children()) reset_all(*c);
}

}  // namespace

void plan_indices(const StreamPlan& plan, int64_t start, int64_t stop, std::vector<int64_t>& out) {
  out.resize(stop - start);
  if (plan.order)
    std::copy(plan.order->begin() + start, plan.order->begin() + stop, out.begin());
  else
    std::iota(out.begin(), out.end(), start);
}

std::shared_ptr<Dataset> Dataset::map(std::vector<Transform> ops, int column, int num_parallel_workers) const {
  return make_map(shared_from_this(), std::move(ops), column, num_parallel_workers);
}
std::shared_ptr<Dataset> Dataset::shuffle(int64_t buffer_size, uint64_t seed) const {
  return make_shuffle(shared_from_this(), buffer_size, seed);
}
std::shared_ptr<Dataset> Dataset::batch(int64_t size, bool drop_remainder, std::optional<BatchPad> pad) const {
  return make_batch(shared_from_this(), size, drop_remainder, std::move(pad));
}
std::shared_ptr<Dataset> Dataset::repeat(int64_t count) const { return make_repeat(shared_from_this(), count); }
std::shared_ptr<Dataset> Dataset::take(int64_t count) const {
  SPORE_CHECK(count >= 0, "[take] count must be >= 0, got ", count);
  return make_range(shared_from_this(), 0, count);
}
std::shared_ptr<Dataset> Dataset::skip(int64_t count) const {
  SPORE_CHECK(count >= 0, "[skip] count must be >= 0, got ", count);
  return make_range(shared_from_this(), count, -1);
}
std::shared_ptr<Dataset> Dataset::zip(std::shared_ptr<const Dataset> other) const {
  SPORE_CHECK(other != nullptr, "[zip] the other dataset is null");
  return make_zip(shared_from_this(), std::move(other));
}
std::shared_ptr<Dataset> Dataset::concat(std::shared_ptr<const Dataset> other) const {
  SPORE_CHECK(other != nullptr, "[concat] the other dataset is null");
  return make_concat(shared_from_this(), std::move(other));
}
std::shared_ptr<Dataset> Dataset::shard(int64_t num_shards, int64_t shard_id) const {
  return make_shard(shared_from_this(), num_shards, shard_id);
}
std::shared_ptr<Dataset> Dataset::prefetch(int64_t depth) const { return make_prefetch(shared_from_this(), depth); }

std::vector<std::shared_ptr<Dataset>> Dataset::split(std::vector<double> fractions, uint64_t seed, bool randomize) const {
  const int64_t n = size();
  SPORE_CHECK(!fractions.empty(), "[split] no fractions given");
  double sum = 0;
  for (double f : fractions) {
    SPORE_CHECK(f > 0 && f <= 1, "[split] fractions must be in (0, 1], got ", f);
    sum += f;
  }
  SPORE_CHECK(std::abs(sum - 1) < 1e-6, "[split] fractions add up to ", sum, ", not 1; use split_sizes for row counts");
  SPORE_CHECK(n >= 0, "[split] needs a dataset of known size; ", name(), " has an unknown size");
  std::vector<int64_t> sizes;
  int64_t used = 0;
  for (double f : fractions) {
    sizes.push_back(static_cast<int64_t>(std::floor(f * static_cast<double>(n))));
    used += sizes.back();
  }
  // Rounding leftovers go to the first subsets, one row each.
  for (size_t i = 0; used < n; i = (i + 1) % sizes.size(), ++used) ++sizes[i];
  return split_sizes(std::move(sizes), seed, randomize);
}

std::vector<std::shared_ptr<Dataset>> Dataset::split_sizes(std::vector<int64_t> sizes, uint64_t seed, bool randomize) const {
  const int64_t n = size();
  SPORE_CHECK(random_access() && n >= 0, "[split] needs a random-access dataset of known size; ", name(),
              " is read as a stream. Split the source, then apply batch/repeat/prefetch to each part");
  int64_t sum = 0;
  for (int64_t s : sizes) {
    SPORE_CHECK(s >= 0, "[split] sizes must be >= 0, got ", s);
    sum += s;
  }
  SPORE_CHECK(sum == n, "[split] sizes add up to ", sum, " but the dataset has ", n, " rows");
  std::vector<int64_t> order(n);
  if (randomize)
    order = shuffled_order(n, n, sample_key(seed, 0, 0x5b117ull));
  else
    std::iota(order.begin(), order.end(), 0);
  std::vector<std::shared_ptr<Dataset>> out;
  int64_t at = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    auto part = std::make_shared<std::vector<int64_t>>(order.begin() + at, order.begin() + at + sizes[i]);
    at += sizes[i];
    out.push_back(make_subset(shared_from_this(), std::move(part),
                              "split[" + std::to_string(i) + "](" + std::to_string(sizes[i]) + ")"));
  }
  return out;
}

Iterator Dataset::iterate(uint64_t epoch) const { return Iterator(shared_from_this(), epoch); }

std::string Dataset::stats() const {
  std::string out;
  stats_lines(*this, 0, out);
  return out;
}

void Dataset::reset_stats() const { reset_all(*this); }

Block Dataset::gather(std::span<const int64_t> indices, uint64_t epoch) const {
  Block b = gather_impl(indices, epoch);
  stats_.rows.fetch_add(b.rows, std::memory_order_relaxed);
  stats_.blocks.fetch_add(1, std::memory_order_relaxed);
  return b;
}

std::unique_ptr<BlockStream> Dataset::open(const StreamPlan& plan) const {
  SPORE_ASSERT(!plan.order || random_access(), "an order was pushed into ", name(), ", which is not random-access");
  return std::make_unique<CountingStream>(stats_, open_impl(plan));
}

Block Dataset::gather_impl(std::span<const int64_t>, uint64_t) const {
  SPORE_ASSERT(false, "gather on ", name(), ", which is not random-access");
  return {};
}

std::unique_ptr<BlockStream> Dataset::open_impl(const StreamPlan& plan) const {
  SPORE_ASSERT(random_access(), name(), " must implement open_impl");
  return std::make_unique<GatherStream>(*this, plan);
}

Iterator::Iterator(std::shared_ptr<const Dataset> dataset, uint64_t epoch) : dataset_(std::move(dataset)) {
  StreamPlan plan;
  plan.epoch = epoch;
  stream_ = dataset_->open(plan);
}
Iterator::~Iterator() = default;
Iterator::Iterator(Iterator&&) noexcept = default;
Iterator& Iterator::operator=(Iterator&&) noexcept = default;

std::optional<Row> Iterator::next() {
  while (pos_ >= block_.rows) {
    auto b = stream_->next();
    if (!b) return std::nullopt;
    block_ = std::move(*b);
    pos_ = 0;
  }
  return row_of_block(block_, pos_++);
}

}  // namespace spore::data
