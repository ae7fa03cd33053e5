"""Run what ``vyre-vk emit`` wrote with plain Kompute: the artefacts stand alone.

This module imports only ``kp`` and NumPy (no IR, no optimiser, no lowering, no compiler,
no vyre-vk runtime): everything it does comes from ``manifest.json`` (docs/manifest.md) and
the ``.spv`` files next to it. Per size signature it makes one kp tensor per buffer name
(scratch and trap words zero-filled, binding gaps filled with 1-word dummies because kp binds
tensor k at binding k), one Algorithm per stage with the manifest's grid rule, and one
sequence: upload, the manifest's dispatches and compute barriers, download. Later runs with
the same sizes write the staging memory and replay that sequence.

Example (shell, then Python)::

    $ vyre-vk emit vyre-libs::nn::mlp_backward -o mlp
    $ python -m vyre_vk.aot mlp          # the manifest's summary

    >>> from vyre_vk import aot
    >>> with aot.load("mlp") as mod:                                   # doctest: +SKIP
    ...     out = mod.run({"x": x, "w1": w1, "b1": b1, "w2": w2, "grad_out": g})
    >>> out["grad_x"]                                                  # doctest: +SKIP
"""
from __future__ import annotations

import json
import math
import sys
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Union

import numpy as np

from vyre_vk.errors import InputError, VyreError  # a leaf module: nothing of the compiler

SCHEMA_VERSION = 1
_KP_DTYPES = ("float32", "uint32", "int32")  # what kp 0.9's tensor_t takes (bool is a u32 word)
_BYTE_DTYPES = ("uint8", "int8")  # u8/i8 buffers: their bytes, zero-padded to whole words (docs/manifest.md)
_CPU_DEVICES = ("llvmpipe", "lavapipe", "swiftshader")
MAX_PLANS = 8


class ManifestError(VyreError, ValueError):
    """The folder holds no manifest this runner reads, or its files are missing or malformed."""


class AotTrapError(VyreError, RuntimeError):
    """An invocation trapped; ``stage``, ``code``, ``reason``, ``invocation``, ``address`` say where."""

    def __init__(self, stage: int, code: int, reason: str, invocation: int, address: int) -> None:
        self.stage, self.code, self.reason, self.invocation, self.address = stage, code, reason, invocation, address
        super().__init__(f"stage {stage} trapped: {reason} (code {code}) at invocation {invocation}, "
                         f"address {address}. Fix: guard the operation so active invocations never reach it.")


def formula_grid(stage: Mapping, counts: Mapping[str, int], scratch: list = ()) -> list[int]:
    """One stage's workgroup grid by the manifest's ``grid_rule`` for bound element counts.

    >>> formula_grid({"local_size": [256, 1, 1], "grid": {"size_from": ["y"], "factor": 4}}, {"y": 5000})
    [5, 1, 1]
    """
    counts = {**counts, **{s["name"]: s["count"] for s in scratch}}
    g = stage["grid"]
    n = max([1] + [int(counts[name]) for name in g["size_from"]])
    local = stage["local_size"]
    total = max(1, -(-n // max(1, local[0] * local[1] * local[2])))
    active = [a for a, s in enumerate(local) if s > 1]
    if len(active) <= 1:
        grid = [total, 1, 1]
    else:
        base = math.ceil(total ** (1.0 / len(active)))
        grid = [base if a in active else 1 for a in range(3)]
    grid[0] = -(-grid[0] // g["factor"])
    return grid


def canonical_f32(a: np.ndarray) -> np.ndarray:
    """The manifest's canonicalisation rule: NaN -> 0x7FC00000, subnormal -> signed zero.

    >>> canonical_f32(np.array([1e-40, -1e-40, np.nan, 2.0], np.float32)).view(np.uint32).tolist()
    [0, 2147483648, 2143289344, 1073741824]
    """
    bits = a.view(np.uint32)
    exp, mant = bits & 0x7F800000, bits & 0x007FFFFF
    nan, sub = (exp == 0x7F800000) & (mant != 0), (exp == 0) & (mant != 0)
    if not (nan.any() or sub.any()):  # the common case: no copy
        return a
    bits = bits.copy()
    bits[sub] &= 0x80000000
    bits[nan] = 0x7FC00000
    return bits.view(np.float32)


def read_manifest(folder: Union[str, Path]) -> tuple[Path, dict]:
    """``folder``'s manifest (or a manifest file itself), checked for this runner's schema."""
    path = Path(folder)
    path = path / "manifest.json" if path.is_dir() else path
    try:
        manifest = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise ManifestError(f"cannot read {path}: {e}. Fix: pass a folder `vyre-vk emit -o` wrote.") from None
    if not isinstance(manifest, dict) or manifest.get("format") != "vyre-vk-manifest":
        raise ManifestError(f"{path} is not a vyre-vk manifest. Fix: pass a folder `vyre-vk emit -o` wrote.")
    if manifest.get("schema_version") != SCHEMA_VERSION:
        raise ManifestError(f"{path} has schema_version {manifest.get('schema_version')!r}; this runner reads "
                            f"{SCHEMA_VERSION}. Fix: emit it again with this vyre-vk.")
    return path.parent, manifest


def _words(a: np.ndarray) -> np.ndarray:
    """What kp uploads for an array: itself, or a byte array's bytes zero-padded to whole uint32 words."""
    a = np.ascontiguousarray(a)
    if a.dtype.name not in _BYTE_DTYPES:
        return a
    words = np.zeros(max(1, -(-a.size // 4)), np.uint32)
    words.view(np.uint8)[:a.size] = a.view(np.uint8)
    return words


def _host_view(words: np.ndarray, dtype: np.dtype, count: int) -> np.ndarray:
    """A tensor's mapped memory as the buffer's array (a byte buffer: its first `count` bytes)."""
    return words.view(dtype)[:count] if dtype.name in _BYTE_DTYPES else words


@dataclass
class _Plan:
    objects: list                            # kp objects to destroy, sequence first
    sequence: Any
    staging: dict                            # name -> mapped host view (uploads)
    results: dict                            # name -> mapped host view (downloads)
    traps: list = field(default_factory=list)  # (stage, mapped host view)

    def destroy(self) -> None:
        for obj in self.objects:
            obj.destroy()


class Module:
    """An emitted program, loaded: call :meth:`run` with arrays by buffer name, get results back."""

    def __init__(self, folder: Path, manifest: dict, spirv: list, manager: Any = None, device: int = 0) -> None:
        self.folder, self.manifest, self.spirv = folder, manifest, spirv
        self.buffers = manifest["buffers"]
        self.stages = manifest["stages"]
        self.scratch = manifest["scratch"]
        self.inputs = [b["name"] for b in self.buffers if b["role"] in ("input", "inout")]
        self.results = [b for b in self.buffers if b["role"] in ("inout", "output")]
        self._canon = set(manifest["canonicalization"]["on_upload"])
        self._dtypes = {b["name"]: np.dtype(b["storage"]) for b in self.buffers}
        self._zeros = {b["name"]: np.zeros(b["count"], self._dtypes[b["name"]]) for b in self.buffers
                       if b["role"] == "output"}
        self._mgr, self._own_mgr, self._device = manager, manager is None, device
        self._device_checked = False
        self._plans: "OrderedDict[tuple, _Plan]" = OrderedDict()
        self._lock = threading.Lock()  # kp objects are not thread-safe
        self._empty = not self.buffers and not self.scratch and not any(s["trap"] for s in self.stages)

    # ---- manager and plans
    def _manager(self) -> Any:
        import kp

        if self._mgr is None:
            self._mgr = kp.Manager(self._device)
            name = str(self._mgr.get_device_properties().get("device_name", ""))
            # Polling the fence steals a core from a CPU driver; on a GPU it saves ~30 us a submission.
            kp.set_spin_wait_us(0 if any(c in name.lower() for c in _CPU_DEVICES) else 200)
        if not self._device_checked:  # a manager made here or passed in
            props = self._mgr.get_device_properties()
            name = str(props.get("device_name", ""))
            if self.manifest["options"]["limits"].get("float64") and not props.get("shader_float64"):
                raise ManifestError(
                    f"{self.folder} was emitted for a device with shaderFloat64 (exp and tanh in double), and "
                    f"{name} does not report it. Fix: emit again with --float64 off (or run it through "
                    "vyre_vk.run, which probes the device).")
            if self.manifest["options"]["limits"].get("storage_8bit") and not props.get("storage_buffer_8bit"):
                raise ManifestError(
                    f"{self.folder} was emitted for a device with 8-bit storage (byte stores a byte at a time), and "
                    f"{name} does not report it. Fix: emit again with --storage-8bit off (or run it through "
                    "vyre_vk.run, which reads the device's features).")
            need = max((int(s.get("shared_memory_bytes", 0)) for s in self.stages), default=0)
            have = int(props.get("max_compute_shared_memory_size", need))
            if need > have:
                raise ManifestError(
                    f"{self.folder} has a stage that needs {need:,} bytes of workgroup memory, and {name}'s "
                    f"maxComputeSharedMemorySize is {have:,}. Fix: emit again with this device's --device-class "
                    "(or run it through vyre_vk.run, which plans for the device's limits).")
            if self.manifest.get("fma_probe"):
                self._check_fma(name)
            if self.manifest.get("native_probe"):
                self._check_native(name)
            self._device_checked = True
        return self._mgr

    def _run_probe(self, probe: Mapping, what: str) -> tuple[np.ndarray, np.ndarray]:
        """Dispatch a folder's probe (its .spv over the cases file's a and b): (the results the
        cases file expects, the device's)."""
        import kp

        mgr, n = self._mgr, int(probe["count"])
        try:
            cases = np.frombuffer((self.folder / probe["cases"]).read_bytes(), "<f4").astype(np.float32)
            words = (self.folder / probe["spirv"]).read_bytes()
        except OSError as e:
            raise ManifestError(f"cannot read the {what} probe: {e}. Fix: emit the folder again.") from None
        if cases.size != 3 * n:
            raise ManifestError(f"{probe['cases']} holds {cases.size} floats, not {3 * n}. Fix: emit the folder again.")
        empty = np.zeros(0, np.uint32)
        tensors = [mgr.tensor_t(cases[:n].copy()), mgr.tensor_t(cases[n:2 * n].copy()), mgr.tensor_t(np.zeros(n, np.float32))]
        algo = mgr.algorithm(tensors, words, [n // int(probe["local_size"]), 1, 1], empty, empty)
        seq = mgr.sequence()
        seq.record(kp.OpTensorSyncDevice(tensors)).record(kp.OpAlgoDispatch(algo, empty))
        seq.record(kp.OpTensorSyncLocal(tensors[2:])).eval()
        got = np.asarray(tensors[2].data()).view(np.float32)[:n].copy()
        for obj in (seq, algo, *tensors):
            obj.destroy()
        return cases[2 * n:], got

    def _check_native(self, device_name: str) -> None:
        """Fast-precision shaders that use device builtins: measure them with the folder's probe."""
        from vyre_vk.ulps import worst_by_block

        probe = self.manifest["native_probe"]
        want, got = self._run_probe(probe, "native-math")
        worst = worst_by_block(got, want, probe["order"], int(probe["per_function"]))
        outside = [f for f in probe["functions"] if worst[f] > probe["windows"][f]]
        if outside:
            measured = ", ".join(f"{f} {worst[f]} ULP (window {probe['windows'][f]})" for f in probe["order"])
            raise ManifestError(
                f"{self.folder} was emitted to use the builtin {', '.join(outside)} in the fast precision, and "
                f"{device_name}'s is outside vyre's window ({measured}). Fix: emit again with --native-math "
                f"{','.join(f for f in probe['functions'] if f not in outside) or 'none'} (or run it through "
                "vyre_vk.run, which probes the device).")

    def _check_fma(self, device_name: str) -> None:
        """These shaders divide with fma() (emitted for a fused device): run the folder's probe."""
        want, got = self._run_probe(self.manifest["fma_probe"], "fma")
        n = want.size
        correct = int(np.count_nonzero(got.view(np.uint32) == want.view(np.uint32)))
        if correct != n:
            raise ManifestError(
                f"{self.folder} was emitted for a device whose fma() is fused, and {device_name}'s is not "
                f"({correct} of {n} probe quotients exact): its divisions would be wrong. "
                "Fix: emit again with --fma unfused (or run it through vyre_vk.run, which probes the device).")

    def grids(self, counts: Mapping[str, int]) -> list[list[int]]:
        """Each stage's grid for bound element counts by buffer name."""
        return [formula_grid(st, counts, self.scratch) for st in self.stages]

    def _plan(self, arrays: dict, grid: Optional[tuple] = None) -> _Plan:
        key = (grid, *[a.size for a in arrays.values()])
        plan = self._plans.get(key)
        if plan is not None:
            self._plans.move_to_end(key)
            return plan
        import kp

        mgr, empty = self._manager(), np.zeros(0, np.uint32)
        counts = {n: a.size for n, a in arrays.items()}
        tensors = {n: mgr.tensor_t(_words(a)) for n, a in arrays.items()}
        for s in self.scratch:
            tensors[s["name"]] = mgr.tensor_t(_words(np.zeros(s["count"], np.dtype(s["storage"]))))
            counts[s["name"]] = s["count"]
        extra, algos, traps = [], [], []
        grids = [list(grid)] if grid else self.grids(counts)
        for k, (st, grid) in enumerate(zip(self.stages, grids)):
            slots = {b["binding"]: tensors[b["name"]] for b in st["bindings"] if b["role"] != "trap"}
            if st["trap"]:
                trap = mgr.tensor_t(np.zeros(st["trap"]["words"], np.uint32))
                slots[st["trap"]["binding"]] = trap
                traps.append((k, trap))
            for slot in range(max(slots, default=-1) + 1):  # kp binds tensor k at binding k
                if slot not in slots:
                    slots[slot] = mgr.tensor_t(np.zeros(1, np.uint32))
                    extra.append(slots[slot])
            # Always pass the grid (kp's default is one workgroup per element) and typed empty constants.
            spec = np.array([counts[c["buffer"]] for c in st.get("spec_constants", [])], np.uint32)
            algos.append(mgr.algorithm([slots[s] for s in sorted(slots)], self.spirv[k], grid, spec, empty))
        trap_tensors = [t for _, t in traps]
        everything = [*tensors.values(), *trap_tensors, *extra]
        seq = mgr.sequence()
        seq.record(kp.OpTensorSyncDevice(everything))  # scratch, traps and fillers: their zeros
        for op in self.manifest["ops"]:
            if op["op"] == "barrier":
                seq.record(kp.OpMemoryBarrier([tensors[n] for n in op["buffers"]]))
            else:
                seq.record(kp.OpAlgoDispatch(algos[op["stage"]], empty))
        downloads = [tensors[b["name"]] for b in self.results] + trap_tensors
        if downloads:
            seq.record(kp.OpTensorSyncLocal(downloads))
        view = lambda n: _host_view(tensors[n].data(), self._dtypes[n], counts[n])  # noqa: E731
        plan = _Plan([seq, *algos, *everything], seq, {n: view(n) for n in arrays},
                     {b["name"]: view(b["name"]) for b in self.results},
                     [(k, t.data()) for k, t in traps])
        self._plans[key] = plan
        while len(self._plans) > MAX_PLANS:
            self._plans.popitem(last=False)[1].destroy()
        return plan

    # ---- inputs and results
    def _array(self, name: str, value: Any) -> np.ndarray:
        dtype = self._dtypes[name]
        if isinstance(value, (bytes, bytearray, memoryview)):
            arr = np.frombuffer(bytes(value), dtype.newbyteorder("<")).astype(dtype)
        else:
            arr = np.asarray(value).reshape(-1)
            if arr.dtype != dtype:
                conv = arr.astype(dtype)
                if arr.dtype.kind not in "biuf" or not np.array_equal(conv.astype(arr.dtype), arr, equal_nan=True):
                    raise InputError(name, f"takes {dtype.name}; {arr.dtype.name} data does not convert exactly",
                                     f"pass a {dtype.name} array")
                arr = conv
        return arr

    def _bind(self, inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        unknown = sorted(set(inputs) - set(self.inputs))
        missing = [n for n in self.inputs if n not in inputs]
        if unknown or missing:
            raise InputError(None, f"inputs {unknown or ''} unknown, {missing or ''} missing",
                             f"pass exactly {self.inputs}")
        arrays = {}
        for b in self.buffers:
            name = b["name"]
            if b["role"] == "output":
                arrays[name] = self._zeros[name]
                continue
            arr = self._array(name, inputs[name])
            if arr.size < max(b["count"], 1):
                raise InputError(name, f"has {arr.size} elements, the program declares {max(b['count'], 1)}",
                                 "pass at least that many")
            arrays[name] = canonical_f32(arr) if name in self._canon else arr
        return arrays

    def run(self, inputs: Optional[Mapping[str, Any]] = None, *, grid: Optional[tuple] = None) -> dict[str, np.ndarray]:
        """Run once; returns a fresh array per result buffer (inout and output), by name.
        ``grid`` overrides a single-stage module's workgroup grid (as ``Kernel.run(grid=...)`` does)."""
        if grid is not None:
            grid = tuple(int(v) for v in grid)
            if len(self.stages) != 1 or len(grid) != 3 or min(grid) < 1:
                raise InputError(None, f"grid {grid} needs a single-stage module and three positive integers",
                                 "emit the program --as-written to override its grid")
        arrays = self._bind(inputs or {})
        if self._empty:  # nothing bound: no dispatch could change anything visible (kp cannot bind nothing)
            return {}
        with self._lock:
            plan = self._plan(arrays, grid)
            for name, view in plan.staging.items():
                view[:] = arrays[name]
            for _, words in plan.traps:
                words[:] = 0
            plan.sequence.eval()
            for k, words in plan.traps:
                if words[0]:
                    code = int(words[1])
                    raise AotTrapError(k, code, self.stages[k]["trap"]["codes"].get(str(code), "unknown trap"),
                                       int(words[2]), int(words[3]))
            out = {n: view.copy() for n, view in plan.results.items()}
        for b in self.results:  # output_byte_range: only that slice, as the reference returns it
            rng = b.get("output_byte_range")
            if rng:
                raw, size = out[b["name"]].view(np.uint8)[rng[0]:rng[1]], out[b["name"]].itemsize
                out[b["name"]] = (raw.view(out[b["name"]].dtype) if rng[0] % size == 0 and (rng[1] - rng[0]) % size
                                  == 0 else raw).copy()
        return out

    def __call__(self, **arrays: Any) -> dict[str, np.ndarray]:
        return self.run(arrays)

    def summary(self) -> str:
        return summary(self.manifest)

    def close(self) -> None:
        """Free the kp objects (and the manager, if this module opened it). Idempotent."""
        with self._lock:
            for plan in self._plans.values():
                plan.destroy()
            self._plans.clear()
            if self._own_mgr and self._mgr is not None:
                self._mgr.destroy()
            self._mgr = None if self._own_mgr else self._mgr

    def __enter__(self) -> "Module":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def load(folder: Union[str, Path], *, manager: Any = None, device: int = 0) -> Module:
    """Read ``folder/manifest.json`` and its stage SPIR-V; kp starts on the first run (``device``,
    or a ``kp.Manager`` you pass, which the module then never destroys)."""
    root, manifest = read_manifest(folder)
    spirv = []
    for st in manifest["stages"]:
        try:
            words = (root / st["spirv"]).read_bytes()
        except OSError as e:
            raise ManifestError(f"stage {st['index']}: cannot read {root / st['spirv']}: {e.strerror}. "
                                "Fix: emit the folder again.") from None
        if len(words) % 4 or words[:4] != b"\x03\x02\x23\x07":
            raise ManifestError(f"{root / st['spirv']} is not a SPIR-V module. Fix: emit the folder again.")
        spirv.append(words)
    for b in [*manifest["buffers"], *manifest["scratch"]]:
        if b["storage"] not in _KP_DTYPES + _BYTE_DTYPES:
            raise ManifestError(f"buffer `{b['name']}` is {b['storage']}, which kp cannot hold. "
                                "Fix: use f32/u32/i32/bool/u8/i8 buffers.")
    for b in manifest["buffers"]:
        if b["role"] == "output" and b["count"] < 1:
            raise ManifestError(f"output `{b['name']}` has no declared count. Fix: declare it with a count.")
    return Module(root, manifest, spirv, manager, device)


def summary(manifest: Mapping) -> str:
    """The manifest in a few lines: interface, stages, ops."""
    o = manifest["options"]
    lines = [f"{manifest['op'] or manifest['name']}: schema {manifest['schema_version']}, vyre-vk "
             f"{manifest['vyre_vk_version']}, program {manifest['program_hash'][:16]}, "
             f"{'optimised for ' + o['device_class'] if o['passes'] else 'as written'}, precision {o['precision']}"]
    for b in manifest["buffers"]:
        lines.append(f"  {b['role']:6} {b['name']}: {b['dtype']}[{b['count'] or 'n'}] binding {b['binding']}")
    for s in manifest["scratch"]:
        lines.append(f"  scratch {s['name']}: {s['dtype']}[{s['count']}]")
    for st in manifest["stages"]:
        g = st["grid"]["for_sizes"]
        lines.append(f"  stage {st['index']}: {st['spirv']}, local size {tuple(st['local_size'])}, factor "
                     f"{st['factor']}, grid {tuple(g) if g else 'from sizes'}, bindings "
                     + ", ".join(f"{b['binding']}={b['name']}" for b in st["bindings"]))
    lines.append("  ops: " + ", ".join(f"dispatch {op['stage']}" if op["op"] == "dispatch"
                                       else f"barrier({', '.join(op['buffers'])})" for op in manifest["ops"]))
    return "\n".join(lines)


def main(argv: Optional[list] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0].startswith("-"):
        print("usage: python -m vyre_vk.aot FOLDER   (a folder `vyre-vk emit -o` wrote)", file=sys.stderr)
        return 2
    try:
        print(summary(read_manifest(args[0])[1]))
    except ManifestError as e:
        print(f"vyre_vk.aot: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
