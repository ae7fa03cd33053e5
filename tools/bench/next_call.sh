#!/usr/bin/env bash
# The next device call (bundle carried), about 5 min:
#   bash tools/device_run.sh bash tools/bench/next_call.sh
# The run of record of main's defaults on an H200 (issue 15 needs its numbers from the H200; the last
# records, 2026-12-06b/c, landed on H100s): tools/bench/record.sh (ops.py, latency, the seed op end to
# end with its weights resident, `vyre-vk run --all`), keeping to the 8 files that come back. If the call
# lands on an H100, the numbers still say whether main moved; rerun on an H200.
set -uo pipefail
OUT="${OUT:-bench-out}"
mkdir -p "$OUT"
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
OUT="$OUT" bash tools/bench/record.sh
rm -rf "$OUT/lat" "$OUT/seed" "$OUT/doctor.txt" "$OUT/ops/ops.png"
