#!/usr/bin/env bash
# What the generated stages' parts cost, one device call (bundle carried), ~7 min, most important
# first (a call cut off at its limit still returns $OUT):
#   bash tools/device_run.sh bash tools/bench/parts_ab.sh
# 1. glsl_edits.py: linear_relu and the seed op streamed (VYRE_VK_STREAM=1), every edit;
# 2. pass_ab.py --env VYRE_VK_SPEC_MULV=1 (products of non-chain values checked, not exact), streamed and not,
#    and --env VYRE_VK_SPEC_STATES=K (the checks' running minimum split K ways) on reduce_variance;
# 3. reduce_variance's generated chain with edits, then welford_chain.py's hand-written variants;
# 4. linear_relu at the 32,256 stream shape and not streamed, with edits; gemv_layouts.py's reference rows.
set -uo pipefail
OUT="${OUT:-bench-out}"
mkdir -p "$OUT"
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv
cd tools/bench
LR="nn::linear_relu@in_dim=4096,out_dim=4096"
MB="nn::mlp_backward@model_dim=2048,hidden_dim=8192"
VYRE_VK_STREAM=1 timeout 90 python3 glsl_edits.py "$LR" --warm-up 3 2>&1 | tee "$OUT/edits-stream.txt"
timeout 100 python3 pass_ab.py "$LR" "$MB" --env VYRE_VK_SPEC_MULV=1 --env VYRE_VK_SPEC_STATES=4 --warm-up 2 2>&1 | tee "$OUT/mulv-ab.txt"
timeout 60 python3 pass_ab.py "math::reduce_variance@n=16777216" --env VYRE_VK_SPEC_STATES=2 --env VYRE_VK_SPEC_STATES=4 \
  --warm-up 1 2>&1 | tee "$OUT/states-variance-ab.txt"
timeout 90 python3 welford_chain.py --reps 5 --warm-s 0.5 2>&1 | tee "$OUT/welford-chain.txt"
VYRE_VK_STREAM=1 timeout 100 python3 pass_ab.py "$LR" "$MB" --env VYRE_VK_SPEC_MULV=1 --warm-up 1 2>&1 | tee "$OUT/mulv-stream-ab.txt"
VYRE_VK_STREAM=1 timeout 100 python3 glsl_edits.py "$MB" --warm-up 1 2>&1 | tee "$OUT/edits-stream-seed.txt"
VYRE_VK_STREAM=1 VYRE_VK_SPEC_MULV=1 timeout 80 python3 pass_ab.py "$LR" --env VYRE_VK_STREAM_SHAPE=32,256 \
  --env VYRE_VK_STREAM_SHAPE=16,128 --env VYRE_VK_STREAM_SHAPE=8,128 --warm-up 1 2>&1 | tee "$OUT/stream-shapes-ab.txt"
timeout 80 python3 glsl_edits.py "math::reduce_variance@n=16777216" --edits raw,mul,add,raw+mul+add \
  --warm-up 1 2>&1 | tee "$OUT/edits-variance.txt"
VYRE_VK_STREAM=1 VYRE_VK_STREAM_SHAPE=32,256 timeout 60 python3 glsl_edits.py "$LR" \
  --edits peel,raw+mul+add+peel --warm-up 1 2>&1 | tee "$OUT/edits-stream32.txt"
timeout 80 python3 glsl_edits.py "$LR" --edits raw,mul,peel,raw+mul+add+peel --warm-up 1 2>&1 | tee "$OUT/edits-nostream.txt"
timeout 60 python3 gemv_layouts.py --warm-s 1 --reps 10 --stream 16,256,256 --stream 16,256,128 2>&1 | tee "$OUT/gemv-ref.txt"
