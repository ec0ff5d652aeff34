"""The files of a build the certificate cannot cover (certificate.json and signature.json themselves) are read as
carefully as the certified ones: a FIFO put in their place hung the loader (and so every hook call) for ever."""
import os
import shutil
import subprocess
import sys

import pytest

from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)

LOAD = "import sys; from veriguard.enforce.loader import load_policy\n" \
       "try:\n    load_policy(sys.argv[1]); print('loaded')\nexcept Exception as e:\n    print(e.code)"


def load_in_child(build):
    done = subprocess.run([sys.executable, "-c", LOAD, str(build)], capture_output=True, text=True, timeout=60,
                          env={k: v for k, v in os.environ.items() if not k.startswith("VERIGUARD_")})
    return done.stdout.strip()


@pytest.fixture
def build(payments_build, tmp_path):
    target = tmp_path / "payments"
    shutil.copytree(payments_build, target)
    return target


def test_a_fifo_as_the_signature_is_refused_without_waiting(build):
    os.mkfifo(build / "signature.json")
    assert load_in_child(build) == "load.signature"


def test_a_fifo_as_the_certificate_after_the_first_look_is_refused_without_waiting(build, monkeypatch):
    from veriguard.enforce.loader import PolicyLoadError, load_policy

    real = build / "certificate.json"
    real.unlink()
    os.mkfifo(real)
    monkeypatch.setattr("pathlib.Path.is_file", lambda self: True)   # swapped between the look and the read
    with pytest.raises(PolicyLoadError) as e:
        load_policy(build)
    assert e.value.code == "load.certificate" and "not a regular file" in e.value.message


@pytest.mark.parametrize("name", ["report.md", "run.json"])
def test_an_uncertified_name_that_is_a_folder_is_refused_with_whatever_it_holds(build, name):
    """report.md and run.json may sit beside the certified files, unchecked; as folders they hid anything (a .pth,
    a package, a .pyc) from the loader's look for files the certificate does not cover."""
    from veriguard.enforce.loader import PolicyLoadError, load_policy

    (build / name).unlink(missing_ok=True)
    (build / name / "__pycache__").mkdir(parents=True)
    (build / name / "evil.pth").write_text("import os\n")
    with pytest.raises(PolicyLoadError) as e:
        load_policy(build)
    assert e.value.code == "load.tampered" and name in e.value.message


def test_an_uncertified_name_that_is_a_symbolic_link_is_refused(build, tmp_path):
    from veriguard.enforce.loader import PolicyLoadError, load_policy

    (build / "report.md").unlink()
    (tmp_path / "elsewhere").mkdir()
    (build / "report.md").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(PolicyLoadError):
        load_policy(build)


def test_a_folder_in_spec_that_leads_to_no_certified_file_is_refused_as_the_audit_does(build):
    from veriguard.enforce.loader import PolicyLoadError, load_policy

    (build / "spec" / "__pycache__").mkdir()
    with pytest.raises(PolicyLoadError) as e:
        load_policy(build)
    assert e.value.code == "load.tampered" and "__pycache__" in e.value.message
