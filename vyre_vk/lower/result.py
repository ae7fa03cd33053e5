"""What the lowering returns (:class:`Lowered`) or raises (:class:`LoweringError`), and the trap buffer's layout."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from vyre_vk.errors import VyreError

from ..ir.program import BufferDecl

#: Words of the trap buffer: [flag (0 = no trap), code, gl_GlobalInvocationID.x, address].
TRAP_WORDS = 4
#: Trap code written by the i32 Div/Mod helpers (helpers.py's `vyre_trap(1u)`).
TRAP_CODE_DIVISION = 1
TRAP_DIVISION_MESSAGE = "i32 division or remainder by zero, or i32::MIN / -1"


class LoweringError(VyreError, ValueError):
    """A program cannot be lowered to GLSL. Attributes: path (IR node path), message.

    ``str(err)`` is ``"<path>: <message> Fix: <fix>"``.
    """

    def __init__(self, path: str, message: str, fix: str):
        self.path, self.message, self.fix = path, message, fix
        super().__init__(f"{path}: {message} Fix: {fix}")


@dataclass(frozen=True)
class Lowered:
    """One lowered program.

    `bindings` are the program's non-workgroup buffers in binding order (binding N of the
    program is ``layout(std430, set = 0, binding = N)``). `trap_binding`, when not None, is
    one more storage buffer of ``TRAP_WORDS`` u32 words (zero-initialised by the runtime)
    whose word 0 becomes non-zero if an invocation trapped; `trap_codes` maps word 1 to a
    message. `line_map` maps a GLSL line (1-based) to the IR node path it came from.
    `byte_lengths` names the storage U8/I8 buffers whose bound byte counts the runtime passes
    as specialization constants: the k-th name is ``constant_id = k`` (lower/bytes.py).
    """

    glsl: str
    workgroup_size: tuple[int, int, int]
    bindings: tuple[BufferDecl, ...]
    line_map: dict[int, str]
    features: frozenset[str]
    target_env: str
    trap_binding: Optional[int] = None
    trap_codes: dict[int, str] = field(default_factory=dict)
    byte_lengths: tuple[str, ...] = ()
    shared_extra: int = 0  # bytes of workgroup memory the lowering adds (lower/shared_rcp.py)

    def node_at_line(self, line: int) -> Optional[str]:
        """IR node path of GLSL `line`, or of the nearest statement line above it."""
        for ln in range(line, 0, -1):
            if ln in self.line_map:
                return self.line_map[ln]
        return None
