"""vyre-libs parsing ops (vyre-libs/src/parsing): delimiter matching, the C11 lexer passes and the
Python 3.12 lexer; importing registers them."""
from . import delimiter  # noqa: F401
from .c import digraphs, keyword, lexer, single_pass  # noqa: F401
from .python import lex  # noqa: F401
from . import core_ast  # noqa: F401
from .python import calls, structure  # noqa: F401
# [parsing-py ops]
from .c import call_graph, cfg, classify, extract, gnu_passes, layout, vast  # noqa: F401
from .c import expr_shape  # noqa: F401
# [parsing-c11 ops]
from .sema import backend, declarations, lower, pg_semantic, preprocess, scope  # noqa: F401
# [parsing-sema ops]
