# SPDX-License-Identifier: Apache-2.0
"""PyTorch's side of the model-level figures (bench/model_bench.sh, beside bench/model_bench.cc):
  - ResNet-18 and MobileNetV2 inference, 224x224, batch 1 and 16, eval mode, torch.inference_mode,
    channels_last (PERF-NOTES.md's fair configuration: faster than NCHW here), the same weights as
    Spore and ONNX Runtime (bench/export_models.py's `make`);
  - one ResNet-18 training step, batch 16, 224x224, cross-entropy, SGD lr 0.01 momentum 0.9
    (zero_grad(set_to_none=True), forward, backward, step), timed in channels_last and in NCHW
    (the faster is the figure), with its peak memory;
  - the transformer encoder forward+backward: 4 post-norm nn.TransformerEncoderLayer, d_model 256,
    4 heads, ff 1024, ReLU, dropout 0, batch first, input (16, 128, 256), loss = mean(out^2),
    gradients of every parameter.
Run with /usr/bin/python3 and PERF-NOTES.md's environment (LD_LIBRARY_PATH=/usr/lib/x86_64-linux-
gnu/openblas-openmp ATEN_CPU_CAPABILITY=avx512), 2 threads. Arguments: the figures to run (resnet18,
mobilenet_v2, train, transformer; default all); `--quick` shortens the timing budgets. One JSON
line per figure: {"bench", ..., "ms": median, "min_ms", "runs"}.

Peak memory of the training step (the PyTorch CPU allocator keeps no statistics): the bytes of
the tensors alive when the step starts (parameters, buffers, momentum buffers, the batch; the
gradients are None after zero_grad(set_to_none=True)) plus the highest running sum of the
allocations and frees the profiler records during one step (profile_memory=True; memory events
in time order). This counts tensor memory only, as Spore's peak_bytes_in_use does; oneDNN's
scratchpads allocated outside c10's allocator are not seen. The process's RSS high-water mark
over its RSS at start (torch imported) is printed beside it ("rss_peak_over_start_bytes", which
also counts allocator caching and fragmentation) as a cross-check; model_bench.cc prints the same."""
import json
import pathlib
import sys
import time

import torch
import torch.nn as nn

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from export_models import make  # noqa: E402  the same weights as the exported ones


def median_ms(fn, budget_s, warmup=2, min_runs=5, max_runs=200):
    for _ in range(warmup):
        fn()
    times = []
    start = time.perf_counter()
    while len(times) < min_runs or (time.perf_counter() - start < budget_s and len(times) < max_runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2] * 1e3, times[0] * 1e3, len(times)


def emit(**kw):
    print(json.dumps(kw), flush=True)


def proc_status_bytes(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


RSS_AT_START = proc_status_bytes("VmRSS")  # torch imported, nothing allocated yet


def infer(name, quick):
    model = make(name).to(memory_format=torch.channels_last)
    for batch in (1, 16):
        x = torch.randn(batch, 3, 224, 224).contiguous(memory_format=torch.channels_last)
        with torch.inference_mode():
            budget = (1.0 if quick else 3.0) if batch == 1 else (2.0 if quick else 6.0)
            ms, best, runs = median_ms(lambda: model(x), budget)
        emit(bench="torch_infer", model=name, batch=batch, threads=torch.get_num_threads(), ms=ms, min_ms=best,
             runs=runs, memory_format="channels_last")


def tensor_bytes(ts):
    return sum(t.numel() * t.element_size() for t in ts)


def train_resnet18(quick):
    import torchvision
    loss_fn = nn.CrossEntropyLoss()

    def setup(fmt):
        torch.manual_seed(0)
        model = torchvision.models.resnet18().to(memory_format=fmt).train()
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        x = torch.randn(16, 3, 224, 224).contiguous(memory_format=fmt)
        y = torch.randint(0, 1000, (16,))

        def step():
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            return loss
        return model, opt, x, y, step

    # Both layouts; the faster one is PyTorch's time (channels_last is not always faster in
    # training with 1.13). The memory figures come from the channels_last run, measured before the
    # second model exists, so that the RSS cross-check sees one model.
    timed = {}
    model, opt, x, y, step = setup(torch.channels_last)
    timed["channels_last"] = median_ms(step, 3.0 if quick else 8.0)
    # Peak memory of one more (steady-state) step.
    opt.zero_grad(set_to_none=True)
    live = tensor_bytes(list(model.parameters()) + list(model.buffers()) + [x, y])
    live += tensor_bytes(s["momentum_buffer"] for s in opt.state.values() if "momentum_buffer" in s)
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]" and e.device_type() ==
              torch.autograd.DeviceType.CPU]
    events.sort(key=lambda e: e.start_us())  # stable: same-microsecond events keep their order
    cur = peak = 0
    for e in events:
        cur += e.nbytes()
        peak = max(peak, cur)
    rss = proc_status_bytes("VmHWM") - RSS_AT_START
    del model, opt, x, y, step, prof
    *_, step = setup(torch.contiguous_format)
    timed["contiguous"] = median_ms(step, 3.0 if quick else 8.0)
    best = min(timed, key=lambda k: timed[k][0])
    ms, best_ms, runs = timed[best]
    emit(bench="torch_train_resnet18", batch=16, threads=torch.get_num_threads(), ms=ms, min_ms=best_ms, runs=runs,
         memory_format=best, ms_by_format={k: v[0] for k, v in timed.items()},
         peak_bytes=live + peak, live_before_bytes=live, step_peak_alloc_bytes=peak, rss_peak_over_start_bytes=rss,
         memory_measured_in="channels_last")


def transformer(quick):
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(256, 4, dim_feedforward=1024, dropout=0.0, batch_first=True)
    model = nn.TransformerEncoder(layer, 4, enable_nested_tensor=False).train()
    x = torch.randn(16, 128, 256)
    params = list(model.parameters())

    def step():
        out = model(x)
        return torch.autograd.grad(out.square().mean(), params)

    ms, best, runs = median_ms(step, 3.0 if quick else 8.0)
    emit(bench="torch_transformer_fwd_bwd", layers=4, d_model=256, heads=4, ff=1024, seq=128, batch=16,
         threads=torch.get_num_threads(), ms=ms, min_ms=best, runs=runs)


def main():
    torch.set_num_threads(2)
    quick = "--quick" in sys.argv
    what = [a for a in sys.argv[1:] if not a.startswith("--")]
    for w in what or ["resnet18", "mobilenet_v2", "train", "transformer"]:
        if w in ("resnet18", "mobilenet_v2"):
            infer(w, quick)
        elif w == "train":
            train_resnet18(quick)
        elif w == "transformer":
            transformer(quick)
        else:
            sys.exit(f"torch_model_bench.py: unknown figure '{w}' (resnet18, mobilenet_v2, train, transformer)")


if __name__ == "__main__":
    main()
