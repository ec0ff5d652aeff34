"""Freeze the embedded task classifier into a build: synth trains it on the spec's example bank once and
writes the result (enforce.categories.to_frozen: weights, the bank's vectors and words, cues, settings, the
encoder's identity) into the [extraction] entry that declares it. extraction.json is certified, so the
certificate binds the frozen classifier; the monitor loads it without the bank and without training."""
from __future__ import annotations

import hashlib
import re
import tomllib
from pathlib import Path
from typing import Any, Mapping

from veriguard.contracts.errors import EnvironmentProblem, SpecError
from veriguard.contracts.schema import argument_schema
from veriguard.contracts.spec import Spec
from veriguard.synth.specfile import PATH_FIX, file_in_folder


def frozen_extraction(spec: Spec) -> dict[str, Any]:
    """spec.extraction, with a `frozen` classifier in every entry that names a `bank` (`from = "classifier"`,
    and the LLM extractor's cascade and both modes)."""
    return {name: {**cfg, "frozen": freeze_classifier(spec, name, cfg)}
            if isinstance(cfg, Mapping) and "bank" in cfg else cfg
            for name, cfg in spec.extraction.items()}


def freeze_classifier(spec: Spec, argument: str, cfg: Mapping[str, Any]) -> dict[str, Any]:
    from veriguard.enforce.categories import parse_bank, to_frozen, trained_on
    from veriguard.enforce.embedder import EmbedderUnavailable, shared_embedder

    rel = str(cfg.get("bank", ""))
    try:
        path = file_in_folder(Path(spec.path).parent, rel)
        data = path.read_bytes()
    except (ValueError, OSError) as e:
        raise SpecError("spec.file", f"[extraction] {argument}: bank {rel!r} cannot be read ({e})", file=spec.path,
                        fix=PATH_FIX) from None
    digest = hashlib.sha256(data).hexdigest()
    if dict(spec.extraction_files).get(rel, digest) != digest:
        raise SpecError("freeze.changed", f"{path} changed while the policy was synthesized", file=str(path),
                        fix="re-run synth once the file is final")
    try:
        bank = parse_bank(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, KeyError, TypeError, AttributeError, re.error) as e:
        raise SpecError("spec.bank", f"the example bank is malformed: {type(e).__name__}: {e}", file=str(path),
                        fix="each [categories.NAME] needs `positives` (a list of tasks) and may have `cues` (regular "
                        "expressions), `negatives` and `description`; see specs/mind2web_sc/categories.toml") from None
    fields = [f for f, _ in dict(argument_schema(spec.signature)).get(argument, {}).get("fields", [])]
    if sorted(bank.names) != sorted(fields):
        raise SpecError("spec.bank", f"the bank's categories {sorted(bank.names)} are not the fields of argument "
                        f"{argument!r} {sorted(fields)}: a field without a category would never be set", file=str(path),
                        fix=f"give the bank one [categories.NAME] table per field of {argument!r}, and no other")
    try:
        embedder = shared_embedder()
    except EmbedderUnavailable as e:
        raise EnvironmentProblem("env.embedder", str(e), fix="pip install 'veriguard[classifier]' (or re-run "
                                 "./scripts/bootstrap.sh)") from None
    return to_frozen(trained_on(bank, embedder), embedder.identity(), digest)
