// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <cstdint>
#include <string>

#include "spore/small_vec.h"

namespace spore {

/// One dimension: a constant, or a symbolic dimension naming an entry of the process-wide symbol
/// table (a symbol bound by a graph input or a data-dependent op, or a small expression of
/// symbols). Symbols live far below any plain number (<= kSymbolBase), so a bad user size such
/// as -1 or -3 is never mistaken for one. Eager tensors only ever hold constants; inference
/// functions use the dim_* helpers below so the same code infers shapes over symbols.
using Dim = int64_t;
inline constexpr Dim kSymbolBase = -(int64_t{1} << 62);

/// Shapes and strides (strides in elements) keep up to 6 entries inline.
using Shape = SmallVec<Dim, 6>;
/// The most dimensions a tensor may have (kernels keep per-dimension state on the stack).
inline constexpr int kMaxRank = 16;
using Strides = SmallVec<int64_t, 6>;

inline bool is_symbolic(Dim d) { return d <= kSymbolBase; }
/// A fresh symbol, printed with `name` ("batch", "s3", ...).
Dim new_symbol(const std::string& name);
/// The symbol with this name (the first made with it), made if there is none (IR round trips).
Dim symbol_named(const std::string& name);
/// True for a symbol itself, false for constants and expressions of symbols.
bool is_plain_symbol(Dim d);
/// A fresh symbol for a size that a tensor's values give when the graph runs (nonzero's count,
/// topk's k from a tensor, an ONNX Reshape's shape input), named "vsize<n>". A trace cannot
/// check what such a size will be, so shape checks that meet one are left to the kernel call,
/// which sees the bound size.
Dim new_value_symbol();
/// True when `d` is or contains a value symbol (new_value_symbol; also one read back from text).
bool is_value_size(Dim d);
Dim dim_add(Dim a, Dim b);
Dim dim_sub(Dim a, Dim b);
Dim dim_mul(Dim a, Dim b);
/// Floor division; folds when both are constants.
Dim dim_floordiv(Dim a, Dim b);
/// Text for messages and the IR: "64" or "batch" or "(batch*4)".
std::string dim_str(Dim d);

/// Number of elements; symbolic shapes give a symbolic product.
Dim numel_of(const Shape& s);
/// Contiguous (row-major) strides for a shape.
Strides contiguous_strides(const Shape& s);
/// Channels-last strides for (N, C, *spatial): channels innermost, then the spatial dims in
/// order, then N, as PyTorch's channels_last (NHWC) and oneDNN's nhwc/ndhwc/nwc.
Strides channels_last_strides(const Shape& s);
/// "(32, 64)" as used in every error message.
std::string shape_str(std::span<const Dim> s);

/// Normalizes an axis in [-rank, rank) and throws a clear error naming `op` otherwise.
int normalize_axis(int64_t axis, int64_t rank, const char* op);

/// NumPy broadcasting of two shapes; throws "[op] shapes ... cannot broadcast" naming both.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

}  // namespace spore
