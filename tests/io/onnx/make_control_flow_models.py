# SPDX-License-Identifier: Apache-2.0
"""Writes the small control-flow models of tests/io/onnx_control_flow_test.cc into DIR (their
expected values are worked out by hand in the test). Usage: make_control_flow_models.py DIR"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
F, I, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def model(name, nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    save(m, os.path.join(out, name + ".onnx"))


# Loop with a static trip count: s += x + i, each step's s stacked as a scan output.
body = helper.make_graph(
    [helper.make_node("Identity", ["c_in"], ["c_out"]),
     helper.make_node("Cast", ["i"], ["fi"], to=F),
     helper.make_node("Add", ["s_in", "x"], ["t"]),
     helper.make_node("Add", ["t", "fi"], ["s_out"]),
     helper.make_node("Identity", ["s_out"], ["y"])],
    "sum_body",
    [helper.make_tensor_value_info("i", I, []), helper.make_tensor_value_info("c_in", B, []),
     helper.make_tensor_value_info("s_in", F, [2])],
    [helper.make_tensor_value_info("c_out", B, []), helper.make_tensor_value_info("s_out", F, [2]),
     helper.make_tensor_value_info("y", F, [2])])
model("loop_sum",
      [helper.make_node("Loop", ["M", "", "s0"], ["s", "ys"], body=body)],
      [helper.make_tensor_value_info("x", F, [2])],
      [helper.make_tensor_value_info("s", F, [2]), helper.make_tensor_value_info("ys", F, [4, 2])],
      [numpy_helper.from_array(np.array(4, np.int64), "M"), numpy_helper.from_array(np.zeros(2, np.float32), "s0")])

# Loop with a run-time condition: v doubles while v < limit.
body = helper.make_graph(
    [helper.make_node("Add", ["v_in", "v_in"], ["v_out"]),
     helper.make_node("Less", ["v_out", "limit"], ["c_out"])],
    "double_body",
    [helper.make_tensor_value_info("i", I, []), helper.make_tensor_value_info("c_in", B, []),
     helper.make_tensor_value_info("v_in", F, [])],
    [helper.make_tensor_value_info("c_out", B, []), helper.make_tensor_value_info("v_out", F, [])])
model("loop_while",
      [helper.make_node("Less", ["v0", "limit"], ["c0"]),
       helper.make_node("Loop", ["", "c0", "v0"], ["v"], body=body)],
      [helper.make_tensor_value_info("v0", F, []), helper.make_tensor_value_info("limit", F, [])],
      [helper.make_tensor_value_info("v", F, [])])

# If on a run-time condition; both branches read the outer x.
then_g = helper.make_graph([helper.make_node("Add", ["x", "x"], ["a"])], "then",
                           [], [helper.make_tensor_value_info("a", F, [2])])
else_g = helper.make_graph([helper.make_node("Sub", ["x", "one"], ["b"])], "else",
                           [], [helper.make_tensor_value_info("b", F, [2])])
model("if_sign",
      [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
       helper.make_node("Greater", ["s", "zero"], ["c"]),
       helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
      [helper.make_tensor_value_info("x", F, [2])],
      [helper.make_tensor_value_info("y", F, [2])],
      [numpy_helper.from_array(np.array(0, np.float32), "zero"),
       numpy_helper.from_array(np.array(1, np.float32), "one")])

# Scan walking its input from the end: running sums of the rows, last row first.
body = helper.make_graph(
    [helper.make_node("Add", ["acc_in", "row"], ["acc_out"]),
     helper.make_node("Identity", ["acc_out"], ["y"])],
    "scan_body",
    [helper.make_tensor_value_info("acc_in", F, [2]), helper.make_tensor_value_info("row", F, [2])],
    [helper.make_tensor_value_info("acc_out", F, [2]), helper.make_tensor_value_info("y", F, [2])])
model("scan_reverse",
      [helper.make_node("Scan", ["acc0", "x"], ["acc", "ys"], body=body, num_scan_inputs=1,
                        scan_input_directions=[1])],
      [helper.make_tensor_value_info("acc0", F, [2]), helper.make_tensor_value_info("x", F, [3, 2])],
      [helper.make_tensor_value_info("acc", F, [2]), helper.make_tensor_value_info("ys", F, [3, 2])])
