"""The encoder's optimised runtime copy (enforce/embedder.py): made once per machine and onnxruntime, the
same bytes each time, the same vectors as a session optimised at load, pinned by the build, and refused
when it differs from the pin."""
import hashlib
import json

import numpy as np
import pytest

from veriguard.enforce import embedder
from veriguard.enforce.embedder import (DEFAULT_ENCODER, ENCODERS, RUNTIME_GRAPH, RUNTIME_WEIGHTS, Embedder,
                                        EmbedderUnavailable, EncoderMismatch, encoder_identity, optimise)
from veriguard.enforce.monitor import Monitor
from tests.unit.test_build_integrity import consistent, copy
from tests.unit.test_evaluation import build_of

TEXTS = ["Rent a cheap SUV in Denver", "Book a table for two tonight", "Find the opening hours of the Louvre"]
EVERYONE = {"age": 40, "domestic": True, "dr_license": True, "vaccine": True, "membership": True}


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    """An empty encoder cache, and no embedder shared from an earlier test."""
    monkeypatch.setenv("VERIGUARD_CACHE", str(tmp_path / "cache"))
    embedder._shared.cache_clear()
    yield tmp_path / "cache"
    embedder._shared.cache_clear()


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return build_of("mind2web_sc", tmp_path_factory.mktemp("m2w_runtime"))


def sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_copy_is_made_once_and_reused(own_cache, monkeypatch):
    first = Embedder()
    assert first.runtime.parent == own_cache / "encoders" and not list(own_cache.glob("encoders/.making-*"))

    def refuse(*_):
        raise AssertionError("the copy was made again")

    monkeypatch.setattr(embedder, "optimise", refuse)
    second = Embedder()
    assert second.runtime == first.runtime and second.identity() == first.identity() == encoder_identity()
    assert np.array_equal(first.embed(TEXTS), second.embed(TEXTS))


def test_the_copy_is_the_same_bytes_each_time(tmp_path):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        optimise(ENCODERS[DEFAULT_ENCODER], tmp_path / name)
    for f in (RUNTIME_GRAPH, RUNTIME_WEIGHTS):
        assert sha(tmp_path / "a" / f) == sha(tmp_path / "b" / f)


def test_the_copy_embeds_like_a_session_optimised_at_load():
    import onnxruntime as ort

    emb = Embedder()
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    emb.session = ort.InferenceSession(str(emb.model), options, providers=["CPUExecutionProvider"])
    at_load = emb.embed(TEXTS)
    assert np.allclose(Embedder().embed(TEXTS), at_load, atol=1e-5)


def test_the_identity_builds_no_session_once_the_copy_exists(monkeypatch):
    import onnxruntime as ort

    want = Embedder().identity()

    def no_session(*_a, **_k):
        raise AssertionError("a session was built")

    monkeypatch.setattr(ort, "InferenceSession", no_session)
    assert encoder_identity() == want and set(want["runtime"]) == {"onnxruntime", "format", "graph_sha256",
                                                                   "weights_sha256"}


def test_a_cache_that_cannot_be_written_makes_a_scratch_copy_and_removes_it(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("VERIGUARD_CACHE", str(blocker))
    emb = Embedder()
    assert not emb.runtime.exists() and emb.identity()["runtime"] == encoder_identity()["runtime"]
    assert emb.embed(TEXTS[:1]).shape == (1, 384)


def test_a_model_file_that_is_not_the_one_its_package_installed_is_refused(own_cache, monkeypatch):
    monkeypatch.setattr(embedder, "installed_sha256", lambda *_: "0" * 64)
    with pytest.raises(EmbedderUnavailable, match="not the file"):
        Embedder()


def test_a_tampered_copy_is_refused_and_a_removed_one_is_remade(build, own_cache):
    assert Monitor.from_build(build).check({"confirmed_task": TEXTS[0], "user_info": EVERYONE}).allowed
    weights = next(own_cache.glob(f"encoders/*/{RUNTIME_WEIGHTS}"))
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 1
    weights.write_bytes(bytes(data))
    embedder._shared.cache_clear()
    with pytest.raises(EncoderMismatch) as e:
        Monitor.from_build(build)
    assert e.value.exit_code == 3 and "weights_sha256" in e.value.message and "remade when removed" in e.value.message
    weights.unlink()
    embedder._shared.cache_clear()
    assert Monitor.from_build(build).check({"confirmed_task": TEXTS[0], "user_info": EVERYONE}).allowed


def test_a_copy_made_by_another_onnxruntime_is_refused(build, tmp_path):
    target = copy(build, tmp_path)
    doc = json.loads((target / "extraction.json").read_text())
    doc["extraction"]["task"]["frozen"]["encoder"]["runtime"]["onnxruntime"] = "0.0.1"
    consistent(target, "extraction.json", (json.dumps(doc, indent=2) + "\n").encode())
    with pytest.raises(EncoderMismatch, match="0.0.1"):
        Monitor.from_build(target)


@pytest.mark.parametrize("model_sha256, loads", [(None, True), ("0" * 64, False)])
def test_a_build_frozen_before_the_copy_was_pinned_is_checked_against_the_model_file(build, tmp_path, model_sha256,
                                                                                      loads):
    target = copy(build, tmp_path)
    doc = json.loads((target / "extraction.json").read_text())
    encoder = doc["extraction"]["task"]["frozen"]["encoder"]
    del encoder["runtime"]
    encoder["model_sha256"] = model_sha256 or encoder["model_sha256"]
    consistent(target, "extraction.json", (json.dumps(doc, indent=2) + "\n").encode())
    if loads:
        assert Monitor.from_build(target).check({"confirmed_task": TEXTS[0], "user_info": EVERYONE}).allowed
    else:
        with pytest.raises(EncoderMismatch, match="model_sha256"):
            Monitor.from_build(target)


def test_a_missing_encoder_package_is_a_precise_error_not_a_copy(own_cache, monkeypatch):
    import dataclasses

    gone = dataclasses.replace(ENCODERS[DEFAULT_ENCODER], package="no-such-encoder-package")
    monkeypatch.setitem(ENCODERS, DEFAULT_ENCODER, gone)
    for make in (Embedder, encoder_identity):
        with pytest.raises(EmbedderUnavailable, match="no-such-encoder-package is not installed"):
            make()
    assert not own_cache.exists()


def test_without_a_home_folder_the_copy_is_made_in_scratch(monkeypatch):
    from pathlib import Path

    def no_home():
        raise RuntimeError("Could not determine home directory.")

    for name in ("VERIGUARD_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(Path, "home", no_home)
    assert encoder_identity()["runtime"]["weights_sha256"] == Embedder().identity()["runtime"]["weights_sha256"]
