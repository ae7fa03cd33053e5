"""Test helpers: hypothesis strategies for valid programs (reused by fuzzing)."""
