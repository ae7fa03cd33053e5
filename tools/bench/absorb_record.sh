#!/usr/bin/env bash
# One device call (bundle carried), ~9 min: absorbed products and the first iteration peeled only where
# a chain starts from a literal (VYRE_VK_SPEC_ABSORB=1, VYRE_VK_SPEC_PEEL=auto), alone and with the
# stream pass, A/B against the defaults on linear_relu and the seed op; then tools/bench/record.sh
# with those knobs set (the record of the defaults they would become).
#   bash tools/device_run.sh bash tools/bench/absorb_record.sh
set -uo pipefail
OUT="${OUT:-bench-out}"
mkdir -p "$OUT"
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv
K="VYRE_VK_SPEC_PEEL=auto+VYRE_VK_SPEC_ABSORB=1"
(cd tools/bench && timeout 150 python3 pass_ab.py "nn::linear_relu@in_dim=4096,out_dim=4096" \
  "nn::mlp_backward@model_dim=2048,hidden_dim=8192" --env "$K" --env "$K+VYRE_VK_STREAM=1" \
  --env "$K+VYRE_VK_STREAM=1+VYRE_VK_SPEC_STATES=4" --env VYRE_VK_STREAM=1 --warm-up 3 2>&1 | tee "$OUT/absorb-ab.txt")
VYRE_VK_SPEC_PEEL=auto VYRE_VK_SPEC_ABSORB=1 VYRE_VK_STREAM=1 OUT="$OUT" bash tools/bench/record.sh
