import pytest


@pytest.fixture
def device(vk_device):
    return vk_device
