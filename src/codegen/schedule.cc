// SPDX-License-Identifier: Apache-2.0
#include "codegen/schedule.h"

#include <algorithm>

#include "runtime/parallel.h"
#include "spore/threading.h"

namespace spore::codegen {

Schedule make_schedule(const LoopProgram& p, int64_t numel, int64_t tile) {
  Schedule s;
  const auto& k = tile_kernels();
  s.lanes = p.dtype == DType::Float64 ? k.f64.lanes : k.f32.lanes;
  s.tile = std::max<int64_t>(s.lanes, (tile + s.lanes - 1) / s.lanes * s.lanes);
  // Work in "simple element-operations", the unit of runtime::kParallelGrain: each load and
  // store counts as one, each op as its cost.
  const int64_t per_element = std::max<int64_t>(1, p.cost + static_cast<int64_t>(p.inputs.size() + p.outputs.size()));
  const int64_t tiles = (numel + s.tile - 1) / s.tile;
  s.grain_tiles = std::max<int64_t>(1, runtime::kParallelGrain / (per_element * s.tile));
  s.threads = tiles > s.grain_tiles ? std::max(1, num_threads()) : 1;
  return s;
}

}  // namespace spore::codegen
