# SPDX-License-Identifier: Apache-2.0
"""Joins Spore's Google Benchmark JSON and PyTorch's timings into one JSON line per figure:
{"bench", "threads", "spore_us", "peer", "peer_us", "ratio", "target", "met"}. Ratio is Spore time
over the peer's time (lower is better), except for matmul vs oneDNN, where the target is on
throughput (peer time / Spore time >= 0.97)."""
import json
import sys

spore_json, torch_json = sys.argv[1], sys.argv[2]
spore = {}
for b in json.load(open(spore_json))["benchmarks"]:
    if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
        continue
    name = b["run_name"] if "run_name" in b else b["name"]
    name = name.replace("BM_", "").split("/real_time")[0]
    scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[b["time_unit"]]
    spore[name] = b["real_time"] * scale
torch = json.load(open(torch_json))

rows = [
    # (label, spore key, peer label, peer time, target description, met(ratio))
    ("dispatch_add_1elem", "dispatch_add_1elem/1", "torch (python)", torch["dispatch_add_1elem"]["us"],
     "<= 0.5 us per op", lambda s, p: s <= 0.5),
    ("dispatch_add_literal (a + 1.0)", "dispatch_add_literal/1", "torch (python)", torch["dispatch_add_literal"]["us"],
     "<= 0.5 us per op", lambda s, p: s <= 0.5),
    ("matmul_1024 1T vs oneDNN", "matmul_1024/1", "onednn", spore.get("onednn_matmul_1024/1"),
     ">= 0.97x oneDNN throughput", lambda s, p: p / s >= 0.97),
    ("matmul_1024 2T vs oneDNN", "matmul_1024/2", "onednn", spore.get("onednn_matmul_1024/2"),
     ">= 0.97x oneDNN throughput", lambda s, p: p / s >= 0.97),
    ("matmul_1024 1T vs torch", "matmul_1024/1", "torch", torch["matmul_1024/1"]["us"], "report", None),
    ("matmul_1024 2T vs torch", "matmul_1024/2", "torch", torch["matmul_1024/2"]["us"], "report", None),
    ("conv2d_3x3_64_b8_56 2T", "conv2d_3x3_64_b8_56/2", "torch", torch["conv2d_3x3_64_b8_56"]["us"],
     "<= 1.0x torch", lambda s, p: s / p <= 1.0),
    ("softmax_16384x768 2T", "softmax_16384x768/2", "torch", torch["softmax_16384x768"]["us"],
     "<= 0.25x torch", lambda s, p: s / p <= 0.25),
    ("layer_norm_16384x768 2T", "layer_norm_16384x768/2", "torch", torch["layer_norm_16384x768"]["us"],
     "<= 0.25x torch", lambda s, p: s / p <= 0.25),
    ("fresh_output_16M 2T", "fresh_output_16M/2", "torch", torch["fresh_output_16M"]["us"],
     "<= 0.3x torch", lambda s, p: s / p <= 0.3),
]
for label, key, peer, peer_us, target, met in rows:
    s = spore.get(key)
    if s is None or peer_us is None:
        print(json.dumps({"bench": label, "error": "missing measurement"}))
        continue
    line = {"bench": label, "spore_us": round(s, 3), "peer": peer, "peer_us": round(peer_us, 3),
            "ratio": round(s / peer_us, 3), "target": target}
    if met is not None:
        line["met"] = bool(met(s, peer_us))
    print(json.dumps(line))
