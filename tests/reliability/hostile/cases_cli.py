"""The `vyre-vk` command line given bad arguments and a bad environment.

A refusal counts as typed only with exit code 2 (usage) or 3 (environment), a ``Fix:`` hint
on stderr and no traceback (common.run_cli)."""
from __future__ import annotations

from pathlib import Path

from .common import Wrong, add, case_tmp, run_cli

C = "cli"
OP = "vyre-libs::nn::relu"
NO_DRIVER = {"VK_ICD_FILENAMES": "/nonexistent.json", "VK_DRIVER_FILES": "/nonexistent.json"}


def cli(args, env=None, timeout=25.0):
    return lambda: run_cli(list(args), env, timeout)


def _tmp() -> Path:
    return case_tmp("cli-")


_TYPED = {
    "emit-unknown-builder-arg": ["emit", OP, "--arg", "foo=3", "-o", "{tmp}"],
    "emit-arg-without-equals": ["emit", OP, "--arg", "n", "-o", "{tmp}"],
    "emit-arg-not-an-integer": ["emit", OP, "--arg", "n=abc", "-o", "{tmp}"],
    "emit-unknown-op": ["emit", "no::such::op", "-o", "{tmp}"],
    "emit-missing-file": ["emit", "/nonexistent/program.json", "-o", "{tmp}"],
    "emit-out-is-a-file": ["emit", OP, "-o", "{tmp}/file"],
    "emit-device-class-bogus": ["emit", OP, "--explain", "--device-class", "bogus", "-o", "{tmp}"],
    "main-model-dim-negative": ["main", "--model-dim", "-1"],
    "main-hidden-dim-abc": ["main", "--hidden-dim", "abc"],
    "main-seed-negative": ["main", "--seed", "-1", "--model-dim", "2", "--hidden-dim", "2"],
    "demo-n-zero": ["demo", "-n", "0"],
    "demo-n-abc": ["demo", "-n", "abc"],
    "run-unknown-op": ["run", "no::op"],
    "unknown-subcommand": ["frobnicate"],
    "no-subcommand": [],
}


def _typed(args):
    def fn():
        tmp = _tmp()
        (tmp / "file").write_text("a file, not a folder")
        run_cli([a.replace("{tmp}", str(tmp)) for a in args], timeout=25)
    return fn


for _n, _a in _TYPED.items():
    add(f"{C}/args/{_n}", _typed(_a), "typed", timeout=30)
# relu with n=0 is a valid program with an empty result: emitting it, or a typed refusal.
add(f"{C}/args/emit-arg-zero", _typed(["emit", OP, "--arg", "n=0", "-o", "{tmp}"]), "either", timeout=30)

_ENV = {  # name: (env, args)
    "device-7": ({"VYRE_VK_DEVICE": "7"}, ["demo", "-n", "64"]),
    "device-abc": ({"VYRE_VK_DEVICE": "abc"}, ["demo", "-n", "64"]),
    "device-huge": ({"VYRE_VK_DEVICE": "99999999999999999999"}, ["main", "--model-dim", "2", "--hidden-dim", "2"]),
    "spin-wait-abc": ({"VYRE_VK_SPIN_WAIT_US": "abc"}, ["demo", "-n", "64"]),
    "no-driver-main": (NO_DRIVER, ["main", "--model-dim", "2", "--hidden-dim", "2"]),
    "no-driver-demo": (NO_DRIVER, ["demo", "-n", "64"]),
    "no-driver-run": (NO_DRIVER, ["run", OP]),
    "no-driver-doctor": (NO_DRIVER, ["doctor"]),
}
for _n, (_e, _a) in _ENV.items():
    add(f"{C}/env/{_n}", cli(_a, _e), "typed", timeout=30)
add(f"{C}/env/spin-wait-negative", cli(["demo", "-n", "64"], {"VYRE_VK_SPIN_WAIT_US": "-5"}), "either", timeout=30)


def emit_ok(env=None, extra=()):
    tmp = _tmp()
    run_cli(["emit", OP, "-o", str(tmp / "out"), *extra], env, timeout=25)
    made = sorted(p.name for p in (tmp / "out").iterdir()) if (tmp / "out").is_dir() else []
    if not any(n.endswith(".spv") for n in made) or not any(n.endswith(".comp") for n in made):
        raise Wrong(f"emit exited 0 but wrote {made}")


add(f"{C}/env/no-driver-emit", lambda: emit_ok(NO_DRIVER), "either", timeout=30,
    note="emit needs no device: the files, or a typed refusal")
add(f"{C}/good/emit", lambda: emit_ok(), timeout=30)
add(f"{C}/good/emit-validate-disasm", lambda: emit_ok(extra=("--validate", "--disasm")), "either", timeout=30,
    note="either: spirv-dis/spirv-val may be missing (a typed exit 3)")
add(f"{C}/good/run", cli(["run", OP]), timeout=30)
add(f"{C}/good/doctor", cli(["doctor"]), timeout=30)


def emit_name(name: str) -> None:
    """--name with path parts (or none): a typed refusal; a file outside -o is wrong in any case."""
    tmp = _tmp()
    out = tmp / "a" / "b" / "out"
    before = {p for p in tmp.rglob("*")}
    try:
        run_cli(["emit", OP, "-o", str(out), "--name", name], timeout=25)
    finally:
        escaped = [p for p in set(tmp.rglob("*")) - before if p.is_file() and out not in p.parents]
        abs_target = Path(name + ".comp")
        if abs_target.is_absolute() and abs_target.exists():
            escaped.append(abs_target)
            for suffix in (".comp", ".spv"):
                Path(name + suffix).unlink(missing_ok=True)
        if escaped:
            raise Wrong(f"--name {name!r} wrote outside -o: {[str(p) for p in escaped]}")


for _n in ["../../x", "/tmp/vyre-hostile-abs", ""]:
    add(f"{C}/args/emit-name-{_n.replace('/', '_').replace('.', 'dot') or 'empty'}", lambda n=_n: emit_name(n),
        "typed", timeout=30, note="a file stem with path parts: refused, and nothing written outside -o")
