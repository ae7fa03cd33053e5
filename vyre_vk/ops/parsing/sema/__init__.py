"""vyre-libs' C semantic and back-end passes (vyre-libs/src/parsing/c/{sema,preprocess,parse} and
vyre-libs/src/compiler): the conditional-compilation mask, dynamic macro expansion, type-specifier
propagation, the x86-64 register/stack/ELF passes and the per-token scope tree (c_sema_scope and
its phases). Importing registers them."""
