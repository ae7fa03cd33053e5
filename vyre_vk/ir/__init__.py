"""The vyre IR in Python: data types, the operator table, expressions, nodes, programs,
validation and the JSON form.

Example::

    >>> from vyre_vk.ir import Expr, Node, Program, BufferDecl, DataType, wrap_anonymous

Constructors raise :class:`IRError` (a ValueError) for values of the wrong kind and
:class:`IRDepthError` past :data:`EXPR_DEPTH_CAP` / :data:`NESTING_CAP`. The rules a dispatch
runs under are IR semantics too, shared by the reference and the runtime: :func:`bind` (inputs
to buffers, vyre_vk.ir.binding) and :func:`dispatch_grid` (the workgroup grid, vyre_vk.ir.grid).
"""
from .types import (BYTE_TYPES, BufferAccess, DataType, DTYPES, DTypeInfo, IRDepthError, IRError, MemoryOrdering,
                    SUPPORTED_DTYPES)
from .optable import (ATOMICS, BINOPS, CASTS, UNOPS, AtomicOp, BinOp, UnOp, canon)
from .expr import (EXPR_DEPTH_CAP, Atomic, BinOpExpr, BufLen, Call, Cast, Expr, Fma, InvocationId, LitBool,
                   LitF32, LitI32, LitU32, Load, LocalId, Select, SubgroupBallot, SubgroupLocalId,
                   SubgroupReduce, SubgroupShuffle, SubgroupSize, UnOpExpr, Var, WorkgroupId,
                   bits_f32, f32_bits)
from .node import (NESTING_CAP, AsyncLoad, AsyncStore, AsyncWait, Assign, Barrier, Block, GeneratorRef, If,
                   IndirectDispatch, Let, Loop, Node, Region, Resume, Return, Store, Trap)
from .program import (SELF_EXCLUSIVE_REGION_SUFFIX, BufferDecl, Program, mark_self_exclusive_region,
                      reparent_program_children, tag_program, wrap, wrap_anonymous, wrap_child)
from .serial import ProgramFormatError
from .validate import ValidationError, validate
from .binding import Binder, Inputs, bind
from .grid import dispatch_grid

__all__ = [n for n in dir() if not n.startswith("_")]
