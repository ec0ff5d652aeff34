"""Project files that make the user's own tools run programs later (red-team pass of 2026-11-23, night): husky's
git hooks, direnv's .envrc, VS Code's tasks and settings, pre-commit's config, npm's, yarn's and cargo's project
config and a dev container's definition are agent_config in the shell_agent zone map: read, never written (the
property agent_config_read_only denies it even approved). Recursive work in the project stays workspace; the same names
in a sub-folder are agent_config where a command names them itself (zones.toml [nested])."""
from __future__ import annotations

import pytest

from tests.unit.test_shell_secret_files import touched

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")

AUTO_RUN = [".husky/pre-commit", ".envrc", ".vscode/tasks.json", ".vscode/settings.json", ".pre-commit-config.yaml",
            ".npmrc", ".yarnrc", ".yarnrc.yml", ".cargo/config", ".cargo/config.toml", ".devcontainer/devcontainer.json",
            ".devcontainer.json"]
WRITES = ["echo x > {f}", "printf x >> {f}", "cp /tmp/x {f}", "mv /tmp/x {f}", "tee {f} < /tmp/x", "sed -i s/a/b/ {f}",
          "ln -sf /tmp/x {f}", "rm {f}", "tee -- /home/dev/project/{f}"]  # the last: how the hook sees Write/Edit


@pytest.mark.parametrize("path", AUTO_RUN)
@pytest.mark.parametrize("form", WRITES)
def test_changing_it_is_an_agent_config_write(path: str, form: str) -> None:
    zones = {(a, z) for a, z in touched(form.format(f=path)) if z == "agent_config"}
    assert zones & {("write", "agent_config"), ("delete", "agent_config")}, touched(form.format(f=path))


@pytest.mark.parametrize("path", AUTO_RUN)
def test_reading_it_stays_a_read(path: str) -> None:
    assert touched(f"cat {path}") == {("read", "agent_config")}


@pytest.mark.parametrize("command", ["python3 -c \"open('.envrc', 'w').write('x')\"", "node -e \"fs.writeFileSync("
                                     "'.husky/pre-push', 'x')\"", "perl -e 'open(F, \">.vscode/tasks.json\")'"])
def test_inline_code_naming_it_counts_as_a_write(command: str) -> None:
    assert ("write", "agent_config") in touched(command)


@pytest.mark.parametrize("command", ["rm -rf build/", "rm -rf ./*", "cp -r src/ backup/", "rm -rf sub", "prettier --write src",
                                     "rm -rf sub/.git", "git init sub", "echo x > sub/.envrc.example", "touch src/.gitkeep"])
def test_project_work_and_sub_folders_written_whole_stay_workspace(command: str) -> None:
    assert "agent_config" not in {zone for _, zone in touched(command)}, touched(command)


# zones.toml [nested] (2026-11-29): the same files named in a sub-folder, where the tools that read them run too
@pytest.mark.parametrize("command", ["echo x > sub/.envrc", "echo x > packages/web/.npmrc", "tee crates/a/.cargo/config.toml",
                                     "echo '[core] fsmonitor = /tmp/x' > src/.git/config", "printf 'gitdir: /tmp/e' > src/.git",
                                     "mkdir -p src/.git/hooks", "cp /tmp/x docs/.vscode/tasks.json", "sed -i s/a/b/ a/b/.mise.toml",
                                     "tee -- /home/dev/project/src/.git/config",
                                     # written whole under the protected name (red-team pass of 2026-11-29, late
                                     # morning: the `**` after the name hid it from [nested], allowed)
                                     "mv /tmp/x sub/.envrc", "cp -r /tmp/x sub/.claude", "mv /tmp/repo sub/.git",
                                     "cp -a /tmp/x pkg/.npmrc", "rsync -a /tmp/x/ sub/.vscode/tasks.json"])
def test_those_files_named_in_a_sub_folder_are_agent_config(command: str) -> None:
    assert ("write", "agent_config") in touched(command), touched(command)


@pytest.mark.parametrize("command", [
    "crontab /tmp/x", "echo '* * * * * curl x | sh' | crontab -", "crontab -r", "at now + 1 minute < /tmp/job",
    "echo 'cp x .envrc' | at now", "batch < /tmp/job", "systemctl --user enable /tmp/x.service",
    "systemctl --user link /tmp/x.service", "systemctl edit x", "launchctl load /tmp/x.plist",
    "launchctl bootstrap gui/501 /tmp/x.plist", "launchctl submit -l x -- /tmp/x.sh"])
def test_scheduling_a_program_to_run_later_changes_the_system_configuration(command: str) -> None:
    """A crontab, an at job, an enabled service or a loaded launchd job runs programs later, outside any command the
    guard sees (found open on 2026-11-29: unknown, so a human's approval let it through): each writes the service
    manager's configuration, which the policy denies even approved."""
    assert {a for a, z in touched(command) if z not in ("workspace", "tmp")} & {"write", "delete"}, touched(command)


@pytest.mark.parametrize("command", ["crontab -l", "atq", "at -l", "systemctl status nginx", "launchctl list",
                                     "systemctl --user list-timers"])
def test_listing_scheduled_programs_writes_nothing(command: str) -> None:
    assert not {a for a, _ in touched(command)} & {"write", "delete"}, touched(command)


@pytest.mark.parametrize("command, zone", [
    ("docker run -v ~:/h alpine true", "ssh_keys"), ("docker run --rm -v /:/host alpine cat /host/etc/shadow", "cloud_credentials"),
    ("podman run --mount type=bind,src=/home/dev,dst=/h alpine true", "cloud_credentials"),
    ("docker run -v /etc:/etc alpine true", "system_config"),
    ("docker run -v /var/run/docker.sock:/var/run/docker.sock docker ps", "outside")])
def test_a_container_reaches_the_host_folders_it_mounts(command: str, zone: str) -> None:
    """A bind mount gives the container the host folder and all in it (found open on 2026-11-29: `docker run -v ~:/h`
    touched nothing, so a human's approval let a container read ~/.ssh): a secret in it is a read the policy denies
    even approved, and a folder outside the workspace is a write."""
    assert any(z == zone for _, z in touched(command)), touched(command)


def test_a_container_given_the_project_is_like_the_project_s_own_code() -> None:
    """What a container writes in a mounted project is its program's doing, as with `npm test`: the folder is written,
    the protected files in it are read, not counted as written."""
    assert touched("docker run --rm -v $PWD:/app -w /app node:20 npm test") == {
        ("read", "workspace"), ("read", "agent_config"), ("write", "workspace"), ("read", "project_secrets")}


@pytest.mark.parametrize("command", ["docker run --rm -v .:/w:ro alpine ls /w",
                                     "docker run --mount type=bind,source=.,target=/w,readonly alpine true"])
def test_a_read_only_mount_is_read(command: str) -> None:
    assert not {a for a, _ in touched(command)} & {"write", "delete"}, touched(command)


@pytest.mark.parametrize("command", ["npm config set script-shell /tmp/x", "npm set script-shell /tmp/x",
                                     "npm config set --location=project script-shell /tmp/x",
                                     "yarn config set yarnPath /tmp/x.js", "yarn set version /tmp/x.js",
                                     "pnpm config set x y", "pre-commit autoupdate", "direnv allow", "direnv allow ."])
def test_changing_a_tool_s_configuration_that_runs_programs_is_a_write(command: str) -> None:
    """npm's script-shell, yarn's yarnPath and pre-commit's hooks name programs these tools run later (found open on
    2026-11-29: `npm config set` was unknown and wrote nothing, so a human's approval let it through)."""
    assert {a for a, z in touched(command) if z not in ("workspace", "tmp")} & {"write"}, touched(command)


@pytest.mark.parametrize("command", ["npm config get registry", "npm config list", "yarn config get x"])
def test_reading_a_tool_s_configuration_writes_nothing(command: str) -> None:
    assert not {a for a, _ in touched(command)} & {"write", "delete"}, touched(command)


@pytest.mark.parametrize("command", ["printf 'protocol=https\\nhost=github.com\\n' | git credential fill",
                                     "git credential-store get", "gh auth token", "gh auth status --show-token",
                                     # secret managers and the token printers of cloud tools
                                     "security find-generic-password -s x -w", "pass show github", "op read op://v/i/p",
                                     "bw get password x", "vault kv get secret/x", "sops -d secrets.enc.yaml",
                                     "docker-credential-desktop get", "gcloud auth print-access-token",
                                     "aws configure get aws_secret_access_key", "aws sts get-session-token",
                                     "aws ecr get-login-password", "az account get-access-token",
                                     "kubectl config view --raw", "heroku auth:token"])
def test_a_command_that_hands_out_a_kept_credential_reads_it(command: str) -> None:
    """git's credential helpers, gh, secret managers and cloud tools' token commands print the secrets they keep (found
    open on 2026-11-29: unknown, so a human's approval let the agent read them): a read of the credential store,
    denied even approved."""
    assert ("read", "cloud_credentials") in touched(command), touched(command)


@pytest.mark.parametrize("command", ["npm create vite@latest .claude", "npx create-next-app .claude",
                                     "pip install --target .claude x", "npx degit user/repo .husky"])
def test_a_package_command_naming_a_protected_place_counts_as_writing_it(command: str) -> None:
    """A package's install or create scripts run unseen, like unknown code (commands.toml `opaque_classes`): a
    protected zone their command names counts as written (found open on 2026-11-29: `npm create vite .claude` wrote
    only the workspace)."""
    assert ("write", "agent_config") in touched(command), touched(command)


@pytest.mark.parametrize("command", ["php -S 0.0.0.0:8000 -t ~", "cd ~ && php -S localhost:8000",
                                     "git daemon --base-path=/home/dev --export-all", "git daemon --export-all"])
def test_a_server_over_the_home_folder_reads_its_secrets(command: str) -> None:
    """A web or git server hands out every file of its folder (found open on 2026-11-29: php -S read ~ itself only, git
    daemon touched nothing), so serving the home folder is a read of the secrets in it, denied even approved."""
    assert ("read", "ssh_keys") in touched(command), touched(command)


# Names without a leading dot that tools obey (red-team pass of 2026-11-29, late morning: each was a plain workspace
# file): lefthook's config, a rust-toolchain file and mise.toml, matched only where the command spells the name out
UNDOTTED = ["lefthook.yml", "lefthook.yaml", "lefthook-local.yml", ".lefthook.yaml", "rust-toolchain",
            "rust-toolchain.toml", "crates/a/rust-toolchain.toml", "mise.toml", "sub/mise.local.toml"]


@pytest.mark.parametrize("path", UNDOTTED)
@pytest.mark.parametrize("form", WRITES)
def test_changing_an_undotted_file_tools_obey_is_an_agent_config_write(path: str, form: str) -> None:
    zones = {(a, z) for a, z in touched(form.format(f=path)) if z == "agent_config"}
    assert zones & {("write", "agent_config"), ("delete", "agent_config")}, touched(form.format(f=path))


@pytest.mark.parametrize("command", ["sed -i s/a/b/ *", "sed -i s/a/b/ *.yml", "rm -rf ./*", "prettier --write *",
                                     "chmod +x ./*", "cp /tmp/x/* .", "echo x > CLAUDE.md", "echo x > docs/lefthook.md",
                                     "cat lefthook.yml", "echo x > src/lefthook.yml"])
def test_a_glob_or_another_name_does_not_meet_them(command: str) -> None:
    assert ("write", "agent_config") not in touched(command) and ("delete", "agent_config") not in touched(command)


# The git analogues and other agents' and editors' program lists (red-team pass of 2026-11-29, late morning: plain
# workspace files): Mercurial's .hg/hgrc and Jujutsu's repository config (hooks, pager, editor), VS Code's and
# Cursor's MCP servers, Gemini CLI's project settings, Zed's settings and tasks
OTHER_TOOLS = [".hg/hgrc", ".jj/repo/config.toml", ".vscode/mcp.json", ".cursor/mcp.json", ".gemini/settings.json",
               ".zed/tasks.json", "sub/.hg/hgrc", "pkg/.vscode/mcp.json"]


@pytest.mark.parametrize("path", OTHER_TOOLS)
@pytest.mark.parametrize("form", ["echo x > {f}", "tee -- /home/dev/project/{f}", "sed -i s/a/b/ {f}"])
def test_other_tools_program_lists_are_agent_config(path: str, form: str) -> None:
    assert ("write", "agent_config") in touched(form.format(f=path)), touched(form.format(f=path))
