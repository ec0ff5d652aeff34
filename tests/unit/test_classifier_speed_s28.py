"""The `minilm-l6-qdyn` encoder option (enforce/embedder.py): onnxruntime's dynamic int8 quantization of the shipped
MiniLM, made once per machine into the encoder cache beside the float32 copy, the same bytes each time, named in the
identity a build pins (quantization settings, onnx's and onnxruntime's versions, the copy's sha256), and refused by
the monitor (env.encoder, exit 3) when the copy differs. The default encoder's identity and builds are unchanged."""
import json
import tomllib
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

from veriguard.enforce import embedder
from veriguard.enforce.categories import CategoryClassifier
from veriguard.enforce.embedder import (DEFAULT_ENCODER, ENCODERS, RUNTIME_GRAPH, RUNTIME_WEIGHTS, Embedder,
                                        EmbedderUnavailable, EncoderMismatch, encoder_identity, optimise)
from veriguard.enforce.monitor import Monitor
from veriguard.synth.classifier_build import freeze_classifier
from tests.unit.test_build_integrity import consistent, copy
from tests.unit.test_classifier_build import _small_bank_spec
from tests.unit.test_embedder_runtime import own_cache, sha  # noqa: F401  (own_cache: a fixture)
from tests.unit.test_evaluation import build_of

QDYN = "minilm-l6-qdyn"
ROOT = Path(__file__).resolve().parents[2]
TEXTS = ["Rent a cheap SUV in Denver", "Book two nights at a hotel near the Louvre",
         "Find the opening hours of the Louvre and the nearest metro station to it, then tell me whether the museum is "
         "open on Monday evenings in December"]
EVERYONE = {"age": 40, "domestic": True, "dr_license": True, "vaccine": True, "membership": True}
NOBODY = {"age": 10, "domestic": False, "dr_license": False, "vaccine": False, "membership": False}


@pytest.fixture(scope="module")
def qdyn_build(tmp_path_factory):
    """The Mind2Web-SC build with a classifier frozen on the quantized encoder (a small bank: fast to embed)."""
    tmp = tmp_path_factory.mktemp("qdyn")
    frozen = freeze_classifier(*_small_bank_spec(tmp, f'encoder = "{QDYN}"'))
    build = copy(build_of("mind2web_sc", tmp / "base"), tmp)
    doc = json.loads((build / "extraction.json").read_text())
    doc["extraction"]["task"]["frozen"] = frozen
    consistent(build, "extraction.json", (json.dumps(doc, indent=2) + "\n").encode())
    return build


def edited(build, tmp_path, edit):
    target = copy(build, tmp_path)
    doc = json.loads((target / "extraction.json").read_text())
    edit(doc["extraction"]["task"]["frozen"]["encoder"])
    consistent(target, "extraction.json", (json.dumps(doc, indent=2) + "\n").encode())
    return target


def test_the_quantized_copy_is_the_same_bytes_each_time_and_not_the_float_copy(tmp_path):
    for name in ("a", "b", "float"):
        (tmp_path / name).mkdir()
    optimise(ENCODERS[QDYN], tmp_path / "a")
    optimise(ENCODERS[QDYN], tmp_path / "b")
    optimise(ENCODERS[DEFAULT_ENCODER], tmp_path / "float")
    for f in (RUNTIME_GRAPH, RUNTIME_WEIGHTS):
        assert sha(tmp_path / "a" / f) == sha(tmp_path / "b" / f) != sha(tmp_path / "float" / f)
    assert not list(tmp_path.glob("*/quantized.onnx"))   # the scratch of the quantization is not in the copy
    # a quarter of the float weights: the products' weights are int8
    assert (tmp_path / "a" / RUNTIME_WEIGHTS).stat().st_size < 0.7 * (tmp_path / "float" / RUNTIME_WEIGHTS).stat().st_size


def test_the_quantized_graph_runs_integer_products():
    import onnx

    model = onnx.load(str(Embedder(QDYN).runtime / RUNTIME_GRAPH), load_external_data=False)
    ops = {n.op_type for n in model.graph.node}
    assert {"DynamicQuantizeMatMul", "MatMulIntegerToFloat"} <= ops


def test_the_copy_is_made_once_beside_the_float_copy_and_named_by_its_quantization(own_cache, monkeypatch):
    first = Embedder(QDYN)
    default = Embedder()
    folders = sorted(p.name.rsplit("-", 1)[0] for p in (own_cache / "encoders").iterdir())
    assert folders == sorted([DEFAULT_ENCODER, QDYN]) and first.runtime != default.runtime

    def refuse(*_):
        raise AssertionError("the copy was made again")

    monkeypatch.setattr(embedder, "optimise", refuse)
    again = Embedder(QDYN)
    ident = again.identity()
    assert again.runtime == first.runtime and ident == first.identity() == encoder_identity(QDYN)
    assert ident["quantization"] == {"method": "onnxruntime.quantization.quantize_dynamic", "op_types": ["MatMul"],
                                     "weight_type": "QInt8", "per_channel": True, "reduce_range": False,
                                     "onnx": metadata.version("onnx")}
    assert ident["runtime"]["onnxruntime"] == metadata.version("onnxruntime")
    assert ident["runtime"]["weights_sha256"] == sha(first.runtime / RUNTIME_WEIGHTS)
    assert ident["runtime"]["graph_sha256"] == sha(first.runtime / RUNTIME_GRAPH)
    assert {k: v for k, v in ident.items() if k not in ("encoder", "runtime", "quantization")} == \
        {k: v for k, v in default.identity().items() if k not in ("encoder", "runtime")}
    assert "quantization" not in default.identity()   # the default encoder's identity (and its builds) as before


def test_the_quantized_vectors_are_close_to_the_float_ones_but_not_the_same():
    q, f = Embedder(QDYN).embed(TEXTS), Embedder().embed(TEXTS)
    cos = (q * f).sum(axis=1)
    assert np.all(cos > 0.97) and not np.array_equal(q, f)
    assert np.allclose(np.linalg.norm(q, axis=1), 1, atol=1e-5)
    states = Embedder(QDYN).embed_states(TEXTS[:1])[1][0]
    assert states.shape[1] == 384 and not states.flags.writeable


def test_a_monitor_runs_a_build_frozen_on_the_quantized_encoder(qdyn_build, own_cache):
    monitor = Monitor.from_build(qdyn_build)
    clf = monitor.extractors["task"].classify.__self__
    assert clf.embedder.encoder.name == QDYN and clf.embedder.identity()["quantization"]["per_channel"] is True
    assert monitor.check({"confirmed_task": "Rent a pickup truck in Boise", "user_info": EVERYONE}).allowed
    assert not monitor.check({"confirmed_task": "Rent a pickup truck in Boise", "user_info": NOBODY}).allowed


def test_a_tampered_quantized_copy_is_refused_and_a_removed_one_is_remade(qdyn_build, own_cache):
    Monitor.from_build(qdyn_build)
    weights = next(own_cache.glob(f"encoders/{QDYN}-*/{RUNTIME_WEIGHTS}"))
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 1
    weights.write_bytes(bytes(data))
    embedder._shared.cache_clear()
    with pytest.raises(EncoderMismatch) as e:
        Monitor.from_build(qdyn_build)
    assert e.value.exit_code == 3 and e.value.code == "env.encoder" and "weights_sha256" in e.value.message
    weights.unlink()
    embedder._shared.cache_clear()
    assert Monitor.from_build(qdyn_build).check({"confirmed_task": TEXTS[0], "user_info": EVERYONE}).allowed


@pytest.mark.parametrize("key, value", [("onnx", "0.0.1"), ("per_channel", False), ("reduce_range", True),
                                        ("op_types", ["MatMul", "Gather"]), ("weight_type", "QUInt8")])
def test_a_build_pinned_to_another_quantization_is_refused(qdyn_build, tmp_path, key, value):
    target = edited(qdyn_build, tmp_path, lambda enc: enc["quantization"].__setitem__(key, value))
    with pytest.raises(EncoderMismatch) as e:
        Monitor.from_build(target)
    assert e.value.exit_code == 3 and "quantization" in e.value.message


def test_a_quantized_build_whose_pin_drops_the_quantization_is_refused(qdyn_build, tmp_path):
    target = edited(qdyn_build, tmp_path, lambda enc: enc.pop("quantization"))
    with pytest.raises(EncoderMismatch, match="quantization"):
        Monitor.from_build(target)


def test_a_default_build_pinned_to_the_quantized_copy_is_refused(qdyn_build, tmp_path):
    """The float encoder's build cannot be handed the quantized copy's hashes: its encoder name makes the
    default copy the one checked, and the hashes differ."""
    qdyn = json.loads((qdyn_build / "extraction.json").read_text())["extraction"]["task"]["frozen"]["encoder"]
    target = edited(qdyn_build, tmp_path, lambda enc: enc.update(encoder=DEFAULT_ENCODER) or enc.pop("quantization"))
    with pytest.raises(EncoderMismatch, match="weights_sha256"):
        Monitor.from_build(target)
    assert qdyn["runtime"] != encoder_identity()["runtime"]


def test_without_onnx_the_quantized_encoder_is_a_precise_error(own_cache, monkeypatch):
    real = embedder.package_version

    def no_onnx(package):
        if package == "onnx":
            raise metadata.PackageNotFoundError("onnx")
        return real(package)

    monkeypatch.setattr(embedder, "package_version", no_onnx)
    for make in (lambda: Embedder(QDYN), lambda: encoder_identity(QDYN)):
        with pytest.raises(EmbedderUnavailable) as e:
            make()
        assert e.value.code == "env.embedder" and "onnx" in e.value.message and "veriguard[classifier]" in e.value.message
    assert Embedder().encoder.name == DEFAULT_ENCODER   # the default encoder does not need onnx


def test_a_bank_may_name_the_quantized_encoder(tmp_path):
    frozen = freeze_classifier(*_small_bank_spec(tmp_path, f'encoder = "{QDYN}"'))
    assert frozen["encoder"]["encoder"] == QDYN and frozen["encoder"]["quantization"]["onnx"] == metadata.version("onnx")
    assert CategoryClassifier.from_frozen(frozen).classify("Rent a pickup truck in Boise").labels == {"car"}


def test_onnx_is_pinned_in_the_classifier_extra_the_bootstrap_installs():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = [r for r in project["optional-dependencies"]["classifier"] if r.split("==")[0].strip() == "onnx"]
    assert pins == [f"onnx=={metadata.version('onnx')}"]
    assert "veriguard[synth,llm,sql,classifier,shell,mcp,agents]" in project["optional-dependencies"]["all"]
    assert '[all,test]' in (ROOT / "scripts" / "bootstrap.sh").read_text(encoding="utf-8")


def test_the_benchmark_measures_the_quantized_encoder():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_classifier.py"), "--help"], capture_output=True,
                         text=True, check=True).stdout
    assert QDYN in out
