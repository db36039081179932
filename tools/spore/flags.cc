// SPDX-License-Identifier: Apache-2.0
#include "spore/flags.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "spore/error.h"

namespace spore::cli {

Flags::Flags(std::string command, std::vector<FlagSpec> specs) : command_(std::move(command)), specs_(std::move(specs)) {}

const FlagSpec& Flags::spec(const std::string& name) const {
  for (const auto& s : specs_)
    if (s.name == name) return s;
  std::string known;
  for (const auto& s : specs_) known += (known.empty() ? "--" : ", --") + s.name;
  throw Error("spore " + command_ + ": unknown flag --" + name + "; known flags: " + known);
}

void Flags::parse(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() < 3 || a.rfind("--", 0) != 0) {
      SPORE_CHECK(a.empty() || a[0] != '-' || a == "-", "spore ", command_, ": flags are written --name (got '", a, "')");
      positional_.push_back(a);
      continue;
    }
    std::string name = a.substr(2), value;
    const size_t eq = name.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const FlagSpec& s = spec(name);
    if (s.takes_value) {
      if (!inline_value) {
        SPORE_CHECK(i + 1 < args.size(), "spore ", command_, ": flag --", name, " needs a value");
        value = args[++i];
      }
      values_[name].push_back(value);
    } else {
      SPORE_CHECK(!inline_value, "spore ", command_, ": flag --", name, " is a switch and takes no value");
      values_[name].push_back(std::string(1, '1'));  // (a literal trips GCC 12's false -Wrestrict)
    }
  }
}

bool Flags::has(const std::string& name) const {
  spec(name);
  return values_.count(name) != 0;
}

std::string Flags::str(const std::string& name) const {
  auto it = values_.find(name);
  return it != values_.end() ? it->second.back() : spec(name).default_value;
}

std::vector<std::string> Flags::all(const std::string& name) const {
  spec(name);
  auto it = values_.find(name);
  return it != values_.end() ? it->second : std::vector<std::string>{};
}

int64_t Flags::integer(const std::string& name, int64_t min, int64_t max) const {
  const std::string v = str(name);
  errno = 0;
  char* end = nullptr;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  SPORE_CHECK(!v.empty() && end && *end == '\0' && errno == 0, "spore ", command_, ": --", name,
              " expects an integer, got '", v, "'");
  SPORE_CHECK(x >= min && x <= max, "spore ", command_, ": --", name, " must be in [", min, ", ", max, "], got ", x);
  return x;
}

double Flags::number(const std::string& name, double min, double max) const {
  const std::string v = str(name);
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  SPORE_CHECK(!v.empty() && end && *end == '\0' && std::isfinite(x), "spore ", command_, ": --", name,
              " expects a number, got '", v, "'");
  SPORE_CHECK(x >= min && x <= max, "spore ", command_, ": --", name, " must be in [", min, ", ", max, "], got ", x);
  return x;
}

std::string Flags::choice(const std::string& name, const std::vector<std::string>& choices) const {
  const std::string v = str(name);
  std::string list;
  for (const auto& c : choices) {
    if (c == v) return v;
    list += (list.empty() ? "" : ", ") + c;
  }
  throw Error("spore " + command_ + ": --" + name + " must be one of " + list + ", got '" + v + "'");
}

std::string Flags::help() const {
  std::ostringstream os;
  for (const auto& s : specs_) {
    std::string left = "  --" + s.name + (s.takes_value ? " VALUE" : "");
    os << left << std::string(left.size() < 28 ? 28 - left.size() : 1, ' ') << s.help;
    if (!s.default_value.empty() && s.takes_value) os << " (default " << s.default_value << ")";
    os << '\n';
  }
  return os.str();
}

}  // namespace spore::cli
