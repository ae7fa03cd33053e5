"""vyre-libs parsing ops (vyre-libs/src/parsing): delimiter matching, the C11 lexer passes and the
Python 3.12 lexer; importing registers them."""
from . import delimiter  # noqa: F401
from .c import digraphs, keyword, lexer, single_pass  # noqa: F401
from .python import lex  # noqa: F401
# [parsing-py ops]
# [parsing-c11 ops]
# [parsing-sema ops]
