"""Shared settings for the reliability suite (budget: all of tests/reliability < 3 min on 2 cores)."""
from hypothesis import HealthCheck, settings

settings.register_profile(
    "reliability", deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
                          HealthCheck.function_scoped_fixture])
