"""``workstation bench gpu`` (``scripts/gpu_check.sh``): every CUDA measurement the docs
promise, in one bounded run, written to one JSON file (``--out``, after every section).

Sections, in this order (the quick ones first), each timed, each recording its own error
instead of ending the run, none started once the ``--budget-s`` is (nearly) spent:

- ``environment``: torch, CUDA, cuDNN, the device, its driver, the datasheet peaks
  (``DATASHEET``, by the exact device name; an unlisted device has none, so no MFU) and a
  measured bf16 matmul peak;
- ``latency``: the live ``Predictor.predict`` (features, window, bf16) per preset, and
  ``OnlineLearner.on_closed_candle`` predicting (F6) and learning (Shift+F6), one new candle
  per call: p50 / p95 / p99;
- ``bf16_parity``: one model, one init, the same batches, trained with and without
  ``mixed_precision``: the first step's loss and gradient relative difference, and the loss
  curves of the next steps;
- ``gauges``: what the training workspace's gauges read (``ml.device.memory_stats`` and
  ``UtilisationSampler``, the widget's own summary line where Qt loads) while a ``Trainer``
  trains in a worker thread, against ``torch.cuda`` and NVML (``pynvml`` when installed,
  else ``nvidia-smi``; the record says which);
- ``checkpointing``: the ``Trainer`` step uncompiled, gradient checkpointing off and on: the
  peak of ``torch.cuda.max_memory_allocated`` and the step time;
- ``training``: per preset, the ``Trainer`` step as ``ml.job`` builds it (its loss, fused
  AdamW, bf16 autocast and ``torch.compile``): median step time, tokens/s, the FLOPs of one
  step (counted by ``FlopCounterMode``, and the 6 N + 12 L T d estimate), MFU against the
  datasheet's dense bf16 peak, and the speed-up over ``bench train``'s naive loop;
- ``targets``: docs/performance.md's targets beside the values measured.

Without CUDA it prints "no CUDA device" and why, writes the file with no section and exits 0.
"""

from __future__ import annotations

import importlib
import json
import re
import shutil
import statistics
import subprocess
import threading
import time
import traceback
import types
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..atomic import atomic_write_text
from ..errors import WorkstationError
from .train import _latencies, _median_step_seconds, _train_case, matmul_peak, step_flops

# (label, torch.cuda.get_device_name pattern matched whole, ignoring case, dense bf16 tensor
# FLOP/s, fp32 non-tensor FLOP/s) from NVIDIA's datasheets; sparsity figures halved.
DATASHEET: tuple[tuple[str, str, float, float], ...] = (
    ("H100 SXM", r"NVIDIA H100( 80GB)? (HBM3|SXM5?)( 80GB)?", 989.4e12, 66.9e12),
    ("H100 PCIe", r"NVIDIA H100 PCIe", 756.5e12, 51.2e12),
    ("H100 NVL", r"NVIDIA H100 NVL", 835.5e12, 60.0e12),
    ("H200 SXM", r"NVIDIA H200", 989.4e12, 66.9e12),
    ("H200 NVL", r"NVIDIA H200 NVL", 835.5e12, 60.0e12),
    ("A100", r"NVIDIA A100[- ].*", 312e12, 19.5e12),
    ("L40S", r"NVIDIA L40S", 362.05e12, 91.6e12),
    ("L40", r"NVIDIA L40", 181.05e12, 90.5e12),
    ("L4", r"NVIDIA L4", 121e12, 30.3e12),
    ("RTX 4090", r"NVIDIA GeForce RTX 4090", 165.2e12, 82.6e12),
)
PRESETS = ("tiny", "small", "base", "large")
BATCH, SEQ_LEN = 64, 200
_NEEDS_S = {"training": 40.0, "checkpointing": 20.0, "bf16_parity": 15.0, "latency": 15.0,
            "gauges": 15.0}  # the least budget left a section (or a preset) starts with


@dataclass(frozen=True)
class Peaks:
    """A device's datasheet entry."""

    label: str
    bf16: float
    fp32: float


def datasheet(name: str) -> Peaks | None:
    """The datasheet entry of a device named ``name``; None for a name not listed."""
    return next((Peaks(label, bf16, fp32) for label, pattern, bf16, fp32 in DATASHEET
                 if re.fullmatch(pattern, name.strip(), re.IGNORECASE)), None)


def mfu(flops_per_step: float, seconds_per_step: float, peak: float | None) -> float | None:
    """Model FLOPs utilisation: achieved FLOP/s over ``peak`` (None without a peak)."""
    return flops_per_step / seconds_per_step / peak if peak else None


def count_step_flops(model, batch, weights, classes=None, autocast=None) -> int:
    """FLOPs of one training step's forward, loss and backward, as ``FlopCounterMode`` counts
    matmuls and convolutions; attention runs in SDPA's math kernel here, whose matmuls it
    counts on every device (full, not causal). The model's gradients are left cleared."""
    import contextlib

    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode

    from ..ml.trainer import compute_loss

    counter = FlopCounterMode(display=False)
    with counter, sdpa_kernel(SDPBackend.MATH):
        with (autocast or contextlib.nullcontext)():
            out = model(batch.x)
        compute_loss(out, batch, weights, classes).total.backward()
    model.zero_grad(set_to_none=True)
    return int(counter.get_total_flops())


def no_cuda_reason() -> str | None:
    """Why there is no CUDA device to measure (None: there is one)."""
    try:
        import torch
    except ImportError as exc:
        return f"torch cannot be imported ({exc})"
    if torch.version.cuda is None:
        return f"torch {torch.__version__} is a CPU build (torch.version.cuda is None)"
    if not torch.cuda.is_available():
        return (f"torch.cuda.is_available() is False (torch {torch.__version__}, built for "
                f"CUDA {torch.version.cuda}: no driver or no device visible)")
    return None


def register(names) -> None:
    parser = names.add_parser("gpu", help="every CUDA measurement the docs promise, as one "
                                          "JSON file (scripts/gpu_check.sh)")
    parser.add_argument("--out", default="gpu_check.json", help="the JSON file (gpu_check.json)")
    parser.add_argument("--device", default="cuda", help="cuda | cuda:N (cuda)")
    parser.add_argument("--presets", default=",".join(PRESETS),
                        help=f"model presets, comma-separated ({','.join(PRESETS)})")
    parser.add_argument("--steps", type=int, default=20, help="timed training steps (20)")
    parser.add_argument("--runs", type=int, default=200, help="timed live predictions (200)")
    parser.add_argument("--budget-s", type=float, default=420.0,
                        help="seconds after which no section starts (420)")
    parser.set_defaults(func=run)


class _Check:
    """The run's settings, its clock and its record, written after every section."""

    def __init__(self, args, device):
        self.args, self.device = args, device
        self.presets = [p.strip() for p in args.presets.split(",") if p.strip()]
        self.started = time.monotonic()
        self.record: dict[str, Any] = {
            "cuda": device is not None, "reason": None, "sections": {},
            "started": datetime.now(UTC).isoformat(timespec="seconds"), "seconds": None,
            "finished": False}
        self.peak_bf16: float | None = None
        self.peak_measured: float | None = None

    def left(self) -> float:
        return self.args.budget_s - (time.monotonic() - self.started)

    def write(self) -> None:
        self.record["seconds"] = round(time.monotonic() - self.started, 1)
        atomic_write_text(self.args.out, json.dumps(self.record, indent=1) + "\n")

    def section(self, name: str, measure: Callable[[_Check], dict]) -> None:
        sections = self.record["sections"]
        needs = _NEEDS_S.get(name, 0.0)
        if self.left() < needs:
            sections[name] = {"skipped": f"under {needs:.0f} s of the budget left"}
        else:
            began = time.monotonic()
            try:
                sections[name] = measure(self)
            except Exception as exc:  # noqa: BLE001 - one section's failure is its record
                sections[name] = {"error": f"{type(exc).__name__}: {exc}",
                                  "traceback": traceback.format_exc(limit=4)}
            sections[name]["seconds"] = round(time.monotonic() - began, 1)
            _free(self.device)
        self.write()
        print(f"{name}: {_summary(sections[name])}", flush=True)


def run(args) -> int:
    reason = no_cuda_reason()
    if reason is not None:
        check = _Check(args, None)
        check.record["reason"] = reason
        check.record["finished"] = True
        check.write()
        print(f"no CUDA device: {reason}; nothing was measured ({args.out} has no numbers)")
        return 0
    from ..ml.device import prepare_thread, resolve_device

    device = resolve_device(args.device)
    if device.type != "cuda":
        raise WorkstationError(f"bench gpu measures a CUDA device, not {device}")
    prepare_thread(device)
    check = _Check(args, device)
    try:
        # the quick sections first: what compiles (training) has whatever budget is left
        for name, measure in (("environment", _environment), ("latency", _latency),
                              ("bf16_parity", _parity), ("gauges", _gauges),
                              ("checkpointing", _checkpointing), ("training", _training)):
            check.section(name, measure)
        check.section("targets", _targets)
        check.record["finished"] = True
    finally:  # a run stopped part-way (Ctrl-C, the script's timeout) keeps what it measured
        check.write()
    print(f"wrote {args.out} in {check.record['seconds']:.0f} s")
    return 0


def _summary(section: dict) -> str:
    for key in ("error", "skipped"):
        if key in section:
            return f"{key}: {section[key]}".splitlines()[0]
    return f"done in {section['seconds']:.0f} s"


def _free(device) -> None:
    import gc

    import torch

    gc.collect()
    if device is not None:
        torch.cuda.empty_cache()


# -- sections ---------------------------------------------------------------------------------
def _environment(check: _Check) -> dict:
    import torch

    device = check.device
    props = torch.cuda.get_device_properties(device)
    sheet = datasheet(props.name)
    check.peak_bf16 = sheet.bf16 if sheet else None
    check.peak_measured, kind = matmul_peak(device)
    nvml = _Nvml(device)
    return {
        "torch": torch.__version__, "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(), "device": props.name,
        "capability": f"{props.major}.{props.minor}", "memory_gib": props.total_memory / 2**30,
        "multiprocessors": props.multi_processor_count, "driver": nvml.driver(),
        "nvml_source": nvml.source, "nvml_error": nvml.error,
        "datasheet": sheet.label if sheet else None,
        "datasheet_bf16_tflops": sheet.bf16 / 1e12 if sheet else None,
        "datasheet_fp32_tflops": sheet.fp32 / 1e12 if sheet else None,
        "measured_tflops": check.peak_measured / 1e12, "measured_kind": kind,
        "measured_over_datasheet": check.peak_measured / sheet.bf16 if sheet else None,
        "matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
    }


def _product_trainer(device, preset: str, model: dict | None = None,
                     train: dict | None = None):
    """The product's ``Trainer``, set up as ``ml.job`` builds it on demo candles (no marks,
    nothing saved), and one batch of its own windows."""
    from ..market.demo import demo_candles
    from ..market.series import SeriesKey
    from ..market.timeframes import ONE_MINUTE
    from ..ml import job

    plan = job.plan(job.TrainingRequest(
        preset=preset, model_overrides={"seq_len": SEQ_LEN, **(model or {})},
        train_overrides={"batch_size": BATCH, **(train or {})}, device=str(device),
        use_annotations=False), None)
    candles = demo_candles((BATCH + 30) * SEQ_LEN, ONE_MINUTE, seed=0,
                           end_ts=1_700_000_000_000)
    trainer = job.build(plan, candles, SeriesKey("demo", "DEMO/USDT", ONE_MINUTE), store=None,
                        annotations_db=None, on_event=lambda event: None,
                        stop=threading.Event(), save=False).trainer
    trainer._setup()
    trainer.begin_steps()
    starts = trainer._train_windows.starts(0, seed=0).to(device)[:BATCH]
    return trainer, trainer.series.gather(starts, SEQ_LEN)


def _time_steps(check: _Check, trainer, batch) -> dict:
    """Warm-up (compilation included), then the median step time and the allocator's peak."""
    import torch

    from ..ml.device import synchronize

    device = check.device

    def step() -> None:
        trainer._train_step(batch)

    began = time.perf_counter()
    step()
    synchronize(device)
    first = time.perf_counter() - began
    for _ in range(2):
        step()
    synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)
    seconds = _median_step_seconds(step, check.args.steps, device)
    return {"first_step_s": first, "ms_per_step": seconds * 1000,
            "peak_mem_mb": torch.cuda.max_memory_allocated(device) / 2**20,
            "compiled": trainer._forward is not trainer._net()}


def _training(check: _Check) -> dict:
    out: dict[str, Any] = {"batch": BATCH, "seq_len": SEQ_LEN,
                           "peak": "datasheet dense bf16", "presets": {}}
    for preset in check.presets:
        if check.left() < _NEEDS_S["training"]:
            out["presets"][preset] = {"skipped": "over the time budget"}
            continue
        try:
            out["presets"][preset] = _train_preset(check, preset)
        except Exception as exc:  # noqa: BLE001 - one preset's failure is its record
            out["presets"][preset] = {"error": f"{type(exc).__name__}: {exc}"}
        _free(check.device)
    return out


def _train_preset(check: _Check, preset: str) -> dict:
    """The product's step, then ``bench train``'s naive reference loop (fp32, attention
    written out, unfused AdamW; only its step time is kept) at the same size."""
    from ..ml.config import preset_config

    trainer, batch = _product_trainer(check.device, preset)
    model = trainer._net()
    timed = _time_steps(check, trainer, batch)
    seconds = timed["ms_per_step"] / 1000
    counted = count_step_flops(model, batch, trainer._weights, trainer._classes,
                               trainer._autocast)
    params = model.n_params()
    step_6n = step_flops(model, BATCH * SEQ_LEN)
    tokens = BATCH * SEQ_LEN
    del trainer, model
    _free(check.device)
    naive = _train_case("reference", types.SimpleNamespace(
        preset=preset, batch_size=BATCH, warmup=2, steps=check.args.steps), check.device,
        preset_config(preset, seq_len=SEQ_LEN), check.peak_measured or 1.0, "")["ms_per_step"]
    return dict(timed, naive_ms_per_step=naive, speedup_vs_naive=naive / timed["ms_per_step"],
                params=params, tokens_per_s=tokens / seconds,
                step_tflop=counted / 1e12, step_tflop_6n=step_6n / 1e12,
                achieved_tflops=counted / seconds / 1e12,
                mfu=mfu(counted, seconds, check.peak_bf16),
                mfu_of_measured_peak=mfu(counted, seconds, check.peak_measured))


def _checkpointing(check: _Check) -> dict:
    out: dict[str, Any] = {"compile": "off", "presets": {}}
    for preset in [p for p in check.presets if p in ("base", "large")] or check.presets[-1:]:
        cases = {}
        for on in (False, True):
            trainer, batch = _product_trainer(check.device, preset,
                                              {"use_gradient_checkpointing": on},
                                              {"compile": "off"})
            cases["on" if on else "off"] = _time_steps(check, trainer, batch)
            del trainer, batch
            _free(check.device)
        off, on_ = cases["off"], cases["on"]
        out["presets"][preset] = dict(
            cases, memory_ratio=on_["peak_mem_mb"] / off["peak_mem_mb"],
            time_ratio=on_["ms_per_step"] / off["ms_per_step"])
    return out


def _parity(check: _Check, preset: str = "small", steps: int = 20) -> dict:
    import torch

    from ..ml.trainer import _TOTAL, compute_loss

    runs = {}
    for name, bf16 in (("bf16", True), ("fp32", False)):
        trainer, batch = _product_trainer(check.device, preset, {"dropout": 0.0},
                                          {"compile": "off", "mixed_precision": bf16})
        model = trainer._net()
        with trainer._autocast():
            out = model(batch.x)
        loss = compute_loss(out, batch, trainer._weights, trainer._classes).total
        loss.backward()
        grads = torch.cat([p.grad.float().flatten() for p in model.parameters()
                           if p.grad is not None])
        model.zero_grad(set_to_none=True)
        starts = trainer._train_windows.starts(0, seed=0).to(check.device)
        curve = []
        for i in range(steps):
            before = float(trainer._acc[_TOTAL])
            trainer._train_step(trainer.series.gather(starts[i * BATCH:(i + 1) * BATCH],
                                                      SEQ_LEN))
            curve.append(float(trainer._acc[_TOTAL]) - before)
        runs[name] = (float(loss.detach()), grads, curve)
        del trainer, batch, model, out
    (l16, g16, c16), (l32, g32, c32) = runs["bf16"], runs["fp32"]
    curve_diff = [abs(a - b) / abs(b) for a, b in zip(c16, c32, strict=True)]
    return {"preset": preset, "dropout": 0.0, "compile": "off",
            "loss_bf16": l16, "loss_fp32": l32, "loss_rel_diff": abs(l16 - l32) / abs(l32),
            "grad_rel_diff": float((g16 - g32).norm() / g32.norm()),
            "grad_cosine": float(torch.nn.functional.cosine_similarity(g16, g32, dim=0)),
            "curve_bf16": c16, "curve_fp32": c32, "curve_max_rel_diff": max(curve_diff),
            "curve_last_rel_diff": curve_diff[-1]}


def _percentiles(times_ms: list[float]) -> dict:
    q = statistics.quantiles(times_ms, n=100, method="inclusive")
    return {"calls": len(times_ms), "p50_ms": statistics.median(times_ms), "p95_ms": q[94],
            "p99_ms": q[98], "max_ms": max(times_ms)}


def _latency(check: _Check) -> dict:
    import torch

    from ..market.demo import demo_candles
    from ..market.timeframes import ONE_MINUTE
    from ..ml.config import preset_config
    from ..ml.features import FeatureSpec
    from ..ml.online import OnlineLearner, Predictor
    from ..ml.targets import TargetSpec

    device, runs = check.device, check.args.runs
    spec = FeatureSpec()
    extra = max(5, runs // 20) + runs  # _latencies' warm-up calls, then the timed ones
    candles = demo_candles(4 * SEQ_LEN + spec.warmup + extra, ONE_MINUTE, seed=0,
                           end_ts=1_700_000_000_000)
    out: dict[str, Any] = {"seq_len": SEQ_LEN, "predictor": {}}
    for preset in check.presets:
        torch.manual_seed(0)
        config = preset_config(preset, seq_len=SEQ_LEN, n_features=spec.n_features)
        predictor = Predictor(config, spec, TargetSpec(), device)
        out["predictor"][preset] = _percentiles(
            _latencies(lambda p=predictor: p.predict(candles), runs, device))
        del predictor
    preset = "base" if "base" in check.presets else check.presets[0]
    config = preset_config(preset, seq_len=SEQ_LEN, n_features=spec.n_features)
    for name, train in (("on_closed_candle", False), ("on_closed_candle+train", True)):
        learner = OnlineLearner(config, TargetSpec(), feature_spec=spec, device=device,
                                train=train)
        first = len(candles) - extra
        calls = iter(range(first, len(candles) + 1))
        times = _latencies(lambda le=learner, c=calls: le.on_closed_candle(
            candles.slice(0, next(c))), runs, device)
        out[name] = dict(_percentiles(times), preset=preset)
        learner.close()
        del learner
    return out


def _targets(check: _Check) -> dict:
    """The targets of docs/performance.md beside what the sections measured (``met`` None:
    not measured)."""
    sections = check.record["sections"]

    def at(*path):
        value: Any = sections
        for key in path:
            value = value.get(key, {}) if isinstance(value, dict) else {}
        return value if isinstance(value, (int, float)) else None

    checkpointed = "large" if at("checkpointing", "presets", "large", "memory_ratio") else "base"
    rows = (("large MFU of the datasheet peak", ("training", "presets", "large", "mfu"),
             0.40, True),
            ("large speed-up over the naive loop",
             ("training", "presets", "large", "speedup_vs_naive"), 9.0, True),
            (f"{checkpointed} checkpointing peak memory / plain",
             ("checkpointing", "presets", checkpointed, "memory_ratio"), 0.45, False),
            (f"{checkpointed} checkpointing step time / plain",
             ("checkpointing", "presets", checkpointed, "time_ratio"), 1.30, False),
            ("base live inference p99 ms", ("latency", "predictor", "base", "p99_ms"), 3.0,
             False))
    out = {}
    for name, path, target, at_least in rows:
        value = at(*path)
        out[name] = {"value": value, "target": f"{'>=' if at_least else '<='} {target:g}",
                     "met": None if value is None else
                     (value >= target if at_least else value <= target)}
    return out


class _Nvml:
    """NVML's view of one device: ``pynvml`` when installed, else ``nvidia-smi``; a reading
    that fails says why instead of giving numbers."""

    _SMI = ("memory.used", "memory.total", "utilization.gpu", "driver_version")

    def __init__(self, device):
        import torch

        self.error: str | None = None
        self.source: str | None = None
        uuid = str(getattr(torch.cuda.get_device_properties(device), "uuid", "") or "")
        # by UUID, so that CUDA_VISIBLE_DEVICES cannot make it another GPU than torch's
        self.id = (uuid if uuid.startswith("GPU-") else f"GPU-{uuid}") if uuid else \
            str(device.index or 0)
        try:
            pynvml = importlib.import_module("pynvml")  # nvidia-ml-py, the "gpu" extra
            pynvml.nvmlInit()
            self._handle = (pynvml.nvmlDeviceGetHandleByUUID(self.id) if uuid else
                            pynvml.nvmlDeviceGetHandleByIndex(int(self.id)))
            self._nvml, self.source = pynvml, "pynvml"
        except Exception as exc:  # noqa: BLE001 - NVML is optional: nvidia-smi, or say why
            self.error = f"pynvml: {type(exc).__name__}: {exc}"
            if shutil.which("nvidia-smi"):
                self.source = "nvidia-smi"

    def _smi(self) -> list[str]:
        text = subprocess.run(
            ["nvidia-smi", f"--id={self.id}", f"--query-gpu={','.join(self._SMI)}",
             "--format=csv,noheader,nounits"], capture_output=True, text=True, check=True,
            timeout=10).stdout
        return [part.strip() for part in text.strip().splitlines()[0].split(",")]

    def driver(self) -> str | None:
        try:
            if self.source == "pynvml":
                version = self._nvml.nvmlSystemGetDriverVersion()
                return version.decode() if isinstance(version, bytes) else str(version)
            return self._smi()[3] if self.source == "nvidia-smi" else None
        except Exception as exc:  # noqa: BLE001 - recorded beside the other readings
            self.error = f"{self.source}: {type(exc).__name__}: {exc}"
            return None

    def sample(self) -> dict:
        """Used and total memory (MiB) and utilisation (%) as NVML says them, or why not."""
        try:
            if self.source == "pynvml":
                mem = self._nvml.nvmlDeviceGetMemoryInfo(self._handle)
                use = self._nvml.nvmlDeviceGetUtilizationRates(self._handle).gpu
                return {"used_mb": mem.used / 2**20, "total_mb": mem.total / 2**20,
                        "utilisation": float(use)}
            if self.source == "nvidia-smi":
                used, total, use, _ = self._smi()
                return {"used_mb": float(used), "total_mb": float(total),
                        "utilisation": float(use)}
            return {"error": self.error or "no NVML"}
        except Exception as exc:  # noqa: BLE001 - recorded in place of the numbers
            return {"error": f"{self.source}: {type(exc).__name__}: {exc}"}


def _gauges(check: _Check, seconds: float = 6.0) -> dict:
    """The gauges' numbers while a ``Trainer`` trains in a worker thread (as in the window),
    then once more with the device idle, beside ``torch.cuda`` and NVML at the same moment."""
    import torch

    from ..ml.device import UtilisationSampler, memory_stats, prepare_thread

    device = check.device
    spec = str(device)
    nvml = _Nvml(device)
    sampler = UtilisationSampler()
    busy = threading.Event()
    done = threading.Event()
    failed: list[str] = []

    def train() -> None:
        try:
            prepare_thread(device)
            trainer, batch = _product_trainer(device, "small", train={"compile": "off"})
            busy.set()
            while not done.is_set():
                trainer._train_step(batch)
                torch.cuda.synchronize(device)
        except Exception as exc:  # noqa: BLE001 - recorded; the sampling loop sees it
            failed.append(f"{type(exc).__name__}: {exc}")
        finally:
            busy.set()

    def read() -> dict:
        app = memory_stats(spec)
        return {"app": {"allocated_mb": app.allocated_mb, "reserved_mb": app.reserved_mb,
                        "peak_mb": app.peak_mb, "total_mb": app.total_mb,
                        "utilisation": sampler.sample(spec)},
                "torch": {"allocated_mb": torch.cuda.memory_allocated(device) / 2**20,
                          "reserved_mb": torch.cuda.memory_reserved(device) / 2**20,
                          "peak_mb": torch.cuda.max_memory_allocated(device) / 2**20,
                          "total_mb": torch.cuda.mem_get_info(device)[1] / 2**20},
                "nvml": nvml.sample()}

    worker = threading.Thread(target=train, name="gpu-check-trainer", daemon=True)
    worker.start()
    busy.wait(120)
    samples = []
    end = time.monotonic() + seconds
    while not failed and time.monotonic() < end:
        time.sleep(0.5)  # the gauges sample about once a second; NVML averages over < 1 s
        samples.append(read())
    done.set()
    worker.join(60)
    if failed:
        raise RuntimeError(f"the training thread failed: {failed[0]}")
    torch.cuda.synchronize(device)
    idle = read()
    use = [(s["app"]["utilisation"], s["nvml"].get("utilisation")) for s in samples]
    both = [(a, n) for a, n in use if a is not None and n is not None]
    return {
        "nvml_source": nvml.source, "nvml_device": nvml.id, "nvml_error": nvml.error,
        "app_utilisation_error": sampler.gpu_error, "busy": samples, "idle": idle,
        "widget_summary": _widget_summary(spec),
        "utilisation_median_app": _median([a for a, _ in use if a is not None]),
        "utilisation_median_nvml": _median([n for _, n in use if n is not None]),
        "utilisation_max_abs_diff": max((abs(a - n) for a, n in both), default=None),
        "idle_allocated_diff_mb": idle["app"]["allocated_mb"] - idle["torch"]["allocated_mb"],
        "idle_reserved_diff_mb": idle["app"]["reserved_mb"] - idle["torch"]["reserved_mb"],
        "idle_nvml_used_minus_reserved_mb": (idle["nvml"]["used_mb"] - idle["torch"][
            "reserved_mb"]) if "used_mb" in idle["nvml"] else None,
    }


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _widget_summary(spec: str) -> str:
    """The line the training workspace's ``DeviceGauges`` shows for ``spec`` (offscreen), or
    why Qt could not show it."""
    import os

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    try:
        from PySide6.QtWidgets import QApplication

        from ..ui.training.gauges import DeviceGauges

        app = QApplication.instance() or QApplication([])
        gauges = DeviceGauges()
        gauges.set_device(spec, spec)
        gauges.sample()
        summary = gauges.summary
        gauges.deleteLater()
        app.processEvents()
        return summary
    except Exception as exc:  # noqa: BLE001 - Qt is optional on a GPU machine: say why
        return f"not shown: {type(exc).__name__}: {exc}"

