// SPDX-License-Identifier: Apache-2.0
#include "ir/type.h"

#include "ir/error.h"

namespace spore::ir {
namespace {
constexpr const char* kNames[kNumDTypes] = {"bool",  "uint8",   "int8",     "int16",   "int32",
                                            "int64", "float16", "bfloat16", "float32", "float64"};
}  // namespace

const char* dtype_name(DType t) { return kNames[static_cast<int>(t)]; }

std::optional<DType> dtype_from_name(const std::string& name) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (name == kNames[i]) return static_cast<DType>(i);
  return std::nullopt;
}

std::string type_str(const Type& t) {
  if (is_token(t)) return "token";
  const auto& tt = std::get<TensorType>(t);
  std::ostringstream os;
  os << (tt.weak ? "~" : "") << dtype_name(tt.dtype) << "[";
  for (size_t i = 0; i < tt.shape.size(); ++i) os << (i ? ", " : "") << tt.shape[i].str();
  os << "]";
  if (!tt.layout.empty()) os << "<" << tt.layout << ">";
  return os.str();
}

}  // namespace spore::ir
