#!/usr/bin/env bash
# The prepared GPU check: every CUDA measurement the docs promise (training step MFU per
# preset, checkpointing memory and time, bf16 against fp32, live inference latency, the
# gauges against torch.cuda and NVML) in at most 8 minutes, as one JSON file.
#
#   scripts/gpu_check.sh [--out FILE] [other `workstation bench gpu` options]
#
# FILE defaults to gpu_check.json and is rewritten after every section, so a run stopped by
# the time limit keeps what it measured. Without a CUDA device it prints "no CUDA device"
# and why, writes the file with no numbers and exits 0.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="$root/.venv/bin/python"
[ -x "$python" ] || python="$(command -v python3)"
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"
exec timeout --kill-after=15 480 "$python" -m workstation bench gpu "$@"
