"""Op registry, the equivalent of vyre-libs' `OpEntry` harness.

Example::

    >>> from vyre_vk import ops
    >>> e = ops.get("vyre-libs::nn::mlp_backward")
    >>> program = e.build(); cases = e.test_inputs(); expected = e.expected_output()
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

from ..ir.program import Program

Cases = list[list[bytes]]


@dataclass(frozen=True)
class OpEntry:
    """One registered op.

    `build()` returns the Program at its fixture size; `test_inputs()` returns cases, each one
    byte string per buffer in declaration order (logical or legacy form, as in vyre);
    `expected_output()` returns, per case, one byte string per result buffer. `ulp` is an
    explicit f32 tolerance (None: the program-derived default, 4 or 128 ULP).
    `builder` and `params` (the registered builder arguments, e.g. model_dim=2) let tools
    rebuild the op at another size: ``entry.build_with(model_dim=64)``.
    """

    id: str
    build: Callable[[], Program]
    test_inputs: Optional[Callable[[], Cases]] = None
    expected_output: Optional[Callable[[], Cases]] = None
    category: Optional[str] = None
    ulp: Optional[int] = None
    builder: Optional[Callable[..., Program]] = None
    params: Mapping[str, Any] = field(default_factory=dict)

    def build_with(self, **overrides: Any) -> Program:
        """The program with some builder parameters changed (others as registered)."""
        if not overrides:
            return self.build()
        unknown = sorted(set(overrides) - set(self.params))
        if self.builder is None or unknown:
            raise ValueError(f"op `{self.id}` takes no builder parameter(s) {unknown or sorted(overrides)}. "
                             f"Fix: use one of {sorted(self.params)}.")
        return self.builder(**{**self.params, **overrides})


_REGISTRY: dict[str, OpEntry] = {}


def register(entry: OpEntry) -> OpEntry:
    """Add `entry`; registering a second entry under the same id is an error."""
    if entry.id in _REGISTRY and _REGISTRY[entry.id] is not entry:
        raise ValueError(f"op `{entry.id}` is already registered. Fix: give the op a unique id.")
    _REGISTRY[entry.id] = entry
    return entry


def get(op_id: str) -> OpEntry:
    _load_all()
    try:
        return _REGISTRY[op_id]
    except KeyError:
        raise KeyError(f"no op `{op_id}` is registered. Fix: use one of {sorted(_REGISTRY)}.") from None


def all_ops() -> list[OpEntry]:
    """Every registered op, sorted by id."""
    _load_all()
    return [_REGISTRY[k] for k in sorted(_REGISTRY)]


def _load_all() -> None:
    # Importing the op modules registers them (like inventory::submit! at link time).
    from . import math, nn  # noqa: F401
