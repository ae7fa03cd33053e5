#!/usr/bin/env bash
# The run of record for the op benchmark, on the GPU machine (bundle carried):
#   bash tools/device_run.sh bash tools/bench/record.sh
# nvidia-smi, `vyre-vk doctor`, one tools/bench/ops.py run, tools/bench/run.py runs (latency; the seed op end
# to end with its weights resident, 2048x8192, optimised) and
# `vyre-vk run --all`, each under a time limit, their files under $OUT (default bench-out). About
# 5 minutes on an H100; copy the files to docs/bench/<card>-*-<date>.* afterwards.
set -uo pipefail
OUT="${OUT:-bench-out}"
mkdir -p "$OUT"
PROBE=bundle/bin/vk_submit_probe
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv
timeout 50 python3 -m vyre_vk doctor 2>&1 | tee "$OUT/doctor.txt" | tail -6
timeout 300 python3 tools/bench/ops.py --warm-up 20 --equivalents-only --fast --probe "$PROBE" --out "$OUT/ops" 2>&1 \
  | tee "$OUT/ops.txt" | tail -40
timeout 60 python3 tools/bench/run.py --skip elementwise,seed,compile,wgpu --probe "$PROBE" --out "$OUT/lat" 2>&1 \
  | grep "^  latency" | tee "$OUT/lat.txt"
timeout 90 python3 tools/bench/run.py --skip latency,elementwise,compile,wgpu --seed-sizes 2048x8192 --seed-modes on \
  --reps 10 --out "$OUT/seed" 2>&1 | grep "^  seed" | tee "$OUT/seed.txt"
timeout 150 python3 -m vyre_vk run --all 2>&1 | tee "$OUT/run-all.txt" | tail -4
