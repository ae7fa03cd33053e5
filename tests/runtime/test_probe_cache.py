"""The probe cache (vyre_vk.runtime.probes.cached): a device's probe results are reused by the
next process only for the same driver build and probe shader, and a damaged entry is re-probed."""
import json

import pytest

from vyre_vk.runtime import Device, probes
from vyre_vk.runtime import device as device_module
from vyre_vk.runtime.probes import FmaProbe, cache_key, cached

PROPS = {"device_name": "gpu", "vendor_id": 1, "device_id": 2, "driver_version": 3, "pipeline_cache_uuid": b"u" * 16}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("VYRE_VK_CACHE_DIR", str(tmp_path))
    return tmp_path / "probes"


def _counting(result):
    calls = []

    def run():
        calls.append(1)
        return result
    return run, calls


def test_a_second_call_reads_the_disk_and_keys_differ_by_build_and_shader(cache):
    run, calls = _counting(FmaProbe(7, 9))
    assert cached(PROPS, "fma", b"spv", FmaProbe, run) == FmaProbe(7, 9)
    assert cached(PROPS, "fma", b"spv", FmaProbe, run) == FmaProbe(7, 9)
    assert len(calls) == 1 and len(list(cache.glob("*.json"))) == 1
    keys = {cache_key(PROPS, "fma", b"spv"), cache_key({**PROPS, "driver_version": 4}, "fma", b"spv"),
            cache_key({**PROPS, "pipeline_cache_uuid": b"v" * 16}, "fma", b"spv"),
            cache_key(PROPS, "fma", b"other shader"), cache_key(PROPS, "loop", b"spv")}
    assert len(keys) == 5
    cached({**PROPS, "driver_version": 4}, "fma", b"spv", FmaProbe, run)  # a driver update: probed again
    assert len(calls) == 2


@pytest.mark.parametrize("damage", ["", "{", '{"key": "x", "kind": "fma", "result": [1, 1]}', '{"result": "ab"}',
                                    '{"key": "K", "kind": "fma", "result": [1.5, 2]}'])
def test_a_damaged_entry_is_probed_again_and_rewritten(cache, damage):
    run, calls = _counting(FmaProbe(4, 4))
    cached(PROPS, "fma", b"spv", FmaProbe, run)
    (entry,) = cache.glob("*.json")
    entry.write_text(damage.replace("K", entry.stem))
    assert cached(PROPS, "fma", b"spv", FmaProbe, run) == FmaProbe(4, 4) and len(calls) == 2
    assert json.loads(entry.read_text())["result"] == [4, 4]


def test_no_build_id_or_no_writable_folder_means_no_cache(cache, tmp_path, monkeypatch):
    run, calls = _counting(FmaProbe(1, 1))
    for _ in range(2):
        cached({**PROPS, "pipeline_cache_uuid": None}, "fma", b"spv", FmaProbe, run)
    assert len(calls) == 2 and not cache.exists()
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("VYRE_VK_CACHE_DIR", str(blocker))  # a file where the folder should be
    assert cached(PROPS, "fma", b"spv", FmaProbe, run) == FmaProbe(1, 1) and len(calls) == 3


def test_a_new_process_opens_the_device_without_probing_again(cache, monkeypatch):
    monkeypatch.setattr(device_module, "_probes", {})
    with Device() as first:
        want = (first.probe, first.fma, first.float64)
    assert len(list(cache.glob("*.json"))) == 3  # loop, fma, float64 (lavapipe has shaderFloat64)
    monkeypatch.setattr(device_module, "_probes", {})  # as in a new process

    def refuse(*a, **k):
        raise AssertionError("probed although the cache holds this build's result")
    monkeypatch.setattr(Device, "loop_probe", refuse)
    monkeypatch.setattr(device_module, "fma_probe", refuse)
    monkeypatch.setattr(device_module, "float64_probe", refuse)
    with Device() as second:
        assert (second.probe, second.fma, second.float64) == want
        assert second.limits.float64 == first.limits.float64 is True
    assert probes.PROBE_CASES == want[1].total


def test_a_tiny_disk_cap_keeps_no_probe_results(cache, monkeypatch):
    monkeypatch.setenv("VYRE_VK_CACHE_MAX_BYTES", str(probes.PROBE_CACHE_MIN_CAP - 1))
    run, calls = _counting(FmaProbe(2, 2))
    for _ in range(2):
        cached(PROPS, "fma", b"spv", FmaProbe, run)
    assert len(calls) == 2 and not cache.exists()
