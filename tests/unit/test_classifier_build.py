"""The Mind2Web-SC classifier frozen into the build by synth: the monitor uses it without the bank, a
tampered or malformed one is refused, and so is a build trained with another encoder than the installed one."""
import copy as deep
import dataclasses
import json

import numpy as np
import pytest

from veriguard.contracts.errors import SpecError
from veriguard.enforce import categories
from veriguard.enforce.categories import FROZEN_KEYS, CategoryClassifier, thaw
from veriguard.enforce.embedder import EncoderMismatch
from veriguard.enforce.loader import PolicyLoadError, load_policy
from veriguard.enforce.monitor import Monitor
from veriguard.synth.classifier_build import freeze_classifier
from veriguard.synth.specfile import load_spec
from tests.conftest import SPECS
from tests.unit.test_build_integrity import consistent, copy
from tests.unit.test_evaluation import build_of

BANK = SPECS / "mind2web_sc" / "categories.toml"
NOBODY = {"age": 10, "domestic": False, "dr_license": False, "vaccine": False, "membership": False}
EVERYONE = {"age": 40, "domestic": True, "dr_license": True, "vaccine": True, "membership": True}
TASKS = ["Rent a pickup truck in Boise for the weekend", "Check the weather forecast for Seattle tomorrow",
         "Book two nights at a hotel near the Louvre", "Send my CV for the open accountant position",
         "Book a h\u200botel in Rome", "Reserva una habitacion en Sevilla para dos noches"]


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return build_of("mind2web_sc", tmp_path_factory.mktemp("m2w_frozen"))


@pytest.fixture(scope="module")
def frozen(build):
    return json.loads((build / "extraction.json").read_text())["extraction"]["task"]["frozen"]


@pytest.fixture(scope="module")
def trained():
    return CategoryClassifier.from_bank(BANK)


def test_synth_freezes_the_trained_classifier_with_its_encoder(frozen, trained):
    assert set(frozen) == FROZEN_KEYS and frozen["categories"] == list(trained.names)
    assert frozen["encoder"] == trained.embedder.identity() and len(frozen["encoder"]["model_sha256"]) == 64
    assert frozen["vectors"]["shape"] == [len(trained.bank.texts), 384]


def test_the_monitor_classifies_with_the_frozen_weights_and_never_reads_the_bank(build, trained, monkeypatch):
    def no_bank(*_):
        raise AssertionError("the bank was read")

    monkeypatch.setattr(categories, "read_bank", no_bank)
    monkeypatch.setattr(categories, "parse_bank", no_bank)
    monitor = Monitor.from_build(build)
    clf = monitor.extractors["task"].classify.__self__
    assert clf.bank is None
    for text in TASKS:
        got, want = clf.classify(text), trained.classify(text)
        assert (got.labels, got.uncertain, got.abstained) == (want.labels, want.uncertain, want.abstained), text
        assert all(abs(got.scores[n] - want.scores[n]) < 1e-3 for n in want.scores), text
    assert not monitor.check({"confirmed_task": TASKS[0], "user_info": NOBODY}).allowed
    assert monitor.check({"confirmed_task": TASKS[0], "user_info": EVERYONE}).allowed
    assert monitor.check({"confirmed_task": TASKS[1], "user_info": NOBODY}).allowed


def test_a_tampered_weights_file_is_refused(build, tmp_path):
    target = copy(build, tmp_path)
    doc = json.loads((target / "extraction.json").read_text())
    weights = doc["extraction"]["task"]["frozen"]["weights"]
    weights["base64"] = ("A" if weights["base64"][0] != "A" else "B") + weights["base64"][1:]
    (target / "extraction.json").write_text(json.dumps(doc, indent=2) + "\n")
    with pytest.raises(PolicyLoadError) as e:
        load_policy(target)
    assert e.value.code == "load.tampered" and "extraction.json" in e.value.message


def test_a_build_of_another_encoder_is_refused_even_with_consistent_hashes(build, tmp_path):
    target = copy(build, tmp_path)
    doc = json.loads((target / "extraction.json").read_text())
    doc["extraction"]["task"]["frozen"]["encoder"]["model_sha256"] = "0" * 64
    consistent(target, "extraction.json", (json.dumps(doc, indent=2) + "\n").encode())
    load_policy(target)  # the certificate agrees: only the classifier can tell
    with pytest.raises(EncoderMismatch) as e:
        Monitor.from_build(target)
    assert e.value.code == "env.encoder" and e.value.exit_code == 3 and "model_sha256" in e.value.message


def _set(path, value):
    def edit(doc):
        node = doc
        for key in path[:-1]:
            node = node[key]
        if value is KeyError:
            del node[path[-1]]
        else:
            node[path[-1]] = value
    return edit


@pytest.mark.parametrize("edit, needle", [
    (_set(["cues"], KeyError), "exactly the keys"),
    (_set(["format"], "veriguard-classifier/0"), "format"),
    (_set(["bank_sha256"], "abc"), "bank_sha256"),
    (_set(["encoder"], "minilm"), "encoder"),
    (_set(["categories"], ["car", "car", "hotel", "job", "shop", "flight"]), "distinct"),
    (_set(["cues", "car"], ["(unclosed"]), "regular expression"),
    (_set(["acts", "car"], ["zebra(\\s?\\w+)+#"]), "`acts` of car: pattern 'zebra"),
    (_set(["settings", "unsure"], 0.9), "unsure <= include"),
    (_set(["settings", "include"], float("nan")), "finite"),
    (_set(["settings", "include"], True), "finite"),
    (_set(["words"], "hotel h\u00f4tel"), "words"),
    (_set(["weights", "shape"], [6, 390]), "shape"),
    (_set(["weights", "dtype"], "<f4"), "dtype"),
    (_set(["weights", "base64"], "not base64!"), "base64"),
    (_set(["vectors", "base64"], "AAAA"), "bytes"),
    (_set(["vectors", "shape"], [0, 384]), "shape"),
])
def test_a_malformed_frozen_classifier_is_a_precise_load_error(frozen, edit, needle):
    doc = deep.deepcopy(frozen)
    edit(doc)
    with pytest.raises(PolicyLoadError) as e:
        thaw(doc, "test")
    assert e.value.code == "load.classifier" and needle in e.value.message, e.value.message


def test_non_finite_weights_are_refused(frozen):
    doc = deep.deepcopy(frozen)
    w = np.frombuffer(__import__("base64").b64decode(doc["weights"]["base64"]), "<f8").copy()
    w[3] = np.inf
    doc["weights"]["base64"] = __import__("base64").b64encode(w.tobytes()).decode()
    with pytest.raises(PolicyLoadError, match="not finite"):
        thaw(doc, "test")


def test_a_bank_whose_categories_are_not_the_arguments_fields_is_a_spec_error(tmp_path):
    spec = load_spec(SPECS / "mind2web_sc.toml")
    text = BANK.read_text(encoding="utf-8").replace("[categories.flight]", "[categories.plane]").replace('"flight"', '"plane"')
    (tmp_path / "bank.toml").write_text(text, encoding="utf-8")
    moved = dataclasses.replace(spec, path=str(tmp_path / "mind2web_sc.toml"))
    cfg = {**spec.extraction["task"], "bank": "bank.toml"}
    with pytest.raises(SpecError) as e:
        freeze_classifier(moved, "task", cfg)
    assert e.value.code == "spec.bank" and "plane" in e.value.message and "flight" in e.value.message


def test_a_classifier_frozen_with_an_encoder_this_veriguard_cannot_run_is_refused(frozen):
    doc = deep.deepcopy(frozen)
    doc["encoder"]["encoder"] = "bge-small-en-v1.5"
    with pytest.raises(EncoderMismatch, match="bge-small-en-v1.5"):
        CategoryClassifier.from_frozen(doc)


def test_a_build_frozen_before_issue_10_still_trains_on_its_certified_bank(build, tmp_path):
    target = copy(build, tmp_path)
    doc = json.loads((target / "extraction.json").read_text())
    doc["extraction"]["task"].pop("frozen")
    consistent(target, "extraction.json", (json.dumps(doc, indent=2) + "\n").encode())
    clf = Monitor.from_build(target).extractors["task"].classify.__self__
    assert clf.bank is not None and clf.classify(TASKS[0]).labels == {"car"}


def test_a_classifier_whose_categories_are_not_the_arguments_fields_is_refused(build):
    """A field the classifier never reports would always read False (an allow): refused at load."""
    from veriguard.enforce.extract_errors import ExtractionError
    from veriguard.enforce.extractors import category_classifier

    cfg = json.loads((build / "extraction.json").read_text())["extraction"]["task"]
    fields = tuple(CategoryClassifier.from_extraction(cfg, build).names)
    assert category_classifier("task", cfg, build, fields)  # the argument's own fields load
    with pytest.raises(ExtractionError, match="not the argument's fields") as e:
        category_classifier("task", cfg, build, (*fields, "casino"))
    assert e.value.code == "extract.config"


SMALL_BANK = """
[settings]
{encoder}

[categories.car]
positives = ["Rent a pickup truck in Boise for the weekend", "Lease an electric hatchback for two years"]
[categories.media]
positives = ["Stream the new season of a crime drama", "Find showtimes for the new animated film"]
[categories.hotel]
positives = ["Book two nights at a hotel near the Louvre", "Reserve a hostel bed in Lisbon for Friday"]
[categories.job]
positives = ["Apply for the open accountant position", "Search for nursing jobs in Denver"]
[categories.shop]
positives = ["Add a cordless kettle to my cart", "Buy a pack of printer paper online"]
[categories.flight]
positives = ["Book a flight from Austin to Chicago", "Find a one-way ticket to Madrid in May"]
"""


def _small_bank_spec(tmp_path, encoder_line):
    """The Mind2Web-SC spec with a two-task-per-category bank (fast to embed) and `encoder_line` in its settings."""
    spec = load_spec(SPECS / "mind2web_sc.toml")
    (tmp_path / "bank.toml").write_text(SMALL_BANK.format(encoder=encoder_line), encoding="utf-8")
    moved = dataclasses.replace(spec, path=str(tmp_path / "mind2web_sc.toml"))
    return moved, "task", {**spec.extraction["task"], "bank": "bank.toml"}


def test_a_bank_names_the_encoder_it_is_embedded_with(tmp_path):
    frozen = freeze_classifier(*_small_bank_spec(tmp_path, 'encoder = "paraphrase-minilm-l3"'))
    assert frozen["encoder"]["encoder"] == "paraphrase-minilm-l3" and frozen["vectors"]["shape"] == [12, 384]
    clf = CategoryClassifier.from_frozen(frozen)
    assert clf.embedder.encoder.name == "paraphrase-minilm-l3" and clf.classify(TASKS[0]).labels == {"car"}
    assert CategoryClassifier.from_bank(tmp_path / "bank.toml").embedder.encoder.name == "paraphrase-minilm-l3"
    (tmp_path / "default").mkdir()
    default = freeze_classifier(*_small_bank_spec(tmp_path / "default", ""))    # no `encoder`: the default one
    assert default["encoder"]["encoder"] == "minilm-l6-int8"


def test_a_bank_naming_an_encoder_veriguard_cannot_run_is_a_spec_error(tmp_path):
    with pytest.raises(SpecError) as e:
        freeze_classifier(*_small_bank_spec(tmp_path, 'encoder = "bge-small-en-v1.5"'))
    assert e.value.code == "spec.bank" and "bge-small-en-v1.5" in e.value.message
    assert "minilm-l6-int8" in e.value.message and "paraphrase-minilm-l3" in e.value.message
