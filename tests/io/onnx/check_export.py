#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Validates an ONNX file written by Spore's exporter with Debian's python3-onnx.

Usage: check_export.py MODEL.onnx
Runs onnx.checker.check_model(full_check=True) (which also runs strict shape inference),
checks the opset, and that every graph output's declared type agrees with the inferred one.
Prints "OK <op histogram>" and exits 0, or prints the problem and exits 1. Exits 77 when the
onnx module is missing, so callers can skip.
"""
import collections
import sys

try:
    import onnx
    from onnx import shape_inference
except ImportError:
    print("python3-onnx is not installed")
    sys.exit(77)


def dims(t):
    return [d.dim_value if d.HasField("dim_value") else d.dim_param for d in t.tensor_type.shape.dim]


def main(path):
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    opsets = {o.domain: o.version for o in model.opset_import}
    if opsets.get("", None) != 17 or model.ir_version != 8:
        print(f"expected opset 17 / IR 8, got {opsets} / {model.ir_version}")
        return 1
    inferred = shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    values = {v.name: v.type for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
    for out in model.graph.output:
        got = values.get(out.name)
        if got is None:
            continue
        if got.tensor_type.elem_type != out.type.tensor_type.elem_type:
            print(f"output {out.name}: declared elem type {out.type.tensor_type.elem_type}, inferred {got.tensor_type.elem_type}")
            return 1
        a, b = dims(out.type), dims(got)
        if len(a) != len(b) or any(isinstance(x, int) and isinstance(y, int) and x != y for x, y in zip(a, b)):
            print(f"output {out.name}: declared shape {a}, inferred {b}")
            return 1
    hist = collections.Counter(n.op_type for n in model.graph.node)
    print("OK " + " ".join(f"{k}:{v}" for k, v in sorted(hist.items())))
    print("INITS " + " ".join(t.name for t in model.graph.initializer))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
