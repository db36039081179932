# SPDX-License-Identifier: Apache-2.0
"""Joins the model-level JSON lines of bench/model_bench.sh (Spore: model_bench.cc, PyTorch:
torch_model_bench.py, ONNX Runtime: ort_bench.js, or its "skipped" line) into one JSON line per
figure of issue 4: {"bench", "spore_us", "peer", "peer_us", "ratio", "target", "met"} as
compare.py prints them (ratio = Spore / peer, lower is better); the memory figure in bytes; the
compile-time figures against their absolute targets. Usage: compare_models.py FILE.jsonl..."""
import json
import sys


def rows_of(paths):
    out = []
    for p in paths:
        for line in open(p):
            line = line.strip()
            if line.startswith("{"):
                out.append(json.loads(line))
    return out


def find(rows, bench, **match):
    for r in rows:
        if r.get("bench") == bench and all(r.get(k) == v for k, v in match.items()):
            return r
    return None


def line(label, spore, peer, peer_value, target, met, unit="us"):
    if spore is None or peer_value is None:
        return {"bench": label, "error": "missing measurement"}
    return {"bench": label, f"spore_{unit}": round(spore, 1), "peer": peer, f"peer_{unit}": round(peer_value, 1),
            "ratio": round(spore / peer_value, 3), "target": target, "met": bool(met(spore / peer_value))}


def ms_to_us(r, key="ms"):
    return r[key] * 1e3 if r and key in r else None


def main():
    rows = rows_of(sys.argv[1:])
    ort_skipped = find(rows, "ort_skipped")
    for model, label in (("resnet18", "resnet18"), ("mobilenet_v2", "mobilenet_v2")):
        for batch in (1, 16):
            s = find(rows, "spore_infer", model=model, batch=batch)
            what = f"{label} inference 224x224 b{batch} 2T, Graph"
            if ort_skipped:
                print(json.dumps({"bench": what + " vs onnxruntime", "skipped": ort_skipped["reason"]}))
            else:
                o = find(rows, "ort_infer", model=model, batch=batch)
                print(json.dumps(line(what + " vs onnxruntime", ms_to_us(s), "onnxruntime 1.30 (node)", ms_to_us(o),
                                      "<= 1.0x onnxruntime", lambda r: r <= 1.0)))
            t = find(rows, "torch_infer", model=model, batch=batch)
            print(json.dumps(line(what + " vs torch", ms_to_us(s), "torch eager channels_last", ms_to_us(t),
                                  "<= 0.75x torch", lambda r: r <= 0.75)))
    s, t = find(rows, "spore_train_resnet18"), find(rows, "torch_train_resnet18")
    print(json.dumps(line("resnet18 train step b16 224x224 SGD momentum 2T, Graph", ms_to_us(s), "torch", ms_to_us(t),
                          "<= 0.8x torch", lambda r: r <= 0.8)))
    mem = line("resnet18 train step b16 peak memory", s and s["peak_bytes"] / 2**20, "torch (live tensors "
               "+ profiler peak)", t and t["peak_bytes"] / 2**20, "<= 0.8x torch", lambda r: r <= 0.8, unit="MiB")
    if s and t and "rss_peak_over_start_bytes" in s and "rss_peak_over_start_bytes" in t:
        # Cross-check: each process's RSS high-water mark over its RSS at start.
        mem["spore_rss_MiB"] = round(s["rss_peak_over_start_bytes"] / 2**20, 1)
        mem["peer_rss_MiB"] = round(t["rss_peak_over_start_bytes"] / 2**20, 1)
    print(json.dumps(mem))
    s, t = find(rows, "spore_transformer_fwd_bwd"), find(rows, "torch_transformer_fwd_bwd")
    print(json.dumps(line("transformer encoder 4x(d256 h4 ff1024) seq128 b16 fwd+bwd 2T, Graph", ms_to_us(s), "torch",
                          ms_to_us(t), "<= 0.8x torch", lambda r: r <= 0.8)))
    for what, label in (("resnet18", "resnet18 forward (b1)"), ("transformer", "transformer train step")):
        for cache, limit in (("cold", 3000.0), ("warm", 300.0)):
            r = find(rows, "spore_compile", what=what, cache=cache)
            if r is None:
                print(json.dumps({"bench": f"compile {label}, {cache} kernel cache", "error": "missing measurement"}))
                continue
            # compile_ms: the first call plus the wait for every background kernel build, less
            # one steady call (the run time the first call also contains).
            print(json.dumps({"bench": f"compile {label}, {cache} kernel cache, O{r['opt_level']}",
                              "spore_ms": round(r["compile_ms"], 1), "first_call_ms": round(r["first_call_ms"], 1),
                              "ready_ms": round(r["ready_ms"], 1), "steady_call_ms": round(r["steady_call_ms"], 1),
                              "compiler_invocations": r["compiler_invocations"], "target": f"<= {limit / 1e3:g} s",
                              "met": r["compile_ms"] <= limit}))


if __name__ == "__main__":
    main()
