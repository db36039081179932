// SPDX-License-Identifier: Apache-2.0
#pragma once
// Command-line flags of one subcommand: `--name value`, `--name=value` and bare `--switch`.
// Each command declares its flags; an unknown flag, a missing value or a malformed number is an
// error naming the flag and listing the ones the command knows.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace spore::cli {

struct FlagSpec {
  std::string name;      // without dashes
  bool takes_value;      // false: a switch
  std::string help;
  std::string default_value;  // shown in help; "" = none
};

class Flags {
 public:
  Flags(std::string command, std::vector<FlagSpec> specs);
  /// Parses argv after the subcommand; positional arguments are kept in order.
  void parse(const std::vector<std::string>& args);
  bool has(const std::string& name) const;
  std::string str(const std::string& name) const;  // the last value given, or the spec's default
  /// Every value given for a repeatable flag (`--input a=x.npy --input b=y.npy`), in order.
  std::vector<std::string> all(const std::string& name) const;
  int64_t integer(const std::string& name, int64_t min, int64_t max) const;
  double number(const std::string& name, double min, double max) const;
  /// One of `choices` (the error lists them).
  std::string choice(const std::string& name, const std::vector<std::string>& choices) const;
  const std::vector<std::string>& positional() const { return positional_; }
  std::string help() const;

 private:
  const FlagSpec& spec(const std::string& name) const;
  std::string command_;
  std::vector<FlagSpec> specs_;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
};

}  // namespace spore::cli
