"""Op registry, the equivalent of vyre-libs' `OpEntry` harness.

An op module registers its builder once; the builder's keyword defaults are the registered size
(``params``), so they are written in one place, the signature::

    def _build(n: int = 4) -> Program:
        return relu("input", "output", n)

    ENTRY = register_op(OP_ID, _build, category="nn", ulp=None,
                        test_inputs=lambda: [[pack_u32_slice([0, 5])]],
                        expected_output=lambda: [[pack_u32_slice([0, 5])]])

or, for the usual single case given as data, ``register_case(OP_ID, _build, [pack_u32_slice([0, 5])],
[pack_u32_slice([0, 5])], category="nn", ulp=None)``.

Example::

    >>> from vyre_vk import ops
    >>> e = ops.get("vyre-libs::nn::mlp_backward")
    >>> program = e.build(); cases = e.test_inputs(); expected = e.expected_output()
"""
from __future__ import annotations

import difflib
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

from ..errors import EXIT_USAGE, VyreError
from ..ir.program import Program

Cases = list[list[bytes]]


class UnknownOp(VyreError, KeyError):
    """No op is registered under that id (a KeyError too, for callers that catch that)."""

    def __str__(self) -> str:
        # KeyError's str() is the repr of its argument (quotes and escapes); show the message.
        return self.message


class OpRegistrationError(VyreError, ValueError):
    """An op registered twice, or with a builder whose signature the registry cannot read (a bug in an op module)."""


class OpParamError(VyreError, ValueError):
    """A builder parameter override the op does not take, or a value its builder rejects."""


@dataclass(frozen=True)
class OpEntry:
    """One registered op.

    `build()` returns the Program at its fixture size; `test_inputs()` returns cases, each one
    byte string per buffer in declaration order (logical or legacy form, as in vyre);
    `expected_output()` returns, per case, one byte string per result buffer. `ulp` is an
    explicit f32 tolerance (None: the program-derived default, 4 or 128 ULP).
    `builder` and `params` (the builder's keyword defaults, e.g. model_dim=2, read from its
    signature by `register_op`) let tools rebuild the op at another size:
    ``entry.build_with(model_dim=64)``. `bench` is the size tools/bench/ops.py runs it at.
    """

    id: str
    build: Callable[[], Program]
    test_inputs: Optional[Callable[[], Cases]] = None
    expected_output: Optional[Callable[[], Cases]] = None
    category: Optional[str] = None
    ulp: Optional[int] = None
    builder: Optional[Callable[..., Program]] = None
    params: Mapping[str, Any] = field(default_factory=dict)
    # The op's realistic benchmark size: builder overrides for tools/bench/ops.py (None: not benchmarked).
    bench: Optional[Mapping[str, Any]] = None

    def build_with(self, **overrides: Any) -> Program:
        """The program with some builder parameters changed (others as registered).

        Raises OpParamError for a name the op does not take or a value its builder rejects.
        """
        if not overrides:
            return self.build()
        unknown = sorted(set(overrides) - set(self.params))
        if self.builder is None or unknown:
            valid = (f"use one of {sorted(self.params)} (registered: {format_params(self.params)})" if self.params
                     else "build it without parameter overrides; it takes none")
            raise OpParamError(f"op `{self.id}` takes no builder parameter(s) {unknown or sorted(overrides)}. "
                               f"Fix: {valid}.")
        try:
            return self.builder(**{**self.params, **overrides})
        except (TypeError, ValueError, OverflowError, ZeroDivisionError, MemoryError, VyreError) as e:
            if (isinstance(e, VyreError) and e.exit_code != EXIT_USAGE) or not self._builds_as_registered():
                raise  # the environment's, or broken at its own defaults too: a bug, not a bad value
            raise OpParamError(_rejected(self, overrides, e)) from e

    def _builds_as_registered(self) -> bool:
        try:
            self.builder(**self.params)  # type: ignore[misc]
        except Exception:
            return False
        return True


def builder_params(builder: Callable[..., Program]) -> dict[str, Any]:
    """The builder's parameter names and defaults, in signature order: the op's registered size.

    Raises OpRegistrationError for a parameter without a default (``build()`` calls the builder bare).
    """
    params: dict[str, Any] = {}
    for name, p in inspect.signature(builder).parameters.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.default is p.empty:
            raise OpRegistrationError(f"builder {builder.__qualname__} has no default for `{name}`. Fix: give every "
                            "builder parameter a default, the size the op is registered at.")
        params[name] = p.default
    return params


def register_op(op_id: str, builder: Callable[..., Program], *, category: Optional[str], ulp: Optional[int],
                test_inputs: Callable[[], Cases], expected_output: Callable[[], Cases],
                bench: Optional[Mapping[str, Any]] = None) -> OpEntry:
    """Register the op `op_id` built by `builder`: ``build()`` is ``builder()`` and ``params`` its
    keyword defaults (read from the signature, so the registered size is written once)."""
    return register(OpEntry(id=op_id, build=builder, builder=builder, params=builder_params(builder),
                            test_inputs=test_inputs, expected_output=expected_output, category=category, ulp=ulp,
                            bench=dict(bench) if bench is not None else None))


def register_case(op_id: str, builder: Callable[..., Program], inputs: Sequence[bytes], expected: Sequence[bytes],
                  *, category: Optional[str], ulp: Optional[int],
                  bench: Optional[Mapping[str, Any]] = None) -> OpEntry:
    """`register_op` for an op with one test case given as plain data (one byte string per input
    buffer, one per result buffer): most ops have one, and so their registration is a line or two."""
    return register_op(op_id, builder, category=category, ulp=ulp, bench=bench,
                       test_inputs=lambda: [list(inputs)], expected_output=lambda: [list(expected)])


def format_params(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in sorted(params.items())) or "none"


def _rejected(entry: OpEntry, overrides: Mapping[str, Any], e: BaseException) -> str:
    what = str(e) or type(e).__name__
    context = f"op `{entry.id}` with {format_params(overrides)}; registered defaults: {format_params(entry.params)}"
    if "Fix:" in what and (isinstance(e, OpParamError) or not isinstance(e, VyreError)):
        # A builder's own check, its hint written for the op's users: keep it first (callers match
        # on its start).
        return f"{what.rstrip()} ({context})"
    # Otherwise the hint (if any) is for op authors (an IR literal or shape the builder made): drop it.
    why = (what.rpartition("Fix:")[0].strip() or what).rstrip(". ")
    return (f"{context}: the builder rejects these values ({type(e).__name__}: {why}). "
            f"Fix: pass values the op supports, e.g. the registered defaults, and scale up from there.")


_REGISTRY: dict[str, OpEntry] = {}


def register(entry: OpEntry) -> OpEntry:
    """Add `entry`; registering a second entry under the same id is an error, and so is one whose
    `params` are not its builder's defaults (build() and build_with() would build different sizes)."""
    if entry.id in _REGISTRY and _REGISTRY[entry.id] is not entry:
        raise OpRegistrationError(f"op `{entry.id}` is already registered. Fix: give the op a unique id.")
    if entry.builder is not None and dict(entry.params) != builder_params(entry.builder):
        raise OpRegistrationError(f"op `{entry.id}` registers params {format_params(entry.params)} but its builder's "
                         f"defaults are {format_params(builder_params(entry.builder))}. Fix: register it with "
                         "register_op(), which reads the params from the builder's signature.")
    unknown = sorted(set(entry.bench or {}) - set(entry.params))
    if unknown:
        raise OpRegistrationError(f"op `{entry.id}` declares bench={dict(entry.bench)} but its builder takes no "
                                  f"{', '.join(unknown)}. Fix: use the builder's parameters: {format_params(entry.params)}.")
    _REGISTRY[entry.id] = entry
    return entry


def get(op_id: str) -> OpEntry:
    """The entry registered as `op_id`; UnknownOp (a KeyError) names the closest ids if none is."""
    _load_all()
    try:
        return _REGISTRY[op_id]
    except KeyError:
        pass
    near = suggest(op_id)
    hint = f" Did you mean: {', '.join(near)}?" if near else ""
    text = str(op_id)
    category = next((c for c in (text, text.rpartition("::")[0])
                     if c and any(i.startswith(c + "::") for i in _REGISTRY)), None)
    listing = (f"`vyre-vk list {category}` prints that category's ids" if category else
               "`vyre-vk list` prints every registered id")
    raise UnknownOp(f"no op `{op_id}` is registered.{hint} Fix: use a registered id; {listing} "
                    "(`vyre-vk run --all` checks them all).") from None


def suggest(op_id: str, n: int = 5) -> list[str]:
    """Up to `n` registered ids close to `op_id`: ids under it as a prefix (a category), ids with
    its last segment (a short name), then ids whose last segment is spelled like it, those in
    its category first."""
    _load_all()
    ids = sorted(_REGISTRY)
    text = str(op_id)
    category, _, last = text.rpartition("::")
    by_leaf: dict[str, list[str]] = {}
    for i in ids:
        by_leaf.setdefault(i.rpartition("::")[2], []).append(i)
    found = [i for i in ids if text and i.startswith(text)]
    found += by_leaf.get(last, [])
    # Whole ids share long prefixes (vyre-libs::nn::), which swamps difflib's ratio: compare leaves.
    for leaf in difflib.get_close_matches(last, list(by_leaf), n=n, cutoff=0.7):
        found += sorted(by_leaf[leaf], key=lambda i: i.rpartition("::")[0] != category)
    return list(dict.fromkeys(found))[:n]


def all_ops() -> list[OpEntry]:
    """Every registered op, sorted by id."""
    _load_all()
    return [_REGISTRY[k] for k in sorted(_REGISTRY)]


def _load_all() -> None:
    # Importing the op modules registers them (like inventory::submit! at link time).
    from . import math, nn  # noqa: F401
    from . import logical, representation, substrate  # noqa: F401
    from . import decode, hash  # noqa: F401
    from . import visual  # noqa: F401
    # [visual ops]
    from . import security  # noqa: F401
    # [security ops]
    from . import graph, matching, scan  # noqa: F401
    # [matching ops]
    from . import parsing  # noqa: F401
    # [parsing ops]
    # [convergence ops]
