// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where a random primitive's Philox key comes from. PyNative: the op draws (seed, offset) from
// the default generator and the key sits in the attributes. In a jit graph the generator state
// is a graph input instead: an int64 tensor [seed, base offset] passed as one extra, last input,
// and the attribute offset is then the op's fixed delta from that base, so one compiled graph
// draws on every call exactly what PyNative draws (transforms/trace.cc, transforms/jit.cc).
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <utility>

#include "core/primitive.h"
#include "spore/ops/random.h"

namespace spore::prims {

/// The key a random kernel uses: the attributes' (seed, offset), or with a key input `in[n_data]`
/// (int64 [seed, base]) the input's seed and base + the attribute offset.
RandomKey effective_key(uint64_t seed, uint64_t offset, std::span<const Buffer> in, size_t n_data);

/// Type inference of the optional key input of a primitive with `n_data` data inputs: none, or
/// one int64 tensor of shape (2). Errors name the primitive.
void check_key_input(const char* name, std::span<const TensorType> in, size_t n_data);

/// The number of data inputs of a random primitive (the key input comes after them), or -1 when
/// `p` is not one of the random primitives with key attributes.
int random_data_inputs(const Primitive& p);
/// The (seed, offset) in a random primitive's attributes (random_data_inputs(p) >= 0).
RandomKey key_in_attrs(const Primitive& p, const void* attrs);
/// A copy of the attributes with the key replaced.
std::shared_ptr<const void> with_key_in_attrs(const Primitive& p, const void* attrs, RandomKey key);

/// Draws the key of a random op of `numel` elements from the default generator of `device`.
/// A traced tensor (meta device) draws from the CPU generator: a jit graph runs on the CPU and
/// draws what the eager op on CPU tensors would.
RandomKey draw_key(Device device, int64_t numel);

/// The draws made on this thread while a jit trace runs: which keys came from the CPU generator
/// relative to its state when the log opened (those become base + delta in the graph), and
/// whether the function reseeded the generator (after which its draws are constants of the
/// graph, and the call leaves the generator in a fixed state). At most one per thread.
class DrawLog {
 public:
  DrawLog();  // opens the log on this thread, taking the CPU generator's state as the base
  ~DrawLog();
  DrawLog(const DrawLog&) = delete;
  DrawLog& operator=(const DrawLog&) = delete;

  uint64_t seed() const { return seed_; }
  uint64_t base() const { return base_; }
  /// The offset of `key` from the base when the traced function drew it from the generator
  /// before any reseed; nullopt for a key given explicitly or drawn after a reseed. Errors when
  /// the same key was drawn both ways (a reseed inside the function that repeats its own keys).
  std::optional<uint64_t> delta_of(RandomKey key) const;
  /// How far one call advances the generator: the end of the furthest draw relative to the base.
  uint64_t advance() const { return advance_; }
  /// The function reseeded or moved the generator (manual_seed, set_state): after a call it
  /// is left in the state it had when the trace ended.
  bool state_is_fixed() const;

  /// Called by draw_key and manual_seed.
  static void note_draw(RandomKey key, uint64_t step, bool from_cpu);
  static void note_reseed();

 private:
  uint64_t seed_ = 0, base_ = 0, advance_ = 0;
  bool reseeded_ = false;
  DrawLog* outer_ = nullptr;  // the log this one hides, restored when it closes
  enum class Kind : uint8_t { Relative, Fixed, Both };
  std::map<std::pair<uint64_t, uint64_t>, Kind> draws_;
};

}  // namespace spore::prims
