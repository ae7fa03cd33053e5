"""pytest plugin (entry point ``vyre_vk``): fixtures for testing vyre programs on Vulkan.

Fixtures:
- ``vk_device``: a session-wide :class:`vyre_vk.runtime.Device`; the test is skipped,
  with the reason, where no usable Vulkan device exists.
- ``reference``: :func:`vyre_vk.reference.run`, the NumPy oracle.
- ``assert_parity``: ``assert_parity(program, inputs, ulp=None, precision=None)`` runs the
  reference and ``vk_device`` and fails naming the worst element; ``precision`` defaults to the
  test's ``@pytest.mark.vyre_precision("fast")`` marker, else "exact" (the fast precision is
  compared by its bound, docs/PRECISION.md).
- ``vyre_op``: parametrised over every registered op (``OpEntry``); restrict with
  ``@pytest.mark.vyre_ops(category="nn")`` or ``(ids=[...])``.

Example::

    def test_my_program(assert_parity):
        assert_parity(my_program(), {"a": np.arange(64, dtype=np.uint32)})

    def test_every_op_builds(vyre_op):
        assert vyre_op.build().buffers

    @pytest.mark.vyre_precision("fast")
    def test_my_program_fast(assert_parity):
        assert_parity(my_program(), {"x": np.ones(64, dtype=np.float32)})
"""
from __future__ import annotations

import functools

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "vyre_ops(category=None, ids=None): parametrise the `vyre_op` fixture over registered ops")
    config.addinivalue_line(
        "markers", "vyre_precision(name): the precision `assert_parity` compiles and compares in (exact, fast)")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "vyre_op" not in metafunc.fixturenames:
        return
    from vyre_vk.ops import all_ops

    marker = metafunc.definition.get_closest_marker("vyre_ops")
    category = marker.kwargs.get("category") if marker else None
    ids = marker.kwargs.get("ids") if marker else None
    ops = [op for op in all_ops()
           if (category is None or op.category == category) and (ids is None or op.id in ids)]
    metafunc.parametrize("vyre_op", ops, ids=[op.id for op in ops])


@pytest.fixture(scope="session")
def vk_device():
    from vyre_vk.runtime import Device, DeviceError
    from vyre_vk.runtime.kp_bridge import KomputeError

    try:
        device = Device()
    except (DeviceError, KomputeError, RuntimeError) as e:
        pytest.skip(f"no usable Vulkan device: {e}")
    yield device
    device.close()


@pytest.fixture(scope="session")
def reference():
    from vyre_vk.reference import run

    return run


@pytest.fixture
def assert_parity(vk_device, request):
    from vyre_vk.testing.parity import assert_parity as check

    marker = request.node.get_closest_marker("vyre_precision")
    precision = marker.args[0] if marker and marker.args else "exact"
    return functools.partial(check, device=vk_device, precision=precision)
