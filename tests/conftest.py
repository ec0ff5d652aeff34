"""Shared fixtures. Unit and property tests never start the JVM; integration tests share one
warm Nagini worker per session."""
from __future__ import annotations

import os
import socket
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "specs"
QUICK = os.environ.get("VERIGUARD_TEST_QUICK") == "1"  # set by `scripts/test --quick`


def examples(n: int) -> int:
    """A Hypothesis test's example budget: `n` in the full run (CI), a fifth of it (at least 20) in the quick run."""
    return max(20, n // 5) if QUICK else n
SHIPPED = sorted(SPECS.glob("*.toml"))
FIXTURES = Path(__file__).resolve().parent / "fixtures"

MINIMAL = '''
name = "mini"
request = "Adults only."

[types]
Role = { enum = ["admin", "user"] }

[arguments]
role = "Role"
age = "int"
items = "list[(str, str)]"

[tables.ok]
file = "ok.json"
signature = "(Role, str, str) -> bool"

[contract]
rules = """
rule adult "Users must be adults": age >= 18
rule access "Items must be permitted": forall (a, b) in items: ok(role, a, b)
"""
properties = """
property minors "Minors are denied": age < 18 ==> not allowed
"""

[[examples]]
name = "adult admin"
args = { role = "admin", age = 30, items = [["db", "x"]] }
allowed = true
violations = []
'''


def write_spec(tmp: Path, body: str = MINIMAL, *, table: str = '{"admin": {"db": ["x", "y"]}, "user": {"db": ["x"]}}',
               name: str = "mini.toml") -> Path:
    """A spec file (and its table) in `tmp`; `body` is dedented."""
    (tmp / "ok.json").write_text(table, encoding="utf-8")
    path = tmp / name
    path.write_text(textwrap.dedent(body).lstrip("\n"), encoding="utf-8")
    return path


# The tests that train a classifier on the shipped Mind2Web-SC bank (1,510 texts embedded: about 17 s, once per
# process; enforce.categories.bank_vectors). test_extract_llm's builds freeze one (synth.classifier_build: an `llm`
# entry with a bank carries it for `veriguard eval --extractor cascade`). Each module listed embeds it when run
# alone (22-24 s of a test's setup or call; 2026-11-28); outside the group each costs a --quick run that again.
SHIPPED_BANK = ("tests/unit/test_categories.py::", "tests/unit/test_build_integrity.py::test_the_mind2web_bank_is_covered",
                "tests/unit/test_classifier_build.py::",
                "tests/unit/test_extract_llm.py::", "tests/unit/test_extract_llm_eval.py::", "tests/unit/test_evaluation.py::",
                "tests/unit/test_embedder_runtime.py::", "tests/property/test_text_evasion.py::",
                "tests/unit/test_categories_attention.py::", "tests/unit/test_classifier_redteam2.py::",
                "tests/unit/test_classifier_redteam3.py::", "tests/unit/test_classifier_redteam4.py::")


def scheduling_scope(nodeid: str) -> str:
    """What pytest-xdist keeps in one process (scripts/test, `--dist loadgroup`): every integration test shares the
    scope "jvm" (one process, one warm JVM: two JVM processes beside the unit tests put three busy processes on 2
    cores, and a refutation hit Silicon's timeout in a fresh clone's CI run on 2026-11-23); the tests that train on
    the shipped bank share "shipped_bank" (one process embeds it); any other test shares its module's scope, so a
    module-scoped fixture is made once (in one process: two processes building the same wheel in the same tree
    raced, test_packaging, 2026-11-28)."""
    if nodeid.startswith("tests/integration/"):
        return "jvm"
    return "shipped_bank" if nodeid.startswith(SHIPPED_BANK) else nodeid.split("::", 1)[0]


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    """`-n 2 --dist loadgroup` (scripts/test): tests are scheduled by `scheduling_scope`; the integration tests run
    in one process, in order, on its one warm worker and proof cache. (xdist 3.8's own groups,
    from xdist_group marks, are lost under pytest 9: its node ids are no longer the `_nodeid` xdist rewrites.)"""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class JvmGroups(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return scheduling_scope(nodeid)

        def _assign_work_unit(self, node):
            # The integration tests are the long pole: the first process takes them first (xdist queues scopes
            # by their number of tests, which put "jvm" behind about 100 s of unit tests).
            if "jvm" in self.workqueue:
                self.workqueue.move_to_end("jvm", last=False)
            super()._assign_work_unit(node)

    return JvmGroups(config, log)


# How much the process without the JVM yields the CPU to the one with it (os.nice), in a run with integration tests.
# Both cores are busy until the unit tests are done (about 470 s of the run), the integration tests go on alone
# afterwards; the sooner the JVM's proofs get through, the sooner both end.
YIELD_TO_JVM = 4


def pytest_runtest_setup(item: pytest.Item) -> None:
    if not os.environ.get("PYTEST_XDIST_WORKER") or getattr(item.session, "_vg_first_test", None) is not None:
        return
    item.session._vg_first_test = item.nodeid  # type: ignore[attr-defined]
    integration = any(i.nodeid.startswith("tests/integration/") for i in item.session.items)
    if integration and scheduling_scope(item.nodeid) != "jvm":
        os.nice(YIELD_TO_JVM)


@pytest.fixture(scope="session")
def nagini_worker():
    from veriguard.verify.nagini import NaginiWorker

    worker = NaginiWorker()
    worker.start()
    yield worker
    worker.close()


@pytest.fixture(scope="session")
def proof_cache(_proof_cache_per_session):
    """The proof cache `veriguard synth` uses in this session: empty at its start, filled only by this
    session's real Nagini runs (an identical source is proved once per session)."""
    from veriguard.verify.proof_cache import ProofCache, default_dir

    return ProofCache(default_dir())


@pytest.fixture(scope="session")
def shipped_synthesis(nagini_worker, proof_cache, tmp_path_factory):
    """`get(stem)`: the shipped spec synthesized with the real Nagini as `veriguard synth` does (through the
    session's proof cache), once per session: (spec, SynthResult). Tests write their own builds from it."""
    from veriguard.synth.pipeline import synthesize_spec
    from veriguard.synth.specfile import load_spec

    done = {}

    def get(stem):
        if stem not in done:
            spec = load_spec(SPECS / f"{stem}.toml")
            done[stem] = spec, synthesize_spec(spec, nagini_worker, cache=proof_cache,
                                               workdir=tmp_path_factory.mktemp(f"synth-{stem}"))
        return done[stem]

    return get


LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")


def _loopback(address: object) -> bool:
    host = address[0] if isinstance(address, tuple) and address else address
    return isinstance(host, str) and (host in LOOPBACK_HOSTS or host.startswith("127.")) or \
        not isinstance(address, tuple)  # AF_UNIX paths stay on this machine


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Every test: a connection to anything but this machine fails the test. Provider tests use mock
    transports; tests that start a local server (a fixture) reach it on loopback."""
    real_connect, real_getaddrinfo = socket.socket.connect, socket.getaddrinfo

    def connect(sock, address, *args, **kwargs):
        if not _loopback(address):
            raise AssertionError(f"a test tried to use the network: {address!r}")
        return real_connect(sock, address, *args, **kwargs)

    def getaddrinfo(host, *args, **kwargs):
        if host not in (None, *LOOPBACK_HOSTS) and not str(host).startswith("127."):
            raise AssertionError(f"a test tried to resolve {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    for name in ("ANTHROPIC_BASE_URL", "ANTHROPIC_CUSTOM_HEADERS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@pytest.fixture(autouse=True, scope="session")
def _proof_cache_per_session(tmp_path_factory):
    """Tests never read or fill ~/.cache/veriguard: each session proves afresh with the real verifier."""
    mp = pytest.MonkeyPatch()
    mp.setenv("VERIGUARD_CACHE", str(tmp_path_factory.mktemp("veriguard-cache")))
    yield
    mp.undo()
