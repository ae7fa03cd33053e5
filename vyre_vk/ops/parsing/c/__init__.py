"""The C11 lexer passes of vyre-libs (vyre-libs/src/parsing/c/lex): the serial byte lexer
(`c_lexer`), keyword promotion (`c_keyword`, `c_keyword_packed_haystack`), digraph rewriting
(`c11_lex_digraphs`) and their fusion (`c11_lex_single_pass`)."""
