#!/usr/bin/env bash
# The open questions of issue 15 in one device call (bundle carried), most important first (a call
# cut off at its time limit still returns what $OUT holds), about 7 minutes on an H100:
#   bash tools/device_run.sh bash tools/bench/stream_ab.sh
# 1. pass_ab.py with VYRE_VK_STREAM=1 and --drop stream: the ops the stream pass fires on, streamed
#    or not, alternated in one process, results checked equal on the GPU first (the class's shape).
#    Then reduce_variance with and without VYRE_VK_SPEC_DIV_U32 (the same, in one process).
# 2. gemv_layouts.py: hand-written GEMV chains, the streamed rows (C chains per workgroup of L lanes,
#    tiles through workgroup memory) against the chain-per-lane rows and the scalar-block variants.
# 3. welford_chain.py: reduce_variance's chain by hand (canonicalised loads, a narrow division window).
# 4. run.py latency with and without VYRE_VK_GLOBAL_BARRIERS=1 (kp patch 0012), barrier_cost.py.
# 5. pass_ab.py again with the shapes fixed at 32,256 and 16,256.
# Files under $OUT (default bench-out); copy them to docs/bench/<card>-*-<date>.* afterwards.
set -uo pipefail
OUT="${OUT:-bench-out}"
mkdir -p "$OUT"
PROBE=bundle/bin/vk_submit_probe
OPS=("nn::linear_relu@in_dim=4096,out_dim=4096" "nn::mlp_backward@model_dim=2048,hidden_dim=8192"
     "nn::attention@seq_len=1024,head_dim=64" "nn::gqa_attention@n_q_heads=8,n_kv_heads=2,seq_len=512,head_dim=64"
     "nn::linear_4bit@in_dim=4096,out_dim=4096")

ab() {  # ab SHAPE: pass_ab.py over OPS with the stream pass on and dropped ("": the class's shape)
  (cd tools/bench && VYRE_VK_STREAM=1 VYRE_VK_STREAM_SHAPE=$1 timeout 130 python3 pass_ab.py "${OPS[@]}" \
     --drop stream --warm-up 5) 2>&1 | tee "$OUT/stream-ab-${1:-class}.txt"
}

nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv
ab ""
# reduce_variance's chain without the narrower window for its division by float(n) (VYRE_VK_SPEC_DIV_U32)
(cd tools/bench && timeout 60 python3 pass_ab.py "math::reduce_variance@n=16777216" --env VYRE_VK_SPEC_DIV_U32=0 \
   --warm-up 3) 2>&1 | tee "$OUT/div-u32-ab.txt"
(cd tools/bench && timeout 100 python3 gemv_layouts.py --warm-s 1) 2>&1 | tee "$OUT/gemv-layouts.txt"
(cd tools/bench && timeout 80 python3 welford_chain.py) 2>&1 | tee "$OUT/welford-chain.txt"
for g in 0 1; do
  VYRE_VK_GLOBAL_BARRIERS=$g timeout 45 python3 tools/bench/run.py --skip elementwise,seed,compile,wgpu \
    --probe "$PROBE" --out "$OUT/lat-g$g" 2>&1 | grep "^  latency" | sed "s/^/global=$g /" | tee -a "$OUT/latency-ab.txt"
done
(cd tools/bench && timeout 45 python3 barrier_cost.py) 2>&1 | tee "$OUT/barrier-cost.txt"
ab 16,256
ab 32,256
