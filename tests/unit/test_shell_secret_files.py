"""Secrets outside the classic credential folders (red-team pass of 2026-11-23, evening): Claude Code's user file
(it can hold the API key), the system's password hashes, shell and REPL histories, browsers' profiles and the
desktop keyrings are credentials in the shell_agent zone map, for the shell and for the file tools; a recursive
read of the project still touches none of them. Builds are made without Nagini."""
from __future__ import annotations

import pytest

from veriguard.enforce.shell import analyse
from tests.unit.test_shell_indirect_config import COMMANDS, HOME, PROJECT, ZONES

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")

SECRETS = ["~/.claude.json", "/etc/shadow", "/etc/gshadow", "~/.bash_history", "~/.zsh_history", "~/.python_history",
           "~/.psql_history", "~/.local/share/fish/fish_history", "~/.mozilla/firefox/x.default/logins.json",
           "'~/.config/google-chrome/Default/Login Data'", "~/.local/share/keyrings/login.keyring",
           # database clients', package publishers', build tools', sync, tunnel and data tools' password and token files
           # (red-team pass of 2026-11-28, evening)
           "~/.pgpass", "~/.my.cnf", "~/.config/hub", "~/.gem/credentials", "~/.m2/settings.xml",
           "~/.gradle/gradle.properties", "~/.config/composer/auth.json", "~/.config/rclone/rclone.conf", "~/.s3cfg",
           "~/.config/containers/auth.json", "~/.config/sops/age/keys.txt", "~/.config/ngrok/ngrok.yml",
           "~/.databrickscfg", "~/.dbt/profiles.yml", "~/.kaggle/kaggle.json", "~/.cache/huggingface/token",
           "~/.pulumi/credentials.json", "~/.msmtprc"]


def touched(command: str) -> set[tuple[str, str]]:
    return set(analyse(command, cwd=PROJECT, home=HOME, workspace=PROJECT, commands=COMMANDS, zones=ZONES).touched)


@pytest.mark.parametrize("path", SECRETS)
def test_reading_it_is_a_credential_read(path: str) -> None:
    assert ("read", "cloud_credentials") in touched(f"cat {path}")


@pytest.mark.parametrize("path", SECRETS)
def test_writing_it_is_a_credential_write(path: str) -> None:
    assert ("write", "cloud_credentials") in touched(f"echo x > {path}")


@pytest.mark.parametrize("path", ["~/.pgpass~", "~/.netrc.bak", "~/.git-credentials.old", "~/.bash_history.1",
                                  "~/.my.cnf.swp", "~/.docker/config.json.orig"])
def test_a_backup_or_swap_copy_of_a_secret_file_is_a_credential(path: str) -> None:
    assert ("read", "cloud_credentials") in touched(f"cat {path}")


@pytest.mark.parametrize("command", ["grep -r TODO .", "rm -rf build", "ls -R", "find . -name '*.py'"])
def test_recursive_work_in_the_project_touches_no_secret(command: str) -> None:
    # .claude/, .git/hooks: read; the project's own .env (project_secrets) is read and changed as the workspace is
    assert {zone for _, zone in touched(command)} <= {"workspace", "agent_config", "project_secrets"}
