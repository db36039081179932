// SPDX-License-Identifier: Apache-2.0
#pragma once
// spore::optim: optimizers, parameter groups, gradient clipping and learning-rate schedules.
#include "spore/optim/adagrad.h"
#include "spore/optim/adam.h"
#include "spore/optim/clip_grad.h"
#include "spore/optim/lamb.h"
#include "spore/optim/lr_schedule.h"
#include "spore/optim/optimizer.h"
#include "spore/optim/rmsprop.h"
#include "spore/optim/sgd.h"
