# SPDX-License-Identifier: Apache-2.0
"""The include-graph test (shared/ARCHITECTURE.md, "Dependencies point one way"): each layer
includes only the layers below it, and only oneDNN kernel files include oneDNN."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]', re.M)

# Project headers each layer may include, by path prefix ("spore/" is the public API).
ALLOWED = {
    "src/ir": ["ir/"],  # the IR depends only on the standard library
    "src/core": ["spore/", "core/", "runtime/"],
    "src/runtime": ["spore/", "core/", "runtime/"],
    "src/backends": ["spore/", "core/", "runtime/", "backends/", "prims/"],
    # Decompositions (and later transform rules) are written with ops, so prims may use them.
    "src/prims": ["spore/", "core/", "runtime/", "prims/", "backends/cpu/", "ops/"],
    "src/ops": ["spore/", "core/", "runtime/", "prims/", "ops/"],
    # Transform rules are written with public ops; they read primitives' attribute structs.
    "src/autodiff": ["spore/", "core/", "runtime/", "prims/", "autodiff/", "ir/"],
    # Tracing, jit, the interpreter and vmap: they join the primitive world with the IR.
    "src/transforms": ["spore/", "core/", "runtime/", "prims/", "ops/", "ir/", "autodiff/", "transforms/"],
    # Passes rewrite the IR; folding runs primitives through dispatch, control flow through transforms.
    "src/passes": ["spore/", "core/", "runtime/", "prims/", "ops/", "ir/", "autodiff/", "transforms/", "codegen/",
                   "passes/"],
    # The kernel generator: fused groups' loop programs, their schedule and interpreter, and the
    # `fused` primitive (its sub-graph runs through the interpreter when no kernel applies).
    "src/codegen": ["spore/", "core/", "runtime/", "prims/", "backends/cpu/", "ir/", "transforms/", "codegen/"],
    # The user-facing layers are written on the public API (include/spore) only.
    "src/nn": ["spore/", "nn/"],
    "src/optim": ["spore/", "optim/"],
    "src/data": ["spore/", "data/"],
    # The training loop (MindSpore's `train` package: Model, callbacks, checkpoints) joins them.
    "src/train": ["spore/", "train/"],
    # The model zoo: networks built from nn cells.
    "src/models": ["spore/", "models/"],
    # Model files (MindIR, ONNX, npy): they serialize the IR and run loaded graphs through the
    # transforms (trace, interpreter, jit) and the passes (`convert --optimize`).
    "src/io": ["spore/", "core/", "runtime/", "prims/", "ops/", "ir/", "autodiff/", "transforms/", "passes/",
               "io/"],
}
# Third-party headers allowed only in some files.
RESTRICTED = {
    "oneapi/dnnl": lambda p: p.name.startswith("onednn_") and p.parent.name == "cpu",
    "dnnl": lambda p: p.name.startswith("onednn_") and p.parent.name == "cpu",
    "google/protobuf": lambda p: str(p).startswith("src/io"),
    "onnx/": lambda p: str(p).startswith("src/io/onnx"),
}
PROJECT_PREFIXES = ("spore/", "core/", "runtime/", "backends/", "prims/", "ops/", "ir/", "autodiff/",
                    "transforms/", "passes/", "codegen/", "io/", "data/", "parallel/", "lite/", "nn/", "optim/",
                    "train/", "models/")


def main():
    bad = []
    files = [p for p in (ROOT / "src").rglob("*") if p.suffix in (".h", ".cc")]
    for path in files:
        rel = path.relative_to(ROOT)
        layer = next((k for k in ALLOWED if str(rel).startswith(k + "/")), None)
        for inc in INCLUDE.findall(path.read_text()):
            for lib, ok in RESTRICTED.items():
                if inc.startswith(lib) and not ok(rel):
                    bad.append(f"{rel}: includes <{inc}>, allowed only in its own layer's library files")
            if layer and inc.startswith(PROJECT_PREFIXES):
                if not any(inc.startswith(a) for a in ALLOWED[layer]):
                    bad.append(f"{rel}: {layer} must not include \"{inc}\"")
            # Kernels compiled per instruction set must not leak into other layers.
            if inc.endswith(".isa.cc"):
                bad.append(f"{rel}: includes a per-ISA source {inc}")
    for b in bad:
        print("include graph:", b)
    if bad:
        sys.exit(1)
    print(f"include graph: {len(files)} files follow the layering")


if __name__ == "__main__":
    main()
