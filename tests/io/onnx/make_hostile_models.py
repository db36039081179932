# SPDX-License-Identifier: Apache-2.0
"""Writes tiny hostile ONNX models into DIR for tests/io/onnx_hostile_test.cc: each is a few
hundred bytes that would make a careless importer allocate gigabytes, index past a list or build
an invalid graph. Usage: make_hostile_models.py DIR"""
import os
import sys

from onnx import TensorProto, helper, save

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
F, I, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def model(name, nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), os.path.join(out, name + ".onnx"))


x = helper.make_tensor_value_info("x", F, [2])
y = helper.make_tensor_value_info("y", F, None)
# An initializer that declares 2^32 int64 elements and holds none (32 GiB if allocated first).
huge = TensorProto(name="w", data_type=I, dims=[1 << 32])
model("huge_initializer", [helper.make_node("Identity", ["w"], ["y"])], [], [y], [huge])
# ConstantOfShape([60000, 60000]) from a constant shape: 14 GB folded at import.
shape = helper.make_tensor("shape", I, [2], [60000, 60000])
model("constant_of_shape_bomb", [helper.make_node("ConstantOfShape", ["shape"], ["y"])], [], [y], [shape])
# TopK with an empty K.
k = helper.make_tensor("k", I, [0], [])
model("topk_empty_k", [helper.make_node("TopK", ["x", "k"], ["y", "i"])], [x],
      [y, helper.make_tensor_value_info("i", I, None)], [k])
# An If whose branches return nothing.
empty = helper.make_graph([], "empty", [], [])
c = helper.make_tensor_value_info("c", B, [])
model("if_without_outputs", [helper.make_node("If", ["c"], [], then_branch=empty, else_branch=empty),
                             helper.make_node("Identity", ["x"], ["y"])], [c, x], [y])
# Unsupported operators at the top and inside a Loop body: one error lists both.
body = helper.make_graph([helper.make_node("Identity", ["c_in"], ["c_out"]),
                          helper.make_node("NoSuchOpInBody", ["v_in"], ["v_out"], name="inner")],
                         "body", [helper.make_tensor_value_info("i", I, []), helper.make_tensor_value_info("c_in", B, []),
                                  helper.make_tensor_value_info("v_in", F, [2])],
                         [helper.make_tensor_value_info("c_out", B, []), helper.make_tensor_value_info("v_out", F, [2])])
trips = helper.make_tensor("trips", I, [], [3])
model("unsupported_nested", [helper.make_node("NoSuchOpOutside", ["x"], ["t"], name="outer"),
                             helper.make_node("Loop", ["trips", "", "t"], ["y"], body=body)], [x], [y], [trips])
