# SPDX-License-Identifier: Apache-2.0
"""Writes the small ONNX models tests/io/onnx_import_test.cc imports, with inputs and expected
outputs computed independently (numpy / PyTorch), as <name>.onnx, <name>.in<k>.pb, <name>.out<k>.pb.
Also writes deliberately broken models for the error tests. Usage: make_test_models.py OUTDIR"""
import os
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(7)


def save(name, graph, inputs=(), outputs=(), opset=13):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="spore-tests")
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(model.SerializeToString())
    for k, a in enumerate(inputs):
        with open(os.path.join(out, f"{name}.in{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a).SerializeToString())
    for k, a in enumerate(outputs):
        with open(os.path.join(out, f"{name}.out{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a).SerializeToString())


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


F = TensorProto.FLOAT

# mlp: MatMul + Add + Relu + Softmax with initializers.
x = rng.standard_normal((2, 3)).astype(np.float32)
w = rng.standard_normal((3, 4)).astype(np.float32)
b = rng.standard_normal((4,)).astype(np.float32)
y = torch.softmax(torch.relu(torch.from_numpy(x) @ torch.from_numpy(w) + torch.from_numpy(b)), 1).numpy()
g = helper.make_graph(
    [helper.make_node("MatMul", ["x", "W"], ["h"], name="mm"),
     helper.make_node("Add", ["h", "B"], ["hb"], name="add"),
     helper.make_node("Relu", ["hb"], ["r"], name="relu"),
     helper.make_node("Softmax", ["r"], ["y"], name="softmax", axis=1)],
    "mlp", [vi("x", F, [2, 3])], [vi("y", F, [2, 4])],
    [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])
save("mlp", g, [x], [y])

# conv_bn: Conv (asymmetric pads) + BatchNormalization + MaxPool + GlobalAveragePool + Flatten + Gemm.
x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
cw = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
cb = rng.standard_normal((4,)).astype(np.float32)
scale, bias = rng.random(4).astype(np.float32) + 0.5, rng.standard_normal(4).astype(np.float32)
mean, var = rng.standard_normal(4).astype(np.float32), rng.random(4).astype(np.float32) + 0.5
gw = rng.standard_normal((5, 4)).astype(np.float32)
gb = rng.standard_normal((5,)).astype(np.float32)
t = torch.nn.functional.pad(torch.from_numpy(x), (0, 1, 1, 0))  # ONNX pads [1, 0, 0, 1]
t = torch.nn.functional.conv2d(t, torch.from_numpy(cw), torch.from_numpy(cb))
t = torch.nn.functional.batch_norm(t, torch.from_numpy(mean), torch.from_numpy(var), torch.from_numpy(scale),
                                   torch.from_numpy(bias), False, 0.0, 1e-5)
t = torch.nn.functional.max_pool2d(t, 2, 2)
t = t.mean((2, 3))
y = (t @ torch.from_numpy(gw).T + torch.from_numpy(gb)).numpy()
g = helper.make_graph(
    [helper.make_node("Conv", ["x", "cw", "cb"], ["c"], name="conv", pads=[1, 0, 0, 1], kernel_shape=[3, 3]),
     helper.make_node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["n"], name="bn"),
     helper.make_node("MaxPool", ["n"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
     helper.make_node("GlobalAveragePool", ["p"], ["gap"], name="gap"),
     helper.make_node("Flatten", ["gap"], ["f"], name="flat"),
     helper.make_node("Gemm", ["f", "gw", "gb"], ["y"], name="fc", transB=1)],
    "conv_bn", [vi("x", F, [2, 3, 8, 8])], [vi("y", F, [2, 5])],
    [numpy_helper.from_array(a, n) for a, n in
     ((cw, "cw"), (cb, "cb"), (scale, "s"), (bias, "bb"), (mean, "m"), (var, "v"), (gw, "gw"), (gb, "gb"))])
save("conv_bn", g, [x], [y])

# layer_norm_pow: an exporter's layer norm, variance through Pow(x - mean, 2) with a 0-d exponent
# initializer (the importer makes it a literal, so the passes turn x^2 into x * x).
x = rng.standard_normal((2, 3, 8)).astype(np.float32)
t = torch.from_numpy(x)
y = torch.nn.functional.layer_norm(t, (8,), eps=1e-5).numpy()
g = helper.make_graph(
    [helper.make_node("ReduceMean", ["x"], ["m"], name="mean", axes=[-1]),
     helper.make_node("Sub", ["x", "m"], ["d"], name="sub"),
     helper.make_node("Pow", ["d", "two"], ["d2"], name="pow"),
     helper.make_node("ReduceMean", ["d2"], ["v"], name="var", axes=[-1]),
     helper.make_node("Add", ["v", "eps"], ["ve"], name="add_eps"),
     helper.make_node("Sqrt", ["ve"], ["sd"], name="sqrt"),
     helper.make_node("Div", ["d", "sd"], ["y"], name="div")],
    "layer_norm_pow", [vi("x", F, [2, 3, 8])], [vi("y", F, [2, 3, 8])],
    [numpy_helper.from_array(np.array(2.0, np.float32), "two"),
     numpy_helper.from_array(np.array(1e-5, np.float32), "eps")])
save("layer_norm_pow", g, [x], [y])

# shape_fold: Reshape's target computed from Shape -> Gather -> Unsqueeze -> Concat at import.
x = rng.standard_normal((2, 3, 4)).astype(np.float32)
g = helper.make_graph(
    [helper.make_node("Shape", ["x"], ["s"], name="shape"),
     helper.make_node("Gather", ["s", "zero"], ["n"], name="gather", axis=0),
     helper.make_node("Unsqueeze", ["n", "axes"], ["n1"], name="unsq"),
     helper.make_node("Concat", ["n1", "minus1"], ["target"], name="cat", axis=0),
     helper.make_node("Reshape", ["x", "target"], ["y"], name="reshape")],
    "shape_fold", [vi("x", F, [2, 3, 4])], [vi("y", F, [2, 12])],
    [numpy_helper.from_array(np.array(0, np.int64), "zero"), numpy_helper.from_array(np.array([0], np.int64), "axes"),
     numpy_helper.from_array(np.array([-1], np.int64), "minus1")])
save("shape_fold", g, [x], [x.reshape(2, 12)])

# dynamic: a symbolic batch dimension.
x = rng.standard_normal((3, 4)).astype(np.float32)
c = rng.standard_normal((4,)).astype(np.float32)
g = helper.make_graph(
    [helper.make_node("Add", ["x", "c"], ["a"], name="add"), helper.make_node("Tanh", ["a"], ["y"], name="tanh")],
    "dynamic", [vi("x", F, ["batch", 4])], [vi("y", F, ["batch", 4])], [numpy_helper.from_array(c, "c")])
save("dynamic", g, [x], [np.tanh(x + c)])

# Error models.
g = helper.make_graph(
    [helper.make_node("FancyOp", ["x"], ["a"], name="f1"), helper.make_node("Relu", ["a"], ["b"], name="r"),
     helper.make_node("FancyOp", ["b"], ["c"], name="f2"), helper.make_node("OtherOp", ["c"], ["y"], name="o1")],
    "unsupported", [vi("x", F, [2])], [vi("y", F, [2])])
save("unsupported", g)

bad = TensorProto(name="W", data_type=F, dims=[2, 3], raw_data=b"\0" * 20)
g = helper.make_graph([helper.make_node("Add", ["x", "W"], ["y"], name="add")], "bad_init",
                      [vi("x", F, [2, 3])], [vi("y", F, [2, 3])], [bad])
save("bad_init", g)

huge = TensorProto(name="W", data_type=F, dims=[1 << 31, 1 << 31, 4], raw_data=b"\0" * 16)
g = helper.make_graph([helper.make_node("Add", ["x", "W"], ["y"], name="add")], "huge_init",
                      [vi("x", F, [2])], [vi("y", F, [2])], [huge])
save("huge_init", g)

ext = TensorProto(name="W", data_type=F, dims=[2], data_location=TensorProto.EXTERNAL)
ext.external_data.add(key="location", value="/etc/passwd")
g = helper.make_graph([helper.make_node("Add", ["x", "W"], ["y"], name="add")], "external",
                      [vi("x", F, [2])], [vi("y", F, [2])], [ext])
save("external", g)

g = helper.make_graph([helper.make_node("Add", ["x", "nowhere"], ["y"], name="add_missing")], "undefined",
                      [vi("x", F, [2])], [vi("y", F, [2])])
save("undefined", g)

# value_dependent: sizes that run-time inputs give (a symbolic batch too): Reshape's shape (0
# copies the batch), TopK's k, NonZero's count. The test runs it at several values; expected
# outputs come from numpy / PyTorch for the first.
x = rng.standard_normal((2, 6)).astype(np.float32)
shape = np.array([0, 3, 2], np.int64)
k = np.array([4], np.int64)
tk = torch.topk(torch.from_numpy(x), 4, dim=1)
g = helper.make_graph([helper.make_node("Reshape", ["x", "shape"], ["y"], name="dyn_reshape"),
                       helper.make_node("TopK", ["x", "k"], ["v", "i"], name="dyn_topk", axis=1),
                       helper.make_node("NonZero", ["x"], ["nz"], name="dyn_nonzero")], "value_dependent",
                      [vi("x", F, ["batch", 6]), vi("shape", TensorProto.INT64, [3]), vi("k", TensorProto.INT64, [1])],
                      [vi("y", F, ["batch", "a", "b"]), vi("v", F, ["batch", "k"]), vi("i", TensorProto.INT64, ["batch", "k"]),
                       vi("nz", TensorProto.INT64, [2, "n"])])
save("value_dependent", g, [x, shape, k], [x.reshape(2, 3, 2), tk.values.numpy(), tk.indices.numpy(), np.array(np.nonzero(x))])

# run_time_axes: Unsqueeze's axes set the output's rank, which a graph fixes: refused at import.
g = helper.make_graph([helper.make_node("Unsqueeze", ["x", "axes"], ["y"], name="dyn_unsqueeze")], "run_time_axes",
                      [vi("x", F, [2, 3]), vi("axes", TensorProto.INT64, [1])], [vi("y", F, None)])
save("run_time_axes", g)

# Shapes of traced values meeting run-time values (shape_values_*): a Shape of a symbolic batch
# computed with as numbers (Min, Range, Slice's ends), and Shape of values whose sizes the data
# give (TopK with a run-time k, NonZero). Each is checked in PyNative and Graph mode.
I64 = TensorProto.INT64


def c64(name, values):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(values, np.int64)))


x = rng.standard_normal((2, 5)).astype(np.float32)
n = np.array([3], np.int64)
g = helper.make_graph([helper.make_node("Shape", ["x"], ["s"]), c64("one", [1]), c64("two", [2]), c64("zero", [0]),
                       helper.make_node("Slice", ["s", "one", "two"], ["l"]),
                       helper.make_node("Min", ["l", "n"], ["e"]),
                       helper.make_node("Slice", ["x", "zero", "e", "one"], ["y"])], "shape_values_min",
                      [vi("x", F, [2, "L"]), vi("n", I64, [1])], [vi("y", F, [2, "m"])])
save("shape_values_min", g, [x, n], [x[:, :3]])

x = rng.standard_normal((4, 3)).astype(np.float32)
st = np.array([1], np.int64)
g = helper.make_graph([helper.make_node("Shape", ["x"], ["s"], end=1), c64("zero", [0]),
                       helper.make_node("Slice", ["x", "st", "s", "zero"], ["y"])], "shape_values_slice_end",
                      [vi("x", F, ["N", 3]), vi("st", I64, [1])], [vi("y", F, ["m", 3])])
save("shape_values_slice_end", g, [x, st], [x[1:]])

d = np.array(2, np.int64)
g = helper.make_graph([helper.make_node("Shape", ["x"], ["s"], end=1), c64("zero0", 0), c64("zero", [0]),
                       helper.make_node("Squeeze", ["s", "zero"], ["n"]),
                       helper.make_node("Range", ["zero0", "n", "d"], ["y"])], "shape_values_range",
                      [vi("x", F, ["N", 3]), vi("d", I64, [])], [vi("y", I64, ["m"])])
save("shape_values_range", g, [x, d], [np.arange(0, 4, 2, dtype=np.int64)])

x = rng.standard_normal((3, 6)).astype(np.float32)
k = np.array([4], np.int64)
c = np.array([[0, 1, 2], [3, 0, 0]], np.float32)
y = rng.standard_normal((3,)).astype(np.float32)
g = helper.make_graph([helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1), helper.make_node("Shape", ["v"], ["sv"]),
                       helper.make_node("NonZero", ["c"], ["nz"]), helper.make_node("Shape", ["nz"], ["snz"]),
                       helper.make_node("ConstantOfShape", ["snz"], ["zeros"]), c64("one", [1]), c64("big", [9]),
                       helper.make_node("Slice", ["snz", "one", "big"], ["count"]),
                       helper.make_node("Reshape", ["y", "count"], ["yr"]),
                       helper.make_node("Concat", ["one", "sv"], ["s1v"], axis=0),
                       helper.make_node("Reshape", ["v", "s1v"], ["vr"])], "shape_values_of_value_sizes",
                      [vi("x", F, [3, 6]), vi("k", I64, [1]), vi("c", F, [2, 3]), vi("y", F, [3])],
                      [vi("sv", I64, [2]), vi("snz", I64, [2]), vi("zeros", F, [2, "n"]), vi("yr", F, ["n"]),
                       vi("vr", F, [1, 3, "k"])])
vals = torch.topk(torch.from_numpy(x), 4, dim=1).values.numpy()
save("shape_values_of_value_sizes", g, [x, k, c, y],
     [np.array([3, 4], np.int64), np.array([2, 3], np.int64), np.zeros((2, 3), np.float32), y, vals.reshape(1, 3, 4)])

x = rng.standard_normal((2, 6)).astype(np.float32)
k = np.array([3], np.int64)
g = helper.make_graph([helper.make_node("Shape", ["x"], ["s"], end=1), c64("rest", [-1]),
                       helper.make_node("Concat", ["s", "k", "rest"], ["shape"], axis=0),
                       helper.make_node("Reshape", ["x", "shape"], ["y"])], "shape_values_concat",
                      [vi("x", F, ["N", 6]), vi("k", I64, [1])], [vi("y", F, ["N", "k", "r"])])
save("shape_values_concat", g, [x, k], [x.reshape(2, 3, 2)])

# Run-time Split, Range and Slice whose inputs break ONNX's rules: refused when the graph runs,
# naming the node (run_time_checks_*; the test feeds the bad values). Saved with good inputs.
x = rng.standard_normal((6,)).astype(np.float32)
g = helper.make_graph([helper.make_node("Split", ["x", "split"], ["a", "b"], name="dyn_split", axis=0)], "run_time_checks_split",
                      [vi("x", F, [6]), vi("split", I64, [2])], [vi("a", F, ["p"]), vi("b", F, ["q"])])
save("run_time_checks_split", g, [x, np.array([2, 4], np.int64)], [x[:2], x[2:]])
g = helper.make_graph([helper.make_node("Range", ["s", "l", "d"], ["y"], name="dyn_range")], "run_time_checks_range",
                      [vi("s", F, []), vi("l", F, []), vi("d", F, [])], [vi("y", F, ["n"])])
save("run_time_checks_range", g, [np.array(1, np.float32), np.array(2, np.float32), np.array(0.25, np.float32)],
     [np.arange(1, 2, 0.25, dtype=np.float32)])
x = rng.standard_normal((3, 5)).astype(np.float32)
g = helper.make_graph([helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"], name="dyn_slice")], "run_time_checks_slice",
                      [vi("x", F, [3, 5]), vi("st", I64, [1]), vi("en", I64, [1]), vi("ax", I64, [1]), vi("sp", I64, [1])],
                      [vi("y", F, [3, "n"])])
save("run_time_checks_slice", g, [x, np.array([4], np.int64), np.array([0], np.int64), np.array([-1], np.int64),
                                  np.array([-2], np.int64)], [x[:, 4:0:-2]])

# Shape values leaving the graph, and constant Slices of symbolic axes (a batch, a TopK's k).
x = rng.standard_normal((2, 3)).astype(np.float32)
g = helper.make_graph([helper.make_node("Shape", ["x"], ["s"]), c64("one", [1]), helper.make_node("Add", ["s", "one"], ["s1"])],
                      "shape_values_output", [vi("x", F, ["N", 3])], [vi("s", I64, [2]), vi("s1", I64, [2])])
save("shape_values_output", g, [x], [np.array([2, 3], np.int64), np.array([3, 4], np.int64)])

x = rng.standard_normal((4, 5)).astype(np.float32)
k = np.array([3], np.int64)
g = helper.make_graph([c64("zero", [0]), c64("one", [1]), c64("three", [3]), c64("end", [np.iinfo(np.int64).max]),
                       helper.make_node("Slice", ["x", "one", "end", "zero"], ["rows"]),
                       helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1),
                       helper.make_node("Slice", ["v", "zero", "end", "one"], ["whole"]),
                       helper.make_node("Slice", ["v", "one", "three", "one"], ["part"])], "shape_values_slice_axis",
                      [vi("x", F, ["N", 5]), vi("k", I64, [1])],
                      [vi("rows", F, ["m", 5]), vi("whole", F, ["N", "k"]), vi("part", F, ["N", "p"])])
vals = torch.topk(torch.from_numpy(x), 3, dim=1).values.numpy()
save("shape_values_slice_axis", g, [x, k], [x[1:], vals, vals[:, 1:3]])
