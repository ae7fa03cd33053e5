import pytest


@pytest.fixture(scope="session")
def ops_device(vk_device):
    return vk_device
