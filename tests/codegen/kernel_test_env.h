// SPDX-License-Identifier: Apache-2.0
#pragma once
// Keeps the test binary off the user's kernel cache: SPORE_KERNEL_CACHE points at a private
// temporary directory (made when the binary starts, so tests elsewhere that run fused nodes at
// O2 do not write to ~/.cache either), unless the environment already names one (a parent test
// running this binary as a child process passes its own).
#include <string>

namespace spore::codegen::testing {

/// The kernel cache directory tests use (sets SPORE_KERNEL_CACHE when unset); created 0700.
const std::string& use_test_kernel_cache();

/// A fresh private directory under the test cache's parent, for tests that need their own.
std::string fresh_temp_dir();

}  // namespace spore::codegen::testing
