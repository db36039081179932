// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace spore {

/// Threads used inside one op (OpenMP, shared with oneDNN). Default: SPORE_NUM_THREADS, else
/// every core. Results never depend on it: reductions combine fixed chunks in a fixed order.
void set_num_threads(int n);
int num_threads();

}  // namespace spore
