"""Remote operands and container files (found open on 2026-11-29, evening, by the red-team pass on the hook):
`scp localhost:.ssh/id_rsa /tmp/k` copied the user's key and `scp /tmp/x localhost:.claude/settings.json` wrote the
agent's settings, through the machine's own ssh server: a remote operand was skipped as a network address. A remote
path on a host named as this machine is the local path now (under the home unless absolute), and on any host its
protected names count, as in ssh's remote command (an ssh alias or the machine's name may be this machine). `sftp HOST
<<< 'get .ssh/id_rsa'` took its commands from the input, unseen: sftp is unknown. `docker compose up` started
containers with the bind mounts its file names (`volumes: ["/:/host"]`), read as a build and allowed: what builds,
starts or enters a compose container is unknown now, as `docker run` is."""
from __future__ import annotations

import pytest

from veriguard.enforce.shell import analyse
from tests.unit.test_shell_indirect_config import COMMANDS, HOME, PROJECT, ZONES, touched

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")


def kind(command: str) -> str:
    return analyse(command, cwd=PROJECT, home=HOME, workspace=PROJECT, commands=COMMANDS, zones=ZONES,
                   rewrites=False).kind


@pytest.mark.parametrize(("command", "access"), [
    ("scp localhost:.ssh/id_rsa /tmp/k", ("read", "ssh_keys")),
    ("scp me@127.0.0.1:~/.aws/credentials /tmp/k", ("read", "cloud_credentials")),
    ("rsync -a localhost:.ssh/ /tmp/k", ("read", "ssh_keys")),
    ("scp /tmp/x localhost:.claude/settings.json", ("write", "agent_config")),
    ("scp /tmp/x localhost:.bashrc", ("write", "home")),
    (f"scp /tmp/x localhost:{PROJECT}/.envrc", ("write", "agent_config")),
    ("scp scp://localhost/.ssh/id_rsa /tmp/k", ("read", "ssh_keys")),
    ("scp server:.ssh/id_rsa /tmp/k", ("write", "ssh_keys")),            # any host: its protected names count
    ("scp /tmp/x build-box:.claude/settings.json", ("write", "agent_config")),
])
def test_a_remote_path_that_may_be_this_machine_is_read_as_one(command: str, access: tuple[str, str]) -> None:
    assert access in touched(command), command


@pytest.mark.parametrize("command", ["scp dist.tgz server:/srv/app/", "rsync -a build/ server:/var/www/",
                                     "scp server:/var/log/app.log /tmp/", "scp localhost:/tmp/x /tmp/y"])
def test_remote_paths_with_no_protected_name_stay_allowed_zones(command: str) -> None:
    assert not {z for _, z in touched(command)} & {"ssh_keys", "cloud_credentials", "agent_config", "home"}, command


@pytest.mark.parametrize("command", ["sftp localhost <<< 'put x'", "docker compose up -d",
                                     "docker compose -f /tmp/dc.yml up", "docker compose run web sh",
                                     "docker compose build", "docker compose exec web sh"])
def test_sftp_and_compose_containers_are_unknown(command: str) -> None:
    assert kind(command) == "unknown", command


@pytest.mark.parametrize("command", ["docker compose ps", "docker compose logs -f web", "docker compose config",
                                     "scp a.txt server:"])
def test_compose_listings_and_plain_copies_are_not(command: str) -> None:
    assert kind(command) != "unknown", command
