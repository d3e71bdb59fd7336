"""``workstation bench train`` and ``workstation bench infer``: training step and prediction
speed of the ``TradingTransformer``, against a naive reference measured in the same run.

``train`` cases, same sizes and the same loss:
- ``reference``: fp32, hand-written attention ``softmax(QK^T / sqrt(d) + mask) V`` with the
  mask built per call, unfused AdamW (``foreach=False, fused=False``);
- ``optimized``: what the ``Trainer`` does (SDPA ``is_causal``, bf16 autocast and fused AdamW
  on CUDA, fp32 and foreach AdamW on CPU);
- ``optimized+checkpointing``: the same with gradient checkpointing.

MFU = (6 N + 12 L T d) * tokens per second / peak, where the peak is a matmul measured here:
bf16 on CUDA, fp32 on CPU (the CPU figure says so). Memory: on CUDA the allocator's peak for
the case; on CPU the process peak RSS (a high-water mark of the whole run). ``activation_mb``
is what one forward pass keeps alive for backward (tensors autograd saved, and the inputs
checkpointed blocks recompute from; weights excluded), measured on both.

``train`` also times ``trainer``: the product's own ``Trainer`` step (its model, loss,
optimizer, autocast and, on CUDA by default, ``torch.compile``). Beside the measured peak,
``mfu_datasheet`` is against the device's dense bf16 datasheet peak where it is known
(``bench.gpu.DATASHEET``: 989 TFLOP/s for an H100 / H200 SXM, 756 for an H100 PCIe); None on
the CPU.

``infer`` cases: latency of one window's prediction (features already computed; input copied
to the device and the outputs back), the same with the features computed from candles, the
reference model, and ``predictor``: the product's own live ``Predictor`` (features, window,
bf16 on CUDA, every head's probabilities back on the host); p50 and p99 over ``--runs``.
"""

from __future__ import annotations

import math
import statistics
import time

from ..display import significant
from . import report

# torch is imported inside the functions: the CLI imports every bench module to build its
# parser, and `workstation --help` should not wait for torch.

_DEFAULT_BATCH = {"tiny": 64, "small": 64, "base": 64, "large": 64}


def register(bench_sub) -> None:
    train = bench_sub.add_parser("train", help="training step speed, MFU and memory of the "
                                               "transformer vs. a naive reference")
    _common(train)
    train.add_argument("--batch-size", type=int, help="windows per step (default 64)")
    train.add_argument("--steps", type=int, default=10, help="timed steps per case (10)")
    train.add_argument("--warmup", type=int, default=3, help="untimed steps first (3)")
    train.set_defaults(func=run_train)
    infer = bench_sub.add_parser("infer", help="latency of one window's prediction (p50/p99)")
    _common(infer)
    infer.add_argument("--runs", type=int, default=200, help="timed predictions per case (200)")
    infer.set_defaults(func=run_infer)


def _common(parser) -> None:
    parser.add_argument("--preset", default="tiny", help="tiny, small, base or large (tiny)")
    parser.add_argument("--device", default="auto", help="auto | cpu | cuda | cuda:N")
    parser.add_argument("--seq-len", type=int, help="candles per window (default 200)")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads (2)")
    parser.add_argument("--json", action="store_true", help="one JSON object per case")


def reference_model(config):
    """The model with attention written out, ``softmax(QK^T / sqrt(d) + mask) V``, the causal
    mask built on every call."""
    import torch
    import torch.nn.functional as F

    from ..ml.model import CausalSelfAttention, TradingTransformer

    class NaiveSelfAttention(CausalSelfAttention):
        def attend(self, q, k, v):
            t = q.shape[-2]
            mask = torch.full((t, t), float("-inf"), device=q.device).triu(1)
            scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + mask
            return F.dropout(torch.softmax(scores, dim=-1), self.dropout, self.training) @ v

    model = TradingTransformer(config)
    for block in model.blocks:
        block.attn = NaiveSelfAttention(config)
    return model


def step_flops(model, tokens: int) -> float:
    """Training FLOPs of one step: 6 N per token for the weights, 12 L T d for attention."""
    c = model.config
    return (6.0 * model.n_params() + 12.0 * c.n_layers * c.seq_len * c.d_model) * tokens


def matmul_peak(device) -> tuple[float, str]:
    """Measured matmul FLOP/s: bf16 on CUDA, fp32 on CPU."""
    import torch

    from ..ml.device import synchronize

    if device.type == "cuda":
        n, dtype, kind, reps = 8192, torch.bfloat16, "bf16 matmul (measured)", 20
    else:
        n, dtype, kind, reps = 1024, torch.float32, "fp32 matmul, CPU (measured)", 5
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    for _ in range(2):
        a @ b
    synchronize(device)
    best = math.inf
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(reps):
            a @ b
        synchronize(device)
        best = min(best, (time.perf_counter() - start) / reps)
    return 2.0 * n ** 3 / best, kind


def datasheet_peak(device) -> float | None:
    """The device's dense bf16 peak from its datasheet (None: a CPU, or a GPU not listed)."""
    if device.type != "cuda":
        return None
    import torch

    from .gpu import datasheet

    peaks = datasheet(torch.cuda.get_device_name(device))
    return peaks.bf16 if peaks else None


def random_batch(batch: int, config, device):
    import torch

    from ..ml.dataset import WindowBatch

    shape = (batch, config.seq_len)
    g = torch.Generator().manual_seed(0)
    return WindowBatch(
        x=torch.randn(*shape, config.n_features, generator=g).to(device),
        candle=torch.randint(0, 3, shape, generator=g).to(device),
        trend=torch.randint(0, 3, shape, generator=g).to(device),
        position=torch.randint(-1, 3, shape, generator=g).to(device),
        regime=torch.randint(-1, 3, shape, generator=g).to(device),
        ret=(torch.randn(*shape, generator=g) * 10).to(device),
        ret_mask=torch.ones(shape, dtype=torch.bool).to(device))


def _activation_mb(model, x, autocast) -> float:
    from ..ml.model import activation_bytes

    with autocast():
        return activation_bytes(model, x) / 2**20


def _train_case(name: str, args, device, config, peak: float, peak_kind: str) -> dict:
    import torch

    from ..ml.device import memory_stats, reset_peak_memory, synchronize
    from ..ml.model import TradingTransformer
    from ..ml.targets import TargetSpec
    from ..ml.trainer import compute_loss, head_weights

    torch.manual_seed(0)
    reference = name == "reference"
    model = (reference_model(config) if reference else TradingTransformer(config)).to(device)
    model.train()
    if reference:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=False, fused=False)
    elif device.type == "cuda":
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)

    def autocast():
        if device.type == "cuda" and not reference:
            return torch.autocast("cuda", dtype=torch.bfloat16)
        return torch.autocast("cpu", enabled=False)

    batch = random_batch(args.batch_size, config, device)
    weights = head_weights(TargetSpec(), device)

    def step():
        with autocast():
            out = model(batch.x)
        compute_loss(out, batch, weights).total.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(args.warmup):
        step()
    synchronize(device)
    reset_peak_memory(device)
    seconds = _median_step_seconds(step, args.steps, device)
    mem = memory_stats(device)
    return _step_case(name, args, device, model, seconds, mem, peak, peak_kind,
                      _activation_mb(model, batch.x, autocast))


def _step_case(name, args, device, model, seconds, mem, peak, peak_kind, activation_mb):
    tokens = args.batch_size * model.config.seq_len
    flops = step_flops(model, tokens) / seconds
    datasheet = datasheet_peak(device)
    return {
        "case": name, "device": str(device), "preset": args.preset,
        "batch_size": args.batch_size, "seq_len": model.config.seq_len,
        "params": model.n_params(), "ms_per_step": seconds * 1000,
        "samples_per_s": args.batch_size / seconds, "tokens_per_s": tokens / seconds,
        "mfu": flops / peak, "peak_tflops": peak / 1e12, "peak_kind": peak_kind,
        "mfu_datasheet": flops / datasheet if datasheet else None,
        "datasheet_tflops": datasheet / 1e12 if datasheet else None,
        "peak_mem_mb": mem.peak_mb,
        "peak_mem_kind": "torch max_memory_allocated" if device.type == "cuda"
        else "process peak RSS",
        "activation_mb": activation_mb,
    }


def _trainer_case(args, device, peak: float, peak_kind: str) -> dict:
    """The product's own ``Trainer`` step as ``ml.job`` builds it (its model, loss, optimizer,
    autocast and, on CUDA by default, ``torch.compile``) on real-shaped demo windows."""
    import threading

    from ..market.demo import demo_candles
    from ..market.series import SeriesKey
    from ..market.timeframes import ONE_MINUTE
    from ..ml import job
    from ..ml.device import memory_stats, reset_peak_memory, synchronize

    plan = job.plan(job.TrainingRequest(
        preset=args.preset, model_overrides={"seq_len": args.seq_len},
        train_overrides={"batch_size": args.batch_size, "cpu_threads": args.threads},
        device=str(device), use_annotations=False), None)
    seq_len = plan.model_config.seq_len
    n = (args.batch_size + 10) * seq_len + 20 * seq_len  # a batch of whole windows, and more
    candles = demo_candles(n, ONE_MINUTE, seed=0, end_ts=1_700_000_000_000)
    trainer = job.build(plan, candles, SeriesKey("demo", "DEMO/USDT", ONE_MINUTE), store=None,
                        annotations_db=None, on_event=lambda event: None,
                        stop=threading.Event(), save=False).trainer
    trainer._setup()
    trainer.begin_steps()
    starts = trainer._train_windows.starts(0, seed=0).to(device)[:args.batch_size]
    batch = trainer.series.gather(starts, seq_len)

    def step():
        trainer._train_step(batch)

    for _ in range(args.warmup):  # on CUDA this includes torch.compile's compilation
        step()
    synchronize(device)
    reset_peak_memory(device)
    seconds = _median_step_seconds(step, args.steps, device)
    mem = memory_stats(device)
    model = trainer._net()
    case = _step_case("trainer", args, device, model, seconds, mem, peak, peak_kind,
                      _activation_mb(model, batch.x, trainer._autocast))
    case["compiled"] = trainer._forward is not model
    return case


def _median_step_seconds(step, steps: int, device) -> float:
    """Seconds per step: the median over up to 5 chunks of consecutive steps (one sync per
    chunk), which a busy machine disturbs less than one long mean."""
    from ..ml.device import synchronize

    chunk = max(1, steps // 5)
    per_step = []
    for first in range(0, steps, chunk):
        n = min(chunk, steps - first)
        start = time.perf_counter()
        for _ in range(n):
            step()
        synchronize(device)
        per_step.append((time.perf_counter() - start) / n)
    return statistics.median(per_step)


def run_train(args) -> int:
    import torch

    from ..ml.config import preset_config
    from ..ml.device import resolve_device

    device = resolve_device(args.device)
    if device.type == "cpu":
        torch.set_num_threads(args.threads)
    preset_config(args.preset)  # an unknown preset is an error before any measuring
    args.batch_size = args.batch_size or _DEFAULT_BATCH.get(args.preset, 64)
    peak, peak_kind = matmul_peak(device)
    cases = []
    for name, checkpointing in (("reference", False), ("optimized", False),
                                ("optimized+checkpointing", True)):
        config = preset_config(args.preset, seq_len=args.seq_len,
                               use_gradient_checkpointing=checkpointing)
        cases.append(_train_case(name, args, device, config, peak, peak_kind))
    cases.append(_trainer_case(args, device, peak, peak_kind))
    datasheet = datasheet_peak(device)
    sheet = (f"; datasheet {datasheet / 1e12:.0f} TFLOP/s dense bf16" if datasheet else
             "; no datasheet peak for this device")
    return _finish(cases, "ms_per_step", args.json,
                   ("ms_per_step", "samples_per_s", "mfu", "mfu_datasheet", "peak_mem_mb",
                    "activation_mb"),
                   f"{args.preset} on {device}, batch {args.batch_size} x "
                   f"{cases[0]['seq_len']} candles; measured peak {peak / 1e12:.2f} TFLOP/s "
                   f"({peak_kind}){sheet}")


def _latencies(fn, runs: int, device) -> list[float]:
    from ..ml.device import synchronize

    for _ in range(max(5, runs // 20)):
        fn()
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        synchronize(device)
        out.append((time.perf_counter() - start) * 1000)
    return out


def run_infer(args) -> int:
    import torch

    from ..market.demo import demo_candles
    from ..market.timeframes import ONE_MINUTE
    from ..ml.config import preset_config
    from ..ml.device import memory_stats, reset_peak_memory, resolve_device
    from ..ml.features import FeatureSpec, make_features
    from ..ml.model import TradingTransformer

    device = resolve_device(args.device)
    if device.type == "cpu":
        torch.set_num_threads(args.threads)
    config = preset_config(args.preset, seq_len=args.seq_len)
    spec = FeatureSpec()
    candles = demo_candles(config.seq_len + spec.warmup, ONE_MINUTE, seed=0,
                           end_ts=1_700_000_000_000)
    peak, peak_kind = matmul_peak(device)
    window = torch.from_numpy(make_features(candles, spec)[-config.seq_len:])[None]

    def autocast(reference: bool):
        if device.type == "cuda" and not reference:
            return torch.autocast("cuda", dtype=torch.bfloat16)
        return torch.autocast("cpu", enabled=False)

    def predictor(model, reference: bool, with_features: bool):
        def predict():
            x = (torch.from_numpy(make_features(candles, spec)[-config.seq_len:])[None]
                 if with_features else window)
            with torch.inference_mode(), autocast(reference):
                out = model(x.to(device))
                return (out.candle_logits[0, -1].softmax(-1).cpu(),
                        out.trend_logits[0, -1].softmax(-1).cpu(),
                        out.return_mean[0, -1].cpu())
        return predict

    cases = []
    torch.manual_seed(0)
    for name, reference, with_features in (("reference", True, False), ("infer", False, False),
                                           ("infer+features", False, True)):
        model = (reference_model(config) if reference else TradingTransformer(config))
        model = model.to(device).eval()
        reset_peak_memory(device)
        times = _latencies(predictor(model, reference, with_features), args.runs, device)
        q = statistics.quantiles(times, n=100, method="inclusive")
        mean_s = statistics.fmean(times) / 1000
        flops = step_flops(model, config.seq_len) / 3  # forward only
        cases.append({
            "case": name, "device": str(device), "preset": args.preset,
            "seq_len": config.seq_len, "runs": args.runs,
            "p50_ms": statistics.median(times), "p99_ms": q[98], "max_ms": max(times),
            "samples_per_s": 1.0 / mean_s, "mfu": flops / mean_s / peak,
            "peak_tflops": peak / 1e12, "peak_kind": peak_kind,
            "peak_mem_mb": memory_stats(device).peak_mb,
        })
    from ..ml.online import Predictor
    from ..ml.targets import TargetSpec

    torch.manual_seed(0)
    product = Predictor(config, spec, TargetSpec(), device)  # bf16 on CUDA, as live mode
    reset_peak_memory(device)
    times = _latencies(lambda: product.predict(candles), args.runs, device)
    q = statistics.quantiles(times, n=100, method="inclusive")
    mean_s = statistics.fmean(times) / 1000
    cases.append({
        "case": "predictor", "device": str(device), "preset": args.preset,
        "seq_len": config.seq_len, "runs": args.runs,
        "p50_ms": statistics.median(times), "p99_ms": q[98], "max_ms": max(times),
        "samples_per_s": 1.0 / mean_s,
        "mfu": step_flops(product.model, config.seq_len) / 3 / mean_s / peak,
        "peak_tflops": peak / 1e12, "peak_kind": peak_kind,
        "peak_mem_mb": memory_stats(device).peak_mb,
    })
    return _finish(cases, "p50_ms", args.json,
                   ("p50_ms", "p99_ms", "samples_per_s", "peak_mem_mb", "mfu"),
                   f"{args.preset} on {device}, one window of {config.seq_len} candles; peak "
                   f"{peak / 1e12:.2f} TFLOP/s ({peak_kind})")


def _finish(cases: list[dict], key: str, as_json: bool, columns: tuple[str, ...],
            title: str) -> int:
    """Add each case's speed-up over the first (the reference) by ``key``, then report."""
    ref = cases[0][key]
    for case in cases:
        case["speedup_vs_reference"] = ref / case[key]
    columns = columns + ("speedup_vs_reference",)

    def table(cases: list[dict]) -> None:
        print(title)
        width = max(len(c["case"]) for c in cases) + 2
        print("case".ljust(width) + "".join(col.rjust(22) for col in columns))
        for case in cases:
            print(case["case"].ljust(width)
                  + "".join(significant(case[col]).rjust(22) for col in columns))

    return report(cases, as_json, table)
