"""nn mixture-of-experts routing (vyre-libs/src/nn/moe); importing registers them."""
