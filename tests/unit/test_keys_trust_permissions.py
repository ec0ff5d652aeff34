"""Trusted public keys that anyone may change (red-team, 2026-11-29): a world-writable folder of trusted keys, or a
world-writable .pub file in it, was accepted as a trust anchor, so every local user could add or swap the key that
builds are checked against. Like ssh's authorized_keys, such an anchor is refused (key.permissions)."""
import os

import pytest

from veriguard.enforce.keys import KeyFileError, load_trusted_keys, new_key_pair


@pytest.fixture
def anchor(tmp_path):
    d = tmp_path / "trusted"
    new_key_pair(tmp_path / "pair")
    d.mkdir()
    os.replace(tmp_path / "pair" / "veriguard.pub", d / "signer.pub")
    return d


def test_a_world_writable_folder_of_trusted_keys_is_refused(anchor):
    assert len(load_trusted_keys(anchor)) == 1
    os.chmod(anchor, 0o777)
    with pytest.raises(KeyFileError) as e:
        load_trusted_keys(anchor)
    assert e.value.code == "key.permissions" and "chmod o-w" in e.value.fix


def test_a_world_writable_trusted_key_file_is_refused(anchor):
    os.chmod(anchor / "signer.pub", 0o666)
    for source in (anchor, anchor / "signer.pub"):
        with pytest.raises(KeyFileError) as e:
            load_trusted_keys(source)
        assert e.value.code == "key.permissions"


def test_a_sticky_shared_folder_is_still_refused_for_trusted_keys(anchor):
    os.chmod(anchor, 0o1777)   # like /tmp: others cannot replace the files, but can add their own key
    with pytest.raises(KeyFileError):
        load_trusted_keys(anchor)


# Stop 20 (helper C): the verifier's public key is a trust anchor too.
def test_a_public_key_any_user_may_write_or_replace_is_refused_by_verify_log(tmp_path, capsys):
    """Before: verify-log --public-key took a world-writable key file (or one in a world-writable folder) and said
    "intact, anchored": whoever rewrote the log with a key of their own could put their public key there."""
    import shutil

    from veriguard.cli import main
    from veriguard.enforce.decision_log import DecisionLog
    from veriguard.enforce.keys import new_key_pair

    private, public, _ = new_key_pair(tmp_path / "k")
    log = tmp_path / "log.jsonl"
    DecisionLog(log, key=private).append({"allowed": True})
    assert main(["verify-log", str(log), "--public-key", str(public)]) == 0
    writable = tmp_path / "w.pub"
    shutil.copy(public, writable)
    writable.chmod(0o666)
    folder = tmp_path / "open"
    folder.mkdir()
    shutil.copy(public, folder / "p.pub")
    folder.chmod(0o777)
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    shutil.copy(public, sticky / "p.pub")
    sticky.chmod(0o1777)   # like /tmp: another user can add files there, not replace this one
    capsys.readouterr()
    assert main(["verify-log", str(log), "--public-key", str(writable)]) == 2
    assert main(["verify-log", str(log), "--public-key", str(folder / "p.pub")]) == 2
    assert "key.permissions" in capsys.readouterr().err
    assert main(["verify-log", str(log), "--public-key", str(sticky / "p.pub")]) == 0


# Red-team, 2026-11-29, night: a folder above the anchor in which every user may rename entries.
@pytest.mark.parametrize("levels", [1, 2])
def test_a_trusted_key_folder_below_a_folder_anyone_may_rename_in_is_refused(anchor, tmp_path, levels):
    """Before: only the folder of trusted keys (or the .pub named) and its files were checked. With o+w and no sticky bit
    on a folder above it, anyone could `mv trusted old && mkdir trusted && cp mine.pub trusted/`: their build then
    loaded as verified."""
    above = anchor.parent if levels == 1 else tmp_path.parent
    if levels == 2:   # tmp_path's parent is pytest's own folder: work one level down instead
        nested = tmp_path / "shared" / "project"
        nested.mkdir(parents=True)
        os.replace(anchor, nested / "trusted")
        anchor, above = nested / "trusted", tmp_path / "shared"
    mode = above.stat().st_mode
    os.chmod(above, 0o777)
    try:
        for source in (anchor, anchor / "signer.pub"):
            with pytest.raises(KeyFileError) as e:
                load_trusted_keys(source)
            assert e.value.code == "key.permissions" and str(above) in e.value.message and "chmod o-w" in e.value.fix
        os.chmod(above, 0o1777)   # sticky, like /tmp: no one may rename what another user owns
        assert len(load_trusted_keys(anchor)) == 1
    finally:
        os.chmod(above, mode)


def test_a_verifier_key_below_a_folder_anyone_may_rename_in_is_refused(tmp_path):
    """Before: verify-log's --public-key checked the key file and its own folder only, not the folders above it."""
    from veriguard.enforce.keys import load_verify_key

    _, public, _ = new_key_pair(tmp_path / "shared" / "keys")
    os.chmod(tmp_path / "shared", 0o777)
    try:
        with pytest.raises(KeyFileError) as e:
            load_verify_key(public)
        assert e.value.code == "key.permissions" and str(tmp_path / "shared") in e.value.message
    finally:
        os.chmod(tmp_path / "shared", 0o755)
    assert load_verify_key(public).key_id
