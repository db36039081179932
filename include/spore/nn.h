// SPDX-License-Identifier: Apache-2.0
#pragma once
// spore::nn: cells (modules), containers, layers, initializers and losses.
#include "spore/nn/activation.h"
#include "spore/nn/attention.h"
#include "spore/nn/cell.h"
#include "spore/nn/containers.h"
#include "spore/nn/conv.h"
#include "spore/nn/dense.h"
#include "spore/nn/dropout.h"
#include "spore/nn/embedding.h"
#include "spore/nn/init.h"
#include "spore/nn/int_list.h"
#include "spore/nn/loss.h"
#include "spore/nn/normalization.h"
#include "spore/nn/pooling.h"
#include "spore/nn/rnn.h"
#include "spore/nn/transformer.h"
