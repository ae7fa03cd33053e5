"""Op-specific tests of vyre_vk/ops/security."""
