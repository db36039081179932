// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <string>
#include <vector>

namespace spore::cli {

/// Each returns the process exit status; errors are thrown as spore::Error.
int train_command(const std::vector<std::string>& args);
int eval_command(const std::vector<std::string>& args);
int predict_command(const std::vector<std::string>& args);
int info_command(const std::vector<std::string>& args);
int run_command(const std::vector<std::string>& args);
int convert_command(const std::vector<std::string>& args);
int compare_command(const std::vector<std::string>& args);
int bench_command(const std::vector<std::string>& args);

}  // namespace spore::cli
