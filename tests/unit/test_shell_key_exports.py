"""gpg prints the secret keys of its keyring on `--export-secret-keys` (found open on 2026-11-29, evening: unknown, so a
human's approval let it print them, where `pass show` and `gh auth token` are reads of their stores, denied even
approved): a read of ~/.gnupg now; gpg's other uses stay unknown without it."""
from __future__ import annotations

import pytest

from tests.unit.test_shell_indirect_config import touched

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")


@pytest.mark.parametrize("command", ["gpg --export-secret-keys", "gpg --armor --export-secret-keys me@x",
                                     "gpg2 --export-secret-subkeys", "gpg --export-ssh-key me@x",
                                     "gpg -a --export-secret-key me@x > /tmp/k"])
def test_exporting_secret_keys_reads_the_keyring(command: str) -> None:
    assert ("read", "cloud_credentials") in touched(command), command


@pytest.mark.parametrize("command", ["gpg --export me@x", "gpg --verify x.sig x", "gpg --list-keys"])
def test_other_uses_do_not(command: str) -> None:
    assert ("read", "cloud_credentials") not in touched(command), command
