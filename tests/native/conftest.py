import pytest

from vyre_vk.runtime import Device


@pytest.fixture(scope="module")
def device():
    with Device() as dev:
        yield dev
