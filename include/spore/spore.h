// SPDX-License-Identifier: Apache-2.0
#pragma once
// Spore: one include for the public C++ API.
#include "spore/autodiff.h"
#include "spore/control_flow.h"
#include "spore/custom_vjp.h"
#include "spore/device.h"
#include "spore/dtype.h"
#include "spore/error.h"
#include "spore/jit.h"
#include "spore/memory.h"
#include "spore/ops.h"
#include "spore/scalar.h"
#include "spore/shape.h"
#include "spore/tensor.h"
#include "spore/threading.h"
#include "spore/tree.h"
#include "spore/vmap.h"
