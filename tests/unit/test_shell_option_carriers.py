"""Options that reach a program other than through its own words (red-team pass of 2026-11-29, late morning): the
variables that carry a program's options (PYTEST_ADDOPTS, GOFLAGS) were harmless, so `PYTEST_ADDOPTS=--basetemp=.claude
pytest` (pytest empties its basetemp) and `GOFLAGS=-o=.claude/settings.json go build` were allowed while the same
options on the command line were denied; python's `-X pycache_prefix=DIR` writes compiled modules under DIR and its
value was no path."""
from __future__ import annotations

import pytest

from veriguard.enforce.shell import analyse
from veriguard.enforce.shell_table import load_commands, load_zones
from tests.conftest import ROOT
from tests.unit.test_shell_indirect_config import COMMANDS, HOME, PROJECT, ZONES

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")

OS_COMMANDS = load_commands(ROOT / "specs" / "os_agent" / "commands.toml")
OS_ZONES = load_zones(ROOT / "specs" / "os_agent" / "zones.toml")


def analysed(command: str, *, os_agent: bool = False):
    return analyse(command, cwd=PROJECT, home=HOME, workspace=PROJECT, commands=OS_COMMANDS if os_agent else COMMANDS,
                   zones=OS_ZONES if os_agent else ZONES)


@pytest.mark.parametrize("command", [
    "PYTEST_ADDOPTS=--basetemp=.claude pytest", "PYTEST_ADDOPTS='-o cache_dir=.claude' python3 -m pytest",
    "export PYTEST_ADDOPTS=--basetemp=.claude; pytest", "GOFLAGS=-o=.claude/settings.json go build",
    "env GOFLAGS=-o=.mcp.json go build ./..."])
def test_a_variable_that_carries_options_is_not_harmless(command: str) -> None:
    a = analysed(command)
    assert a.kind == "unknown" and ("write", "agent_config") in a.touched, (command, a.touched)


@pytest.mark.parametrize("os_agent", [False, True])
def test_python_x_pycache_prefix_writes_its_folder(os_agent: bool) -> None:  # noqa: FBT001
    plain = set(analysed("python3 -X importtime -X dev x.py", os_agent=os_agent).touched)
    a = analysed("python3 -X pycache_prefix=/etc/cron.d x.py", os_agent=os_agent)
    assert {("write", z) for _, z in a.touched} - plain, a.touched
    assert ("write", "agent_config") in analysed("python3 -X pycache_prefix=.claude x.py").touched


def test_ordinary_test_runs_stay_allowed() -> None:
    for command in ("PYTHONPATH=src python -m pytest", "pytest -x", "go build ./...", "python3 -X dev x.py"):
        a = analysed(command)
        assert a.kind != "unknown" and {z for _, z in a.touched} <= {"workspace", "tmp"}, (command, a.touched)


@pytest.mark.parametrize("command", ["ag -p ~/.ssh/id_rsa x", "ag --path-to-ignore ~/.ssh/id_rsa x src",
                                     "ack --frobnicate ~/.ssh/id_rsa x", "ag -Y /home/dev/.aws/credentials ."])
def test_a_path_after_an_option_the_table_does_not_list_is_read(command: str) -> None:
    # red-team pass of 2026-11-29, late morning: ag's -p FILE (an ignore file) was ignored and FILE taken for the
    # search pattern, an operand that is no path: the key was read unseen
    assert {z for _, z in analysed(command).touched} & {"ssh_keys", "cloud_credentials"}, analysed(command).touched


def test_a_pattern_after_known_options_stays_a_pattern() -> None:
    for command in ("ag -Q /api/v1 src", "ag --hidden TODO", "grep -r /etc/passwd src"):
        assert {z for _, z in analysed(command).touched} <= {"workspace", "agent_config", "project_secrets"}, (
            command, analysed(command).touched)


# Build tools' outputs and settings the table read as no path (red-team pass of 2026-11-29, late morning): go test's
# profiles (-coverprofile=.mcp.json wrote it), a single-dash -name=VALUE the table does not list in a program of
# whole-word options (gcc -specs=FILE reads FILE), `go env -w` (the user's go env file, which every later go command
# reads: GOFLAGS=-toolexec=PROGRAM), and mvn's/gradle's -D properties that name folders (maven.repo.local)
@pytest.mark.parametrize("command, access, zone", [
    ("go test -coverprofile=.mcp.json ./...", "write", "agent_config"),
    ("go test -cpuprofile .claude/p ./...", "write", "agent_config"),
    ("gcc -specs=~/.ssh/id_rsa x.c", "read", "ssh_keys"),
    ("go test -frobnicate=.mcp.json", "write", "agent_config"),
    ("go env -w GOFLAGS=-toolexec=./x", "write", "home"),
    ("mvn -Dmaven.repo.local=.claude package", "write", "agent_config"),
    ("gradle -Dgradle.user.home=~/.aws build", "read", "cloud_credentials")])
def test_build_tools_outputs_and_settings_are_their_files(command: str, access: str, zone: str) -> None:
    assert (access, zone) in analysed(command).touched, analysed(command).touched


def test_ordinary_builds_stay_in_the_workspace() -> None:
    for command in ("go env GOPATH", "go test -run=TestX -count=1 ./...", "mvn -DskipTests package",
                    "gcc -std=c11 -march=native -o x x.c", "go test -coverprofile=cover.out ./..."):
        assert {z for _, z in analysed(command).touched} <= {"workspace"}, (command, analysed(command).touched)


@pytest.mark.parametrize("command, zone", [("echo ~/.ssh/*", "ssh_keys"), ("printf '%s\\n' ~/.aws/*", "cloud_credentials"),
                                           ("echo ~/.password-store/*/*", "cloud_credentials")])
def test_a_glob_in_a_word_that_is_no_path_lists_its_folder(command: str, zone: str) -> None:
    # red-team pass of 2026-11-29, late morning: `echo ~/.ssh/*` printed the names in ~/.ssh, `ls ~/.ssh` was denied
    assert ("read", zone) in analysed(command).touched, analysed(command).touched
    assert {z for _, z in analysed("echo /etc/* src/*.py").touched} == {"system_config", "workspace"}


@pytest.mark.parametrize("command, zone", [
    ("docker build --secret id=k,src=/home/dev/.ssh/id_rsa .", "ssh_keys"),
    ("docker buildx build --secret=id=a,src=~/.aws/credentials .", "cloud_credentials"),
    ("docker build --build-context keys=/home/dev/.ssh .", "ssh_keys"),
    ("docker build --secret id=GITHUB_TOKEN .", "cloud_credentials")])
def test_a_build_handed_a_host_file_or_a_secret_variable_reads_it(command: str, zone: str) -> None:
    # red-team pass of 2026-11-29, late morning: docker build's --secret src=FILE, --build-context NAME=DIR and a
    # secret variable were ignored options: the Dockerfile (project code) could copy the key into the image or its log
    assert ("read", zone) in analysed(command).touched, analysed(command).touched
    assert {z for _, z in analysed("docker build -t app --secret id=npm,src=.npmrc.ci .").touched} == {
        "workspace", "project_secrets", "agent_config"}     # the build context is the project whole, its .env among it
