"""The shell guard's seventh red-team pass (2026-11-29, late evening), each class found open and closed:

- a symbolic link in the home folder that leads out of it (`~/bin -> /tmp/b`, `~/.bashrc -> /tmp/rc`): a write of
  `/tmp/b/x` lands in the home, which the agent may not write; it was a tmp write, allowed (shell_mounts.home_links);
- a mount (`bindfs ~ /tmp/m`, `mount --rbind ~ /tmp/m`, `sshfs localhost: /tmp/m`) shows the home at a tmp path for
  as long as it stays: each folder it names is read and written whole now (it was unknown: approval let it through);
- a Python virtual environment's start-up files (`site-packages/*.pth`, `sitecustomize.py`, `pyvenv.cfg`) run in
  every later Python process of the environment: agent_config where a command names them (they were workspace);
- a host that is this machine by another name (`[::1]`, `127.1`, `0x7f000001`, its hostname, an ~/.ssh/config or
  /etc/hosts alias) reached the home as a remote path: `scp x myhost:.bashrc` was allowed;
- `code --install-extension X` (and its forks', `--add-mcp`) writes the editor's folder in the home: denied even
  approved (it was unknown, asked)."""
from __future__ import annotations

import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from veriguard.enforce import shell_hosts, shell_mounts
from veriguard.synth.freeze import write_build
from veriguard.synth.specfile import load_spec
from tests.conftest import ROOT
from tests.unit.test_compile_and_freeze import fake_result
from tests.unit.test_hook_project_links import decide

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hook_seventh_pass")
    return write_build(fake_result(load_spec(ROOT / "specs" / "shell_agent.toml")), out, run_info={})[0]


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A folder outside /tmp (the zone map puts all of /tmp, /var/tmp and /private/tmp in tmp, a home there included):
    in the repository's build/, or in the user's cache where the repository itself lies in a tmp folder (a clone
    under /tmp: the fresh-clone CI run of ef4f9ce failed all 27 tests that need this)."""
    parent = next((p for p in (ROOT / "build", Path.home() / ".cache" / "veriguard-tests")
                   if not str(p.resolve()).startswith(("/tmp/", "/var/tmp/", "/private/tmp/"))), None)
    if parent is None:
        pytest.skip("no folder outside the tmp zone to hold a home in")
    parent.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="seventh-pass-", dir=parent))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def machine(tmp_path: Path, outside_tmp: Path) -> dict[str, Path]:
    home, shared = outside_tmp / "home", tmp_path / "shared"
    project = home / "proj"
    for folder in (project / "src", project / ".venv" / "lib" / "python3.12" / "site-packages", project / ".venv" / "bin",
                   shared / "b", shared / "c", home / ".ssh", home / ".config"):
        folder.mkdir(parents=True)
    (home / "bin").symlink_to(shared / "b")                     # a user's own link, out of the home
    (home / ".config" / "tool").symlink_to(shared / "c")        # one folder down
    (home / ".bashrc").symlink_to(shared / "rc")                # a dotfiles manager's link to a file
    (home / ".ssh" / "config").write_text("Host myhost box\n  HostName 127.0.0.1\nHost far\n  HostName example.com\n")
    (project / ".venv" / "bin" / "activate").write_text("# activate\n")
    return {"home": home, "project": project, "shared": shared}


def bash(build: Path, m: dict[str, Path], command: str) -> str:
    return decide(build, m, "Bash", command=command.format(**{k: str(v) for k, v in m.items()}))


@pytest.mark.parametrize("command", [
    "echo 'rm -rf ~' > {shared}/b/ls",                 # ~/bin/ls
    "cp /etc/hostname {shared}/b/",
    "echo x >> {shared}/rc",                           # ~/.bashrc
    "echo x > {shared}/c/autostart.sh",                # ~/.config/tool/autostart.sh
    "tar xf /tmp/a.tar -C {shared}/b",
])
def test_a_write_through_a_link_of_the_home_is_a_write_of_the_home(build: Path, machine: dict[str, Path],
                                                                   command: str) -> None:
    assert bash(build, machine, command) == "deny"


def test_the_file_tools_write_through_a_link_of_the_home(build: Path, machine: dict[str, Path]) -> None:
    assert decide(build, machine, "Write", file_path=str(machine["shared"] / "b" / "ls"), content="x") == "deny"
    assert decide(build, machine, "Edit", file_path=str(machine["shared"] / "rc"), old_string="a",
                  new_string="b") == "deny"


@pytest.mark.parametrize("command", ["echo x > {shared}/other.txt", "echo x > src/a.py", "cat {shared}/b/ls"])
def test_what_no_link_of_the_home_reaches_stays_allowed(build: Path, machine: dict[str, Path], command: str) -> None:
    assert bash(build, machine, command) == "allow"


@pytest.mark.parametrize("command", [
    "bindfs ~ /tmp/m", "bindfs -r ~ /tmp/m", "mount --rbind ~ /tmp/m", "mount --bind / /tmp/r",
    "sshfs localhost: /tmp/m", "sshfs u@127.1:.config /tmp/m", "mergerfs ~/.config /tmp/m",
])
def test_a_mount_of_the_home_is_denied(build: Path, machine: dict[str, Path], command: str) -> None:
    assert bash(build, machine, command) == "deny"


@pytest.mark.parametrize("command", ["squashfuse img.sqsh mnt", "mount --bind src build", "sshfs server:/data /tmp/m"])
def test_a_mount_of_the_project_or_a_remote_folder_needs_approval(build: Path, machine: dict[str, Path],
                                                                  command: str) -> None:
    assert bash(build, machine, command) == "ask"


@pytest.mark.parametrize("command", [
    "echo 'import os' > .venv/lib/python3.12/site-packages/evil.pth",
    "echo 'import os' > .venv/lib/python3.12/site-packages/sitecustomize.py",
    "cp /tmp/x.pth .venv/lib/python3.12/site-packages/",
    "echo 'home = /tmp/evil' > .venv/pyvenv.cfg",
    "echo x > venv/lib/python3.11/site-packages/x.pth",
    "echo x > .venv/lib/*/site-packages/x.pth",
    "python3 -c 'open(\".venv/lib/python3.12/site-packages/sitecustomize.py\", \"w\")'",
])
def test_a_virtual_environments_start_up_files_are_the_agents_configuration(build: Path, machine: dict[str, Path],
                                                                            command: str) -> None:
    assert bash(build, machine, command) == "deny"


def test_the_file_tools_on_a_start_up_file(build: Path, machine: dict[str, Path]) -> None:
    pth = machine["project"] / ".venv" / "lib" / "python3.12" / "site-packages" / "x.pth"
    assert decide(build, machine, "Write", file_path=str(pth), content="import os") == "deny"


@pytest.mark.parametrize("command, verdict", [
    ("source .venv/bin/activate && pytest", "ask"), ("python -m venv .venv", "allow"), ("rm -rf .venv", "ask"),
    ("cat .venv/pyvenv.cfg", "allow"), ("pip install -e .", "ask"),
])
def test_a_virtual_environment_stays_usable(build: Path, machine: dict[str, Path], command: str, verdict: str) -> None:
    assert bash(build, machine, command) == verdict


@pytest.mark.parametrize("host", ["myhost", "box", "[::1]", "[::ffff:127.0.0.1]", "[0:0:0:0:0:0:0:1]", "0x7f000001",
                                  "2130706433", "127.1", "0177.0.0.1", "localhost.", "LocalHost", "u@127.0.0.5"])
def test_a_host_that_is_this_machine_reaches_its_files(build: Path, machine: dict[str, Path], host: str) -> None:
    assert bash(build, machine, f"scp x '{host}:.profile'") == "deny"


def test_this_machines_own_name_reaches_its_files(build: Path, machine: dict[str, Path]) -> None:
    assert bash(build, machine, f"scp x {socket.gethostname()}:.profile") == "deny"
    assert bash(build, machine, "scp x scp://[::1]/.profile") == "deny"


@pytest.mark.parametrize("command", ["scp x far:.profile", "scp x deploy@10.0.0.5:app/", "scp dist/app.js web:/var/www/"])
def test_another_host_stays_allowed(build: Path, machine: dict[str, Path], command: str) -> None:
    assert bash(build, machine, command) == "allow"


def test_hosts_file_names_and_ssh_aliases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hosts = tmp_path / "hosts"
    hosts.write_text("127.0.1.1 dev-box.lan dev-box\n10.0.0.9 db\n::1 ip6-mine # comment\n")
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "config").write_text("Host me\n  HostName dev-box\nHost *\n  HostName 127.0.0.1\n")
    monkeypatch.setattr(shell_hosts, "HOSTS_FILE", str(hosts))
    shell_hosts.machine_names.cache_clear()
    try:
        assert all(shell_hosts.this_machine(h, str(tmp_path)) for h in ("dev-box", "dev-box.lan", "ip6-mine", "me"))
        assert not any(shell_hosts.this_machine(h, str(tmp_path)) for h in ("db", "*", "example.com", "10.0.0.9"))
    finally:
        shell_hosts.machine_names.cache_clear()


@pytest.mark.parametrize("command", [
    "code --install-extension evil.vsix", "code --install-extension=ms-python.python",
    "cursor --install-extension evil.vsix", "codium --install-extension x", "windsurf --install-extension x",
    "code --extensions-dir /tmp/e --install-extension x", "code --add-mcp '{{\"name\":\"x\"}}'",
    "cursor --add-mcp x",
])
def test_an_editor_extension_install_writes_the_home(build: Path, machine: dict[str, Path], command: str) -> None:
    assert bash(build, machine, command) == "deny"


@pytest.mark.parametrize("command", ["code .", "code src/a.py", "code --list-extensions", "vim +PlugInstall +qa"])
def test_opening_an_editor_stays_asked(build: Path, machine: dict[str, Path], command: str) -> None:
    assert bash(build, machine, command) == "ask"


@pytest.mark.parametrize("command", [
    'echo "${AWS_SECRET_ACCESS_KEY:0:40}"', 'echo "${AWS_SECRET_ACCESS_KEY/x/y}"', 'echo "${AWS_SECRET_ACCESS_KEY,,}"',
    'echo "${AWS_SECRET_ACCESS_KEY%%x}"', 'echo "${AWS_SECRET_ACCESS_KEY#?}"', 'echo "${AWS_SECRET_ACCESS_KEY^^}"',
    'printf %s "${ANTHROPIC_API_KEY: -5}"', "echo ${ANTHROPIC_API_KEY@Q}", "v=ANTHROPIC_API_KEY; echo ${!v}",
])
def test_a_secret_variable_changed_by_an_operator_is_still_shown(build: Path, machine: dict[str, Path],
                                                                 command: str) -> None:
    assert bash(build, machine, command.replace("{", "{{").replace("}", "}}")) == "deny"


@pytest.mark.parametrize("command", ["echo ${{#GITHUB_TOKEN}}", "echo ${{!ANTH*}}", "echo ${{PATH:0:5}}",
                                     "f=a.txt; echo ${{f%.txt}}.md", "for f in *.py; do echo ${{f%.py}}; done"])
def test_other_expansions_with_an_operator_stay_allowed(build: Path, machine: dict[str, Path], command: str) -> None:
    assert bash(build, machine, command) == "allow"


@pytest.mark.parametrize("command", [
    "rm sub/.claude/*", "sed -i s/a/b/ sub/.claude/*", "echo x | tee sub/.claude/*", "rm sub/.git/hooks/*",
    "chmod +x sub/.git/hooks/*", "sed -i s/x/y/ .venv/lib/python3.12/site-packages/*.pth",
])
def test_a_glob_in_a_protected_folder_of_a_sub_folder(build: Path, machine: dict[str, Path], command: str) -> None:
    assert bash(build, machine, command) == "deny"


@pytest.mark.parametrize("command", ["sed -i s/a/b/ src/*", "rm sub/*", "cat sub/.claude/*", "cp /tmp/x/* sub/"])
def test_other_globs_of_a_sub_folder_stay_allowed(build: Path, machine: dict[str, Path], command: str) -> None:
    assert bash(build, machine, command) == "allow"


@pytest.fixture
def mounted(machine: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A mount table with bind mounts already in place (made earlier, by the user or an approved command): the home's
    .ssh at a tmp folder, a tmp folder onto the project's .claude, a FUSE mount (bindfs) of ~/.aws."""
    home, shared, project = machine["home"], machine["shared"], machine["project"]
    table = tmp_path / "mountinfo"
    table.write_text(f"27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
                     f"63 27 254:0 {home}/.ssh {shared}/m rw,relatime - ext4 /dev/vda rw\n"
                     f"64 27 254:0 {shared}/srcx {project}/.claude rw,relatime - ext4 /dev/vda rw\n"
                     f"65 27 0:50 / {shared}/fm rw,nosuid - fuse.bindfs {home}/.aws rw\n"
                     f"66 27 0:51 / {shared}/space\\040m rw - fuse.bindfs {home}/.ssh rw\n")
    monkeypatch.setattr(shell_mounts, "MOUNTINFO", str(table))
    return machine


@pytest.mark.parametrize("command", [
    "cat {shared}/m/id_rsa", "cp {shared}/m/id_rsa /tmp/k", "grep -r KEY {shared}", "cat {shared}/fm/credentials",
    "echo x > {shared}/srcx/settings.json", "cat '{shared}/space m/id_rsa'",
])
def test_a_folder_mounted_at_another_path_keeps_its_zone(build: Path, mounted: dict[str, Path], command: str) -> None:
    assert bash(build, mounted, command) == "deny"


def test_the_file_tools_through_a_mount(build: Path, mounted: dict[str, Path]) -> None:
    assert decide(build, mounted, "Read", file_path=str(mounted["shared"] / "m" / "id_rsa")) == "deny"


@pytest.mark.parametrize("command", ["cat {shared}/other", "echo x > {shared}/other", "ls"])
def test_paths_no_mount_reaches_stay_allowed(build: Path, mounted: dict[str, Path], command: str) -> None:
    assert bash(build, mounted, command) == "allow"


def test_a_mount_table_that_cannot_be_read_adds_nothing(tmp_path: Path) -> None:
    assert shell_mounts.mount_points(str(tmp_path / "none")) == ()
    bad = tmp_path / "bad"
    bad.write_text("garbage\n1 2\n")
    assert shell_mounts.mount_points(str(bad)) == ()


@pytest.mark.parametrize("command", [
    "echo 'curl x|sh' >> .venv/bin/activate", "sed -i '1i curl x' .venv/bin/activate", "cp /tmp/a .venv/bin/activate",
    "echo x > venv/bin/activate.fish", "echo x > .venv/bin/activat?", "cp /tmp/activate .venv/bin/",
    "echo x > .venv/bin/python3", "cp /tmp/x .venv/bin/python3.12",
])
def test_changing_an_activation_script_needs_approval(build: Path, machine: dict[str, Path], command: str) -> None:
    assert bash(build, machine, command) == "ask"


def test_the_file_tools_on_an_activation_script(build: Path, machine: dict[str, Path]) -> None:
    activate = machine["project"] / ".venv" / "bin" / "activate"
    assert decide(build, machine, "Edit", file_path=str(activate), old_string="a", new_string="b") == "ask"


@pytest.mark.parametrize("command", ["cat .venv/bin/activate", "cp /tmp/a .venv/bin/", "echo x > src/bin/activate_x"])
def test_reading_an_activation_script_or_writing_beside_it_stays_allowed(build: Path, machine: dict[str, Path],
                                                                         command: str) -> None:
    assert bash(build, machine, command) == "allow"


@pytest.mark.parametrize("command", ["make SHELL=/tmp/x", "make CC=/tmp/x", "make .SHELLFLAGS=-c SHELL=/tmp/x all",
                                     "make PYTHON=/tmp/x test", "gmake CXX+=/tmp/x", "just SHELL=/tmp/x build"])
def test_a_make_variable_on_the_command_line_counts_as_in_the_environment(build: Path, machine: dict[str, Path],
                                                                          command: str) -> None:
    assert bash(build, machine, command) == "ask"


@pytest.mark.parametrize("command", ["make", "make -j4 test", "make VERBOSE=1", "make CI=1 test"])
def test_make_without_such_a_variable_stays_allowed(build: Path, machine: dict[str, Path], command: str) -> None:
    assert bash(build, machine, command) == "allow"


@pytest.mark.parametrize("command", ["cp -r {shared}/vx/. .venv/bin/", "rsync -a {shared}/vx/ .venv/bin/"])
def test_an_activation_script_a_folder_copy_brings_needs_approval(build: Path, machine: dict[str, Path],
                                                                   command: str) -> None:
    (machine["shared"] / "vx").mkdir()
    (machine["shared"] / "vx" / "activate").write_text("curl x | sh\n")
    assert bash(build, machine, command) == "ask"
    (machine["shared"] / "vx" / "activate").rename(machine["shared"] / "vx" / "other")
    assert bash(build, machine, command) == "allow"
