#!/usr/bin/env bash
# The next device call (bundle carried), about 5 min:
#   bash tools/device_run.sh bash tools/bench/next_call.sh
# The run of record of main's defaults (the latest, on the H200: docs/bench/h200-*-2026-12-06c.*):
# tools/bench/record.sh (ops.py, latency, the seed op end to end with its weights resident, `vyre-vk run
# --all`), keeping to the 8 files that come back. Copy them to docs/bench/<card>-*-<date>.* afterwards;
# timings compare only between runs on the same kind of card.
set -uo pipefail
OUT="${OUT:-bench-out}"
mkdir -p "$OUT"
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
OUT="$OUT" bash tools/bench/record.sh
rm -rf "$OUT/lat" "$OUT/seed" "$OUT/doctor.txt" "$OUT/ops/ops.png"
