"""The layers stay in their place (DESIGN.md), checked twice: on the imports each module's source
makes, and on what importing the runtime really loads."""
import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

LAYERS = ("contracts", "verify", "providers", "synth", "enforce")
MAY_IMPORT = {
    "contracts": {"contracts"},
    "verify": {"contracts", "verify"},
    # LLM providers, below synthesis and the online `llm` extractor: they share nothing else
    "providers": {"providers", "contracts.errors", "contracts.strict_json"},
    # synth/classifier_build trains the classifier the monitor will run, with the monitor's own code, and
    # freezes it into the build (so synth imports those two online modules; enforce never imports synth)
    # and reads a shell spec's command and zone tables with the monitor's reader, to refuse them at synth
    # and reads enum values as the classifier reads text (textnorm.strip_invisible: stdlib only), to refuse look-alikes
    "synth": {"contracts", "verify", "providers", "synth", "enforce.categories", "enforce.embedder", "enforce.shell_table",
              "enforce.textnorm"},
    # the online side: only its own modules, the stdlib-only support it shares with frozen builds, and the
    # providers (imported lazily, by the `llm` extractor only)
    "enforce": {"enforce", "contracts.errors", "contracts.build_format", "contracts.cache_dir", "contracts.strict_json",
                "contracts.regex_safety", "contracts.regular_file", "contracts.shown", "providers"},
}
SYNTHESIS = ("nagini", "z3", "lark", "hypothesis", "jpype", "anthropic", "veriguard.synth", "veriguard.verify")
LLM_CLIENTS = ("anthropic", "httpx2", "openai", "veriguard.providers.anthropic_api", "veriguard.providers.openai_api")
EXTRACTOR_EXTRAS = ("onnxruntime", "tokenizers", "numpy", "sqlglot", "tree_sitter", "tree_sitter_bash", "mcp", "agents")


def imported_layers(path: Path) -> set[str]:
    """The veriguard modules `path` imports, as `layer` or `layer.module`, wherever the import stands."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
        for name in names:
            parts = name.split(".")
            if parts[0] == "veriguard" and len(parts) > 1 and parts[1] in LAYERS:
                found.add(".".join(parts[1:3]))
            elif parts[0] in LAYERS:
                found.add("old-style:" + name)
    return found


@pytest.mark.parametrize("layer", LAYERS)
def test_each_layer_imports_only_what_it_may(layer):
    wrong = {}
    for path in sorted((ROOT / layer).rglob("*.py")):
        for name in imported_layers(path):
            if name.startswith("old-style:") or not any(name == ok or name.startswith(ok + ".") or
                                                          (ok in LAYERS and name.split(".")[0] == ok)
                                                          for ok in MAY_IMPORT[layer]):
                wrong.setdefault(str(path.relative_to(ROOT)), []).append(name)
    assert not wrong, f"{layer} imports outside its layer: {wrong}"


def loaded_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, cwd=ROOT.parent, timeout=120)
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout.splitlines()[-1]))


def heavy(loaded: set[str], roots: tuple[str, ...]) -> list[str]:
    return sorted(m for m in loaded if any(m == r or m.startswith(r + ".") for r in roots))


def test_the_runtime_api_loads_neither_synthesis_tools_nor_extractor_extras():
    loaded = loaded_after("from veriguard import Monitor, load_policy, Guard\nimport veriguard.enforce.extractors")
    assert not heavy(loaded, SYNTHESIS + EXTRACTOR_EXTRAS + LLM_CLIENTS)


def test_the_llm_extractor_and_the_providers_load_no_client_until_one_is_built():
    modules = [f"veriguard.providers.{p.stem}" for p in (ROOT / "providers").glob("*.py")
               if p.stem not in ("__init__", "anthropic_api", "openai_api", "http")]  # http: the clients themselves
    loaded = loaded_after("\n".join(f"import {m}" for m in modules + ["veriguard.enforce.extract_llm"]))
    assert not heavy(loaded, SYNTHESIS + LLM_CLIENTS)


def test_no_online_module_loads_a_synthesis_tool():
    online = sorted(p.stem for p in (ROOT / "enforce").glob("*.py") if p.stem != "__init__")
    loaded = loaded_after("\n".join(f"import veriguard.enforce.{m}" for m in online))
    assert not heavy(loaded, SYNTHESIS)


def test_the_contract_layer_loads_no_solver_jvm_or_llm_at_import():
    names = [p.stem for p in (ROOT / "contracts").glob("*.py") if p.stem != "__init__"]
    loaded = loaded_after("\n".join(f"import veriguard.contracts.{m}" for m in names))
    assert not heavy(loaded, ("z3", "nagini", "jpype", "anthropic", "openai"))


def test_no_layer_is_importable_at_the_top_level_from_outside_the_repository():
    out = subprocess.run([sys.executable, "-c", "import importlib.util, json; print(json.dumps("
                          "[n for n in ('contracts', 'verify', 'providers', 'synth', 'enforce')"
                          " if importlib.util.find_spec(n)]))"],
                         capture_output=True, text=True, cwd=ROOT.parent, timeout=60)
    assert out.returncode == 0 and json.loads(out.stdout) == [], out.stdout + out.stderr


def test_the_contract_layer_holds_no_product_configuration():
    """contracts.spec.Spec is what the contract layer needs; [extraction], [enforcement] and [verify] belong to
    synth.specfile.SpecFile (the monitor reads its part from the build's extraction.json)."""
    import dataclasses

    from veriguard.contracts.spec import Spec
    from veriguard.synth.specfile import SpecFile

    contract_fields = {f.name for f in dataclasses.fields(Spec)}
    assert not contract_fields & {"extraction", "extraction_files", "enforcement", "settings", "clarifications"}
    assert {"extraction", "extraction_files", "enforcement", "settings"} <= {f.name for f in dataclasses.fields(SpecFile)}
    assert not any("VerifySettings" in p.read_text(encoding="utf-8") for p in (ROOT / "contracts").glob("*.py"))
