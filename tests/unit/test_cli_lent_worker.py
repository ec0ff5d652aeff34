"""main(argv, worker=...): a command that needs Nagini borrows the caller's worker and leaves it open (the
integration tests run CLI commands on their session's warm JVM). No JVM here: the worker is a stand-in."""
import json

from tests.conftest import FIXTURES
from veriguard.cli import main

NAGINI = FIXTURES / "nagini"


class StandIn:
    def __init__(self, status):
        self.status, self.files, self.closed = status, [], 0

    def verify_file(self, path, **kw):
        self.files.append(path.name)
        return {"status": self.status, "errors": [], "seconds": 0.5}

    def close(self):
        self.closed += 1


def test_verify_borrows_the_lent_worker_and_leaves_it_open(capsys):
    worker = StandIn("proved")
    code = main(["verify", str(NAGINI / "small_good.py"), str(NAGINI / "small_bad.py"), "--json"], worker=worker)
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and [r["verdict"] for r in out["results"]] == ["PROVED", "PROVED"]
    assert worker.files == ["small_good.py", "small_bad.py"] and worker.closed == 0


def test_the_lent_workers_answer_is_the_verdict(capsys):
    worker = StandIn("crash")
    code = main(["verify", str(NAGINI / "small_good.py"), "--json"], worker=worker)
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["results"][0]["verdict"] == "ERROR" and worker.closed == 0
