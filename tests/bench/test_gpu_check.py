"""``scripts/gpu_check.sh`` (``workstation bench gpu``): without CUDA it says so and writes no
numbers; the datasheet lookup, the MFU arithmetic, the FLOP count of a training step and the
per-section bookkeeping, which need no GPU."""

from __future__ import annotations

import json
import subprocess
import types
from pathlib import Path

import pytest
import torch

from workstation.bench import gpu
from workstation.bench.train import random_batch
from workstation.ml.config import preset_config
from workstation.ml.model import TradingTransformer
from workstation.ml.targets import TargetSpec
from workstation.ml.trainer import head_weights

ROOT = Path(__file__).resolve().parents[2]


def numbers(value, key=None):
    """Every (key, number) in a JSON value; booleans are not numbers here."""
    if isinstance(value, dict):
        return [n for k, v in value.items() for n in numbers(v, k)]
    if isinstance(value, list):
        return [n for v in value for n in numbers(v, key)]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [(key, value)]
    return []


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA device")
def test_without_cuda_it_says_so_exits_0_and_writes_no_numbers(tmp_path):
    out = tmp_path / "x.json"
    done = subprocess.run(["bash", str(ROOT / "scripts" / "gpu_check.sh"), "--out", str(out)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "no CUDA device" in done.stdout and "CPU build" in done.stdout
    record = json.loads(out.read_text())
    assert record["cuda"] is False and record["finished"] is True
    assert "CPU build" in record["reason"] and record["sections"] == {}
    assert [key for key, _ in numbers(record)] == ["seconds"]  # how long it ran, nothing else


def test_datasheet_peaks_by_exact_device_name():
    assert gpu.datasheet("NVIDIA H100 80GB HBM3").label == "H100 SXM"
    assert gpu.datasheet("NVIDIA H100 PCIe").bf16 == 756.5e12
    assert gpu.datasheet("NVIDIA H200").bf16 == 989.4e12
    assert gpu.datasheet("NVIDIA H200 NVL").label == "H200 NVL"
    assert gpu.datasheet("NVIDIA A100-SXM4-80GB").fp32 == 19.5e12
    assert gpu.datasheet("NVIDIA L4").label == "L4"  # not L40 or L40S
    assert gpu.datasheet("NVIDIA L40S").label == "L40S"
    # no form factor, another chip, another card: no peak, never a near match
    for name in ("NVIDIA H100", "NVIDIA GH200 480GB", "NVIDIA A10", "NVIDIA GeForce RTX 4090 D",
                 "cpu", ""):
        assert gpu.datasheet(name) is None, name


def test_mfu_is_achieved_flops_over_the_peak_and_none_without_one():
    assert gpu.mfu(4e12, 0.5, 16e12) == 0.5
    assert gpu.mfu(4e12, 0.5, None) is None


def test_a_training_step_counts_forward_and_backward_of_every_matmul():
    b, t = 3, 24
    config = preset_config("tiny", seq_len=t)
    torch.manual_seed(0)
    model = TradingTransformer(config)
    counted = gpu.count_step_flops(model, random_batch(b, config, "cpu"),
                                   head_weights(TargetSpec(), "cpu"))
    assert all(p.grad is None for p in model.parameters())
    d, f, n_in, lags = config.d_model, config.d_ff, config.n_features, config.linear_lags
    heads = sum(model.classes) + 2  # the class heads, and the return's mean and log-variance
    tokens = b * t
    per_layer = 2 * tokens * (4 * d * d + 2 * d * f) + 4 * b * t * t * d  # + full attention
    inputs = 2 * tokens * n_in * (d + sum(model.classes) * lags)  # embedding, lagged readout
    # backward: twice the forward, but the inputs need no gradient of their own
    assert counted == 3 * (config.n_layers * per_layer + 2 * tokens * d * heads) + 2 * inputs


def test_each_section_records_its_error_and_one_over_budget_is_skipped(tmp_path):
    out = tmp_path / "x.json"
    check = gpu._Check(types.SimpleNamespace(out=str(out), presets="tiny", budget_s=60.0),
                       None)

    def broken(_check):
        raise RuntimeError("no kernel image")

    check.section("environment", broken)
    check.args.budget_s = 0.0
    check.section("training", broken)
    sections = json.loads(out.read_text())["sections"]
    assert sections["environment"]["error"] == "RuntimeError: no kernel image"
    assert sections["training"] == {"skipped": "under 40 s of the budget left"}
