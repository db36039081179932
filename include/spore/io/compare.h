// SPDX-License-Identifier: Apache-2.0
#pragma once
// Layer-by-layer comparison of two runs of "the same" model (ONNX vs MindIR, Graph vs PyNative,
// float32 vs a lower precision): the migration tool behind `spore compare`. Layers are matched
// by name first, then the rest by graph position and shape, and the first one whose error passes
// the threshold is named: that is where to look.
#include <span>
#include <string>
#include <vector>

#include "spore/io/model_file.h"

namespace spore::io {

struct LayerDiff {
  std::string layer_a, layer_b, op;
  std::string shape;          // "[16, 64, 56, 56]"
  std::string matched_by;     // "name" or "position"
  double max_abs = 0;         // max |a - b|
  double max_rel = 0;         // max |a - b| / max |a|: the error relative to the layer's scale
  double cosine = 1;          // cosine similarity of a and b as vectors (1 when both are zero)
  bool diverged = false;      // max_rel > threshold, or a non-finite value in one side only
};

struct CompareReport {
  std::vector<LayerDiff> layers;   // in A's execution order
  int first_diverging = -1;        // index into layers, -1 when none diverged
  std::vector<std::string> unmatched_a, unmatched_b;
  double threshold = 0;
};

/// Matches `a` and `b` (each in execution order) and measures each pair.
CompareReport compare_layers(std::span<const LayerValue> a, std::span<const LayerValue> b, double threshold);
/// The report as an aligned text table (one row per layer, the first diverging one marked).
std::string format_report(const CompareReport& r);
/// The report as one JSON object.
std::string report_json(const CompareReport& r);
/// `s` as a JSON string literal (quoted, escaped): names and paths in the tools' JSON output.
std::string json_string(const std::string& s);

}  // namespace spore::io
