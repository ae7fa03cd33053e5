"""`python -m tests.reliability.hostile [--only PATTERN ...] [-j N] [--list]`: run and print the table."""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from .registry import load
from .runner import children_cpu, families, listing, preflight, run_all, select, table


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.reliability.hostile")
    ap.add_argument("--only", action="append", default=[], metavar="PATTERN",
                    help="case ids matching this glob or substring (repeatable)")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="worker processes at a time (default 2)")
    ap.add_argument("--fresh", action="store_true",
                    help="a new interpreter per case instead of forking from a fork server (slower)")
    ap.add_argument("--list", action="store_true", help="list the selected cases and per-family counts")
    ap.add_argument("--out", help="folder for the report and the SPIR-V cache (default: a new temp folder)")
    args = ap.parse_args(argv)
    cases = select(load(), args.only)
    if args.list:
        for c in cases:
            print(f"{c.expect:6} {c.id}")
        print(families(cases))
        return 0
    if not cases:
        print("no case matches", file=sys.stderr)
        return 2
    broken = preflight()
    if broken:
        print(f"vyre_vk does not import, every case would fail the same way: {broken}", file=sys.stderr)
        return 2
    out = Path(args.out or tempfile.mkdtemp(prefix="vyre-hostile-"))
    t0, c0 = time.monotonic(), children_cpu()
    done = [0]

    def progress(r):
        done[0] += 1
        mark = "" if not r.failed else f"  <- {r.outcome}"
        print(f"[{done[0]:3}/{len(cases)}] {r.outcome:5} {r.seconds:5.1f}s {r.case.id}{mark}", file=sys.stderr, flush=True)

    results = run_all(cases, args.jobs, out, progress, fork_server=not args.fresh)
    text = table(results, time.monotonic() - t0, children_cpu() - c0)
    (out / "hostile-report.txt").write_text(text + "\n")
    (out / "hostile-cases.tsv").write_text(listing(results) + "\n")
    print(text)
    print(f"\nreport: {out / 'hostile-report.txt'}")
    return 1 if any(r.failed for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
