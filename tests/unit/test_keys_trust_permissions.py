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
