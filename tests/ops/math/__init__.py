"""Op-specific tests of the ops in vyre_vk/ops/math, one module per source module
(test_<module>.py): what the per-op tables in tests/ops leave out."""
