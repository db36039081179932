// SPDX-License-Identifier: Apache-2.0
#pragma once
// MindIR model files (docs/mindir.md, "Binary form"): a versioned protobuf graph plus a
// 64-byte-aligned raw tensor section. export_mindir traces a function (as jit does) and stores
// the graph with the values of the tensors it captures (a Cell's parameters and buffers);
// load_mindir gives back a GraphCell that runs, differentiates and fine-tunes like any Cell.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "spore/io/graph_cell.h"
#include "spore/io/model_key.h"
#include "spore/nn/cell.h"
#include "spore/tensor.h"

namespace spore::io {

/// What export_mindir records besides the graph.
struct ExportOptions {
  /// Names of the data inputs and of the results; missing ones default to "input_i", "output_i".
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  std::string producer = "spore";
  std::string producer_version;
  /// Optional free-form description of the input preprocessing (stored as metadata).
  std::string preprocessing;
  /// More free-form metadata.
  std::map<std::string, std::string> metadata;
  /// Set: the file is written encrypted with AES-GCM under this key (docs/mindir.md,
  /// "Encrypted form"); loading it then needs the same key.
  std::optional<ModelKey> key;
};

/// A model function: data inputs in, results out.
using ModelFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

/// Traces `fn` on inputs of the types of `example_inputs` and writes the graph to `path`
/// atomically. Tensors `fn` captures become state inputs (role constant, or buffer when fn writes
/// them) whose current values are stored. Random draws are fixed at trace time.
void export_mindir(const ModelFn& fn, const std::vector<Tensor>& example_inputs, const std::string& path,
                   const ExportOptions& options = {});

/// As above for a function that calls `cell`: the cell's parameters and buffers it captures are
/// stored under their dotted names with role parameter or buffer, so the loaded GraphCell has
/// the same parameter_tree() keys. The cell's current train/eval mode is traced.
void export_mindir(nn::Cell& cell, const ModelFn& fn, const std::vector<Tensor>& example_inputs,
                   const std::string& path, const ExportOptions& options = {});

/// Writes a loaded (perhaps fine-tuned) model with its current parameter and buffer values;
/// with `key`, encrypted.
void save_mindir(const GraphCell& cell, const std::string& path, const std::optional<ModelKey>& key = std::nullopt);

/// Loads a MindIR file. Throws spore::Error naming the file and the problem for a missing,
/// truncated, corrupted or newer-format file, and for an encrypted file without its key or
/// with a wrong one (AES-GCM's tag cannot tell a wrong key from a modified file). An encrypted
/// file is read in pieces and decrypted into memory (not mapped).
GraphCell load_mindir(const std::string& path, const std::optional<ModelKey>& key = std::nullopt);

}  // namespace spore::io
