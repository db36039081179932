// SPDX-License-Identifier: Apache-2.0
#pragma once
// The expression tree behind a symbolic dimension, for code that converts it to another form
// (the IR bridge writes (batch * 4) as an IR dimension expression).
#include <string>

#include "spore/shape.h"

namespace spore {

/// The expression behind a symbolic `d`: op 's' for a symbol (its name in `name`), else one of
/// + - * / with operands a and b. False for a constant or an id this process never made.
bool dim_parts(Dim d, char& op, Dim& a, Dim& b, std::string& name);

}  // namespace spore
