#!/usr/bin/env bash
# The next device call (bundle carried), under 9 min on an H200, most important first:
#   bash tools/device_run.sh bash tools/bench/next_call.sh
# 1. tools/bench/record.sh: the run of record of main's defaults (ops.py, latency, the seed op end to
#    end with weights resident, `vyre-vk run --all`);
# 2. pass_ab.py: the seed op and linear_relu with the stride-proven tile loads against the 2026-12-06
#    H100 figures (no knob: compare with docs/bench/h100-ops-2026-12-06.txt), VYRE_VK_SPEC_MULV=0 and
#    VYRE_VK_SPEC_PEEL=always on the ops they touch;
# 3. stage_times.py (which of the seed op's three stages holds its 0.4 ms) and glsl_edits.py on the seed op: what canonicalising loads (lite: NaN half only; raw: all) and the exact
#    re-run loops' code (nofb) still cost;
# 4. welford_chain.py: RN(1/n) loaded ahead / shared by the block's lanes (reduce_variance's chain).
set -uo pipefail
OUT="${OUT:-bench-out}"
mkdir -p "$OUT"
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
OUT="$OUT" bash tools/bench/record.sh
# at most 8 files come back: drop the ones the text files already hold
rm -rf "$OUT/lat" "$OUT/seed" "$OUT/doctor.txt" "$OUT/ops/ops.png"
cd tools/bench
timeout 90 python3 pass_ab.py "nn::mlp_backward@model_dim=2048,hidden_dim=8192" "nn::linear_relu@in_dim=4096,out_dim=4096" \
  "nn::flash_attention@seq_len=1024,head_dim=64" "nn::attention@seq_len=1024,head_dim=64" \
  --env VYRE_VK_SPEC_MULV=0 --env VYRE_VK_SPEC_PEEL=always --warm-up 2 2>&1 | tee "$OUT/defaults-ab.txt"
timeout 60 python3 stage_times.py --warm-s 1 "nn::mlp_backward@model_dim=2048,hidden_dim=8192" \
  "nn::linear_relu@in_dim=4096,out_dim=4096" 2>&1 | tee -a "$OUT/defaults-ab.txt"
timeout 80 python3 glsl_edits.py "nn::mlp_backward@model_dim=2048,hidden_dim=8192" --edits lite,nofb,raw,lite+nofb,raw+nofb \
  --warm-up 2 2>&1 | tee "$OUT/edits-seed.txt"
timeout 80 python3 welford_chain.py --reps 3 --warm-s 0.2 2>&1 | tee "$OUT/welford-chain.txt"
