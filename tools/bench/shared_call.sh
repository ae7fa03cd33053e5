#!/usr/bin/env bash
# A device call (bundle carried), under 9 min on an H200:
#   bash tools/device_run.sh bash tools/bench/shared_call.sh
# 1. pass_ab.py: reduce_variance 2^24 with the workgroup's shared reciprocals and raw summed loads
#    (defaults) against VYRE_VK_SPEC_SHARED_RCP=0 (each lane its own RN(1/n)), VYRE_VK_SPEC_RAW=0
#    (loads flushed) and both off;
# 2. tools/bench/record.sh: the run of record of main's defaults (ops.py, latency, the seed op end to
#    end, `vyre-vk run --all`), keeping to the 8 files that come back.
set -uo pipefail
OUT="${OUT:-bench-out}"
mkdir -p "$OUT"
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
(cd tools/bench && timeout 150 python3 pass_ab.py "math::reduce_variance@n=16777216" \
  --env VYRE_VK_SPEC_SHARED_RCP=0 --env VYRE_VK_SPEC_RAW=0 --env VYRE_VK_SPEC_SHARED_RCP=0+VYRE_VK_SPEC_RAW=0 \
  --warm-up 2 2>&1 | tee "$OUT/shared-ab.txt")
OUT="$OUT" bash tools/bench/record.sh
rm -rf "$OUT/lat" "$OUT/seed" "$OUT/doctor.txt" "$OUT/ops/ops.png"
