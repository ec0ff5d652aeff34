"""The partly quantized encoder options (enforce/embedder.py): `minilm-l6-qmid` quantizes the weight products of
layers 1-4 only (the first and last layers stay float32), `minilm-l6-qffn-mid` only their feed-forward products. Each
is made once per machine into the encoder cache like `minilm-l6-qdyn`, the same bytes each time, named in the identity
a build pins (with its layers and parts), and refused (env.encoder, exit 3) when the copy or the pin differs. The
default encoder and the whole quantization keep their identities, cache folders and builds."""
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from veriguard.enforce import embedder
from veriguard.enforce.embedder import (DEFAULT_ENCODER, ENCODERS, RUNTIME_FORMAT, RUNTIME_GRAPH, RUNTIME_WEIGHTS,
                                        Embedder, EmbedderUnavailable, EncoderMismatch, Quantization, encoder_identity,
                                        layer_products, optimise, package_version, source_sha256)
from veriguard.enforce.monitor import Monitor
from veriguard.synth.classifier_build import freeze_classifier
from tests.unit.test_build_integrity import consistent, copy
from tests.unit.test_classifier_build import _small_bank_spec
from tests.unit.test_classifier_speed_s28 import EVERYONE, NOBODY, edited
from tests.unit.test_embedder_runtime import own_cache, sha  # noqa: F401  (own_cache: a fixture)
from tests.unit.test_evaluation import build_of

QMID, QFFN = "minilm-l6-qmid", "minilm-l6-qffn-mid"
ROOT = Path(__file__).resolve().parents[2]
V6 = [json.loads(line)["task"] for line in (ROOT / "tests/data/heldout_v6.jsonl").read_text().splitlines()[:40]]


def integer_and_float_products(folder: Path) -> tuple[int, int]:
    import onnx

    model = onnx.load(str(folder / RUNTIME_GRAPH), load_external_data=False)
    stored = {i.name for i in model.graph.initializer}
    integer = sum(n.op_type in ("DynamicQuantizeMatMul", "MatMulIntegerToFloat") for n in model.graph.node)
    return integer, sum(n.op_type == "MatMul" and n.input[1] in stored for n in model.graph.node)


@pytest.fixture(scope="module")
def qmid_build(tmp_path_factory):
    """The Mind2Web-SC build with a classifier frozen on minilm-l6-qmid (a small bank: fast to embed)."""
    tmp = tmp_path_factory.mktemp("qmid")
    frozen = freeze_classifier(*_small_bank_spec(tmp, f'encoder = "{QMID}"'))
    build = copy(build_of("mind2web_sc", tmp / "base"), tmp)
    doc = json.loads((build / "extraction.json").read_text())
    doc["extraction"]["task"]["frozen"] = frozen
    consistent(build, "extraction.json", (json.dumps(doc, indent=2) + "\n").encode())
    return build


@pytest.mark.parametrize("name, integer, floating", [(QMID, 24, 12), (QFFN, 8, 28)])
def test_a_partly_quantized_copy_is_the_same_bytes_each_time_and_keeps_its_other_products_float(tmp_path, name,
                                                                                               integer, floating):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        optimise(ENCODERS[name], tmp_path / folder)
    for f in (RUNTIME_GRAPH, RUNTIME_WEIGHTS):
        assert sha(tmp_path / "a" / f) == sha(tmp_path / "b" / f)
        assert sha(tmp_path / "a" / f) not in {sha(Embedder(e).runtime / f) for e in (DEFAULT_ENCODER, "minilm-l6-qdyn")}
    assert integer_and_float_products(tmp_path / "a") == (integer, floating)   # of 36 weight products (6 layers x 6)
    assert integer_and_float_products(Embedder().runtime) == (0, 36)


def test_the_products_are_picked_by_layer_and_part_and_a_graph_of_another_shape_is_refused():
    graph = Embedder().runtime / RUNTIME_GRAPH
    enc = ENCODERS[QMID]
    every = layer_products(graph, enc, Quantization(layers=tuple(range(6))))
    assert len(every) == 36 == len(set(every))
    assert layer_products(graph, enc, Quantization(layers=(1, 2, 3, 4))) == every[6:30]
    assert layer_products(graph, enc, Quantization(layers=(1, 2, 3, 4), parts=("feed-forward",))) == \
        [n for i, n in enumerate(every) if 1 <= i // 6 <= 4 and i % 6 >= 4]
    for bad in (Quantization(layers=(6,)), Quantization(layers=(1,), parts=("gate",))):
        with pytest.raises(EmbedderUnavailable) as e:
            layer_products(graph, enc, bad)
        assert e.value.code == "env.embedder" and "weight products" in e.value.message


def test_the_identity_names_the_layers_and_parts_and_the_whole_quantization_keeps_its_cache_folder():
    assert encoder_identity(QMID)["quantization"]["layers"] == [1, 2, 3, 4]
    assert "parts" not in encoder_identity(QMID)["quantization"]
    assert encoder_identity(QFFN)["quantization"]["parts"] == ["feed-forward"]
    whole = encoder_identity("minilm-l6-qdyn")["quantization"]
    assert "layers" not in whole and "parts" not in whole and "quantization" not in encoder_identity()
    # the key of minilm-l6-qdyn's copy as S28 made it: its settings as they were, so its copies and builds still hold
    made_by = [RUNTIME_FORMAT, source_sha256(ENCODERS["minilm-l6-qdyn"]), package_version("onnxruntime"),
               {"method": "onnxruntime.quantization.quantize_dynamic", "op_types": ["MatMul"], "weight_type": "QInt8",
                "per_channel": True, "reduce_range": False}, package_version("onnx")]
    key = hashlib.sha256(json.dumps(made_by).encode()).hexdigest()[:24]
    assert Embedder("minilm-l6-qdyn").runtime.name == f"minilm-l6-qdyn-{key}"


def test_the_partly_quantized_vectors_move_less_than_the_whole_quantization():
    base = Embedder().embed(V6)
    drift = {e: float(np.mean(1 - (Embedder(e).embed(V6) * base).sum(axis=1))) for e in ("minilm-l6-qdyn", QMID, QFFN)}
    assert 0 < drift[QFFN] < drift[QMID] < drift["minilm-l6-qdyn"] < 0.01


def test_a_monitor_runs_a_build_frozen_on_the_partly_quantized_encoder(qmid_build, own_cache):
    monitor = Monitor.from_build(qmid_build)
    clf = monitor.extractors["task"].classify.__self__
    assert clf.embedder.encoder.name == QMID and clf.embedder.identity()["quantization"]["layers"] == [1, 2, 3, 4]
    assert monitor.check({"confirmed_task": "Rent a pickup truck in Boise", "user_info": EVERYONE}).allowed
    assert not monitor.check({"confirmed_task": "Rent a pickup truck in Boise", "user_info": NOBODY}).allowed


def test_a_tampered_partly_quantized_copy_is_refused_and_a_damaged_graph_is_a_precise_error(qmid_build, own_cache):
    Monitor.from_build(qmid_build)
    weights = next(own_cache.glob(f"encoders/{QMID}-*/{RUNTIME_WEIGHTS}"))
    data = bytearray(weights.read_bytes())
    data[len(data) // 3] ^= 1
    weights.write_bytes(bytes(data))
    embedder._shared.cache_clear()
    with pytest.raises(EncoderMismatch) as e:
        Monitor.from_build(qmid_build)
    assert e.value.exit_code == 3 and e.value.code == "env.encoder" and "weights_sha256" in e.value.message
    graph = weights.with_name(RUNTIME_GRAPH)
    graph.write_bytes(graph.read_bytes() + b"\0")   # no longer a model onnxruntime reads
    embedder._shared.cache_clear()
    with pytest.raises(EmbedderUnavailable) as e:
        Monitor.from_build(qmid_build)
    assert e.value.code == "env.embedder" and "damaged" in e.value.message and str(graph.parent) in e.value.message


@pytest.mark.parametrize("edit", [lambda q: q.__setitem__("layers", [1, 2, 3]),
                                  lambda q: q.__setitem__("parts", ["feed-forward"]),
                                  lambda q: q.pop("layers")], ids=["other layers", "parts added", "layers dropped"])
def test_a_build_pinned_to_other_layers_or_parts_is_refused(qmid_build, tmp_path, edit):
    target = edited(qmid_build, tmp_path, lambda enc: edit(enc["quantization"]))
    with pytest.raises(EncoderMismatch) as e:
        Monitor.from_build(target)
    assert e.value.exit_code == 3 and "quantization" in e.value.message
