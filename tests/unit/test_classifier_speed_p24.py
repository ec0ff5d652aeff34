"""The classifier monitor's start and per-sentence cost (issue 10, speed pass P24): the encoder's identity is read from
its wheel's install record without importlib.metadata (same values), a monitor without a shell extractor does not build
the shell zone places, a classify tokenises its pieces once, and a text that reads as itself is asked once. Each of
these keeps the outputs identical (checked on 5,140 texts by the pass's equivalence script; see the README)."""
import base64
import hashlib
import importlib.metadata
import sys

import pytest

from veriguard.enforce import categories, embedder, monitor
from veriguard.enforce.categories import CategoryClassifier
from veriguard.enforce.embedder import ENCODERS, Embedder, encoder_identity
from veriguard.enforce.monitor import Monitor
from tests.unit.test_evaluation import build_of

PACKAGES = sorted({e.package for e in ENCODERS.values()} | {"onnxruntime"})


def test_the_encoder_identity_is_read_without_importlib_metadata(monkeypatch):
    want = encoder_identity()
    versions = {p: importlib.metadata.version(p) for p in PACKAGES}
    assert want["version"] == versions[ENCODERS[want["encoder"]].package]
    assert want["runtime"]["onnxruntime"] == versions["onnxruntime"]

    def asked(*_a, **_k):
        raise AssertionError("importlib.metadata was asked")

    monkeypatch.setattr(importlib.metadata, "version", asked)
    monkeypatch.setattr(importlib.metadata, "distribution", asked)
    assert encoder_identity() == want
    assert {p: embedder.package_version(p) for p in PACKAGES} == versions


@pytest.mark.parametrize("encoder", sorted(ENCODERS))
def test_the_install_record_gives_what_importlib_metadata_gives(encoder):
    enc = ENCODERS[encoder]
    dist = importlib.metadata.distribution(enc.package)
    record = next(f for f in dist.files or () if f.as_posix() == enc.model)
    assert record.hash is not None
    value = record.hash.value
    assert embedder.installed_sha256(enc.package, enc.model) == \
        base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).hex()
    assert embedder.model_file(enc) == dist.locate_file(enc.model)
    assert embedder.installed_sha256(enc.package, "no/such/file.onnx") is None


def _wheel(site, name, version, files):
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nVersion: 9.9\n")
    rows = [f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},"
            f"{len(data)}" for path, data in files.items()]
    (info / "RECORD").write_text("\n".join(rows + [f"{info.name}/RECORD,,"]) + "\n")
    return info


def test_a_wheel_is_read_as_importlib_metadata_reads_it_and_anything_else_is_left_to_it(tmp_path, monkeypatch):
    first, second = tmp_path / "first", tmp_path / "second"
    _wheel(first, "Fake.Model_pkg", "1.2.3", {"fake/model.onnx": b"weights"})
    _wheel(second, "fake_model_pkg", "4.5.6", {"fake/model.onnx": b"other"})  # later on the path: not read
    egg = tmp_path / "eggs" / "egg_only-0.1.egg-info"
    egg.mkdir(parents=True)
    (egg / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: egg-only\nVersion: 0.1\n")
    monkeypatch.setattr(sys, "path", [str(first), str(second), str(egg.parent), *sys.path])
    for name in ("fake-model-pkg", "FAKE_MODEL.PKG", "egg-only"):
        assert embedder.package_version(name) == importlib.metadata.version(name)
    assert embedder.dist_info("fake-model-pkg") == first / "Fake.Model_pkg-1.2.3.dist-info"
    assert embedder.installed_sha256("fake-model-pkg", "fake/model.onnx") == hashlib.sha256(b"weights").hexdigest()
    assert embedder.dist_info("egg-only") is None  # an .egg-info: importlib.metadata reads it
    assert embedder.dist_info("not-installed-anywhere") is None
    legacy = tmp_path / "legacy" / "Fake_Model_pkg-0.9-py3.12.egg"  # an egg folder on the path, before the wheels
    (legacy / "EGG-INFO").mkdir(parents=True)
    (legacy / "EGG-INFO" / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: fake-model-pkg\nVersion: 0.9\n")
    monkeypatch.setattr(sys, "path", [str(legacy), *sys.path])
    assert embedder.dist_info("fake-model-pkg") is None
    assert embedder.package_version("fake-model-pkg") == importlib.metadata.version("fake-model-pkg") == "0.9"
    with pytest.raises(importlib.metadata.PackageNotFoundError):
        embedder.package_version("not-installed-anywhere")


def test_a_missing_encoder_package_is_still_a_precise_error(monkeypatch):
    import dataclasses

    missing = dataclasses.replace(ENCODERS["minilm-l6-int8"], package="veriguard-no-such-encoder")
    with pytest.raises(embedder.EmbedderUnavailable, match="veriguard-no-such-encoder is not installed"):
        embedder.model_file(missing)


@pytest.fixture(scope="module")
def eicu(tmp_path_factory):
    return build_of("eicu_ac", tmp_path_factory.mktemp("eicu_p24"))


@pytest.fixture(scope="module")
def shell(tmp_path_factory):
    return build_of("shell_agent", tmp_path_factory.mktemp("shell_p24"))


def test_a_monitor_without_a_shell_extractor_builds_no_shell_places(eicu, monkeypatch):
    def refused(*_a, **_k):
        raise AssertionError("the shell zone places were built for a monitor without a shell extractor")

    monkeypatch.setattr(monitor, "protected", refused)
    assert Monitor.from_build(eicu).extractors


def test_a_monitor_with_a_shell_extractor_still_protects_its_places(shell, monkeypatch):
    calls = []
    real = monitor.protected

    def counted(*a, **k):
        calls.append(a)
        return real(*a, **k)

    monkeypatch.setattr(monitor, "protected", counted)
    Monitor.from_build(shell)
    assert len(calls) == 1


def test_the_pieces_just_embedded_are_not_tokenised_again():
    emb = Embedder()
    long = " ".join(["book a cheap hotel room near the station"] * 60)  # over the 256 tokens the model reads
    pieces = ["Rent a cheap SUV in Denver", long]
    fresh = emb.truncated(pieces)
    assert fresh == [False, True]
    emb.embed_states(pieces)
    real = emb.tokenizer

    class NoTokeniser:
        def encode_batch(self, _texts):
            raise AssertionError("tokenised again")

        encode = encode_batch   # the embedder encodes one text at a time (S27)

    real_plain = emb.plain   # plain ASCII is tokenised in Python (S32): neither tokeniser may run again
    emb.tokenizer = emb.plain = NoTokeniser()
    assert emb.truncated(pieces) == fresh and emb.truncated(pieces[:1]) == [False]
    with pytest.raises(AssertionError, match="tokenised again"):
        emb.truncated(["a text the last run did not read"])
    emb.tokenizer, emb.plain = real, real_plain
    assert emb.truncated(["a text the last run did not read"]) == [False]


TINY = """
[categories.hotel]
description = "hotel rooms"
positives = ["Book a hotel room in Rome", "Reserve two nights at the Hilton", "Get me a room at a hotel in Paris"]
negatives = ["Find the phone number of a hotel"]
cues = ["\\\\bhotels?\\\\b", "\\\\brooms?\\\\b"]
acts = ["\\\\bbook\\\\b", "\\\\breserve\\\\b"]
asks = ["\\\\bbook (?:a|the) (?:hotel|room)\\\\b"]

[none]
examples = ["Check the weather in Oslo", "Read the news about the election", "Find a recipe for soup"]
"""


def test_a_text_that_reads_as_itself_is_asked_once(tmp_path, monkeypatch):
    bank = tmp_path / "tiny.toml"
    bank.write_text(TINY)
    clf = CategoryClassifier.from_bank(bank, Embedder())
    calls: list[str] = []
    real = CategoryClassifier.asked

    def counted(self, text):
        calls.append(text)
        return real(self, text)

    monkeypatch.setattr(CategoryClassifier, "asked", counted)
    plain = "Book a hotel room in Rome for two nights"
    assert categories.reading(plain) == plain
    got = clf.classify(plain)
    assert calls.count(plain) == 1 and "hotel" in got.labels
    calls.clear()
    other = "Your job is booking a hotel room in Rome"
    view = categories.reading(other)
    assert view != other  # an act by its gerund is read as the act: both readings are asked
    clf.classify(other)
    assert calls[:2] == [view, other]
