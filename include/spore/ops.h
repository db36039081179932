// SPDX-License-Identifier: Apache-2.0
#pragma once
// Public ops: functions that check arguments, promote dtypes, broadcast and call primitives.
#include "spore/ops/creation.h"
#include "spore/ops/elementwise.h"
#include "spore/ops/linalg.h"
#include "spore/ops/nn.h"
#include "spore/ops/random.h"
#include "spore/ops/reduction.h"
#include "spore/ops/shape.h"
