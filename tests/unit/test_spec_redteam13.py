"""The thirteenth red-team pass on specs (helper C32): a byte order mark, and a spec of megabytes.

On c1d7034 a spec saved with a UTF-8 byte order mark (Notepad's default) was refused as "Invalid statement" at 1:1,
which says nothing of why; and a 10 MB spec (one long string, or a comment) was read for 15 s and more before synth
went on (synth.tomlpos scans each string for its place), where the file limit was 64 MiB. A BOM is now named
(`spec.encoding`), and a spec's own file is read up to 1 MiB (`spec.file`, exit 2): its tables are files of their own.
"""
import pytest

from veriguard.cli import main
from veriguard.contracts.errors import SpecError
from veriguard.synth.specfile import load_spec
from tests.unit.test_spec_redteam9 import write


def mutated(tmp_path, change):
    path = write(tmp_path)
    path.write_bytes(change(path.read_bytes()))
    return path


BOMS = {"a BOM": lambda b: b"\xef\xbb\xbf" + b,
        "a BOM and CRLF line ends": lambda b: b"\xef\xbb\xbf" + b.replace(b"\n", b"\r\n"),
        "two BOMs": lambda b: b"\xef\xbb\xbf" * 2 + b}


@pytest.mark.parametrize("change", BOMS.values(), ids=BOMS.keys())
def test_a_byte_order_mark_is_named(tmp_path, change):
    with pytest.raises(SpecError) as e:
        load_spec(mutated(tmp_path, change))
    assert e.value.code == "spec.encoding" and "byte order mark" in e.value.message and "without" in e.value.fix


LARGE = {"a 2 MB request": lambda b: b.replace(b'"Pay invoices; never pay evil.com."', b'"' + b"x" * 2_000_000 + b'"'),
         "a 2 MB comment": lambda b: b"#" + b"x" * 2_000_000 + b"\n" + b,
         "2 MB of spaces in the rules": lambda b: b.replace(b'rules = """\n', b'rules = """\n' + b" " * 2_000_000 + b"\n")}


@pytest.mark.parametrize("change", LARGE.values(), ids=LARGE.keys())
def test_a_spec_over_a_megabyte_is_not_read(tmp_path, change):
    with pytest.raises(SpecError) as e:
        load_spec(mutated(tmp_path, change))
    assert e.value.code == "spec.file" and "larger than 1,048,576 bytes" in e.value.message, e.value


def test_synth_refuses_a_bom_with_exit_2_and_writes_nothing(tmp_path, capsys):
    path = mutated(tmp_path, BOMS["a BOM"])
    assert main(["synth", str(path), "--out", str(tmp_path / "out")]) == 2
    assert "byte order mark" in capsys.readouterr().err and not (tmp_path / "out").exists()


CONTROLS = {"CRLF line ends": lambda b: b.replace(b"\n", b"\r\n"),
            "a no-break space escaped in the request": lambda b: b.replace(b"Pay invoices;", b"Pay invoices\\u00a0;"),
            "a comment of 100 KB": lambda b: b"#" + b"x" * 100_000 + b"\n" + b}


@pytest.mark.parametrize("change", CONTROLS.values(), ids=CONTROLS.keys())
def test_crlf_and_a_long_comment_load(tmp_path, change):
    assert [r.id for r in load_spec(mutated(tmp_path, change)).contract.rules] == ["not_evil", "not_blocked", "small"]
