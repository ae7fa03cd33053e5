"""The Python 3.12 lexer of vyre-libs (vyre-libs/src/parsing/python/lex.rs)."""
