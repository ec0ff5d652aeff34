"""Files a command names itself (found open on 2026-11-29): a copy, link or download into a folder lands there
under its source's name (`cp /tmp/x/.envrc .`, `ln -s /tmp/x/.mcp.json .`, `curl -O https://h/.envrc`,
`scp host:.envrc .`); a compressor writes its file's name with a suffix added or taken off (`gunzip .envrc.gz`);
split names its pieces PREFIX + suffix (`split -a 1 x .envr` writes .envrc). Each such name is a write of its
zone, so a protected name in an unprotected folder is denied; ordinary uses stay allowed."""
from __future__ import annotations

import pytest

from tests.unit.test_shell_indirect_config import COMMANDS, HOME, PROJECT, ZONES
from veriguard.enforce.shell import analyse

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")


def changes_config(command: str) -> bool:
    a = analyse(command, cwd=PROJECT, home=HOME, workspace=PROJECT, commands=COMMANDS, zones=ZONES)
    return ("write", "agent_config") in a.touched


NAMED_BY_THE_SOURCE = [
    "cp /tmp/x/.envrc .", "cp /tmp/x/.envrc ./", "cp -t . /tmp/x/.envrc", "cp --target-directory=. /tmp/.mcp.json",
    "cp /tmp/x/a.txt /tmp/x/.envrc .", "cp /tmp/x/.* .", "cp -s /tmp/x/.envrc .", "install /tmp/x/.envrc .",
    "install -t . /tmp/x/.mcp.json", "ln -s /tmp/x/.envrc .", "ln -s /tmp/x/.mcp.json", "ln /tmp/x/.envrc ./",
    "ln -st . /tmp/x/.envrc", "cp /tmp/x/.envrc src/..", "cd src && cp /tmp/.mcp.json ..", "scp host:.envrc .",
    "scp host:/etc/.mcp.json ./", "scp -r host:proj/.claude .", "curl -O https://x.example/.mcp.json",
    "curl -sSLO https://x.example/a/.envrc?x=1", "curl --remote-name https://x.example/.envrc",
    "curl -OJ https://x.example/download", "curl -O 'https://x.example/.envr[a-z]'",
    "curl --output-dir .claude -O https://x.example/settings.json", "wget https://x.example/.envrc",
    "wget -q https://x.example/.mcp.json", "wget -r https://x.example/", "wget -x -nH https://x.example/.claude/s.json",
    "wget --content-disposition https://x.example/download", "wget -i urls.txt", "wget --input-file=urls.txt",
    "cat urls.txt | xargs curl -O", "git clone https://x.example/u/.claude.git", "git clone https://x.example/u/.claude",
    "git clone git@host:u/.husky.git", "gh repo clone u/.claude", "gh repo sync", "gh release download v1",
    "gh run download 123", "cargo new .claude", "gh pr checkout 123", "gh pr merge 123 --squash",
    "glab mr checkout 5", "bsdtar xf a.tar", "cpio -idm < a.cpio", "pax -r < a.pax", "uudecode x.uu",
    "gunzip .envrc.gz", "gunzip -k .envrc.gz",
    "gzip -d .mcp.json.gz", "unxz .envrc.xz", "bunzip2 -k .envrc.bz2", "zstd -d .envrc.zst", "gzip -S c .envr",
    "gunzip -S .x .envrc.x", "gunzip .*.gz", "split -a 1 -b 100 payload .envr", "split -b 1k payload .mcp.",
    "csplit payload 1 -f .envr", "split --prefix=.envr payload",
    # an output named by an option the table did not declare, or right after sed's w command
    "iconv -f utf8 -t ascii -o .envrc x", "tsc --outFile .envrc x.ts", "docker build -o .claude .",
    "docker build -o type=local,dest=.claude .", "docker buildx build --output=type=tar,dest=.claude/x.tar .",
    "npm pack --pack-destination .claude", "sed -n w.envrc x", "sed 's/a/b/w.mcp.json' x",
    # files that make the user's tools run programs later: mise's configuration
    "touch .mise.toml", "cp /tmp/x .mise.local.toml", "mkdir -p .config/mise"]
ORDINARY = [
    "cp a.txt b.txt", "cp src/*.py build/", "cp -r src dist", "cp /tmp/x/a.txt .", "cp src/*.py .",
    "ln -s ../shared/lib.py src/lib.py", "install -m 755 build/tool bin/", "curl -sSLO https://x.example/file.tgz",
    "curl -o out.json https://x.example/.envrc", "wget https://x.example/pkg.tar.gz", "wget -O - https://x.example/.envrc",
    "wget -qO data.csv https://x.example/.envrc", "wget -P /tmp https://x.example/.envrc", "gzip data.txt",
    "gunzip data/*.gz", "gzip -k logs/app.log", "gunzip -c .envrc.gz", "split -l 1000 big.log part_",
    "split -b 10M big.bin", "scp host:notes.txt .", "cargo build --target-dir .target", "npx tsc --outDir dist",
    "pytest --cache-clear", "sed -n 'w out.txt' x", "git clone https://x.example/u/repo.git",
    "git clone https://x.example/u/repo.git lib/repo", "gh repo clone u/repo", "gh repo view u/repo", "gh pr list",
    "gh release download v1 -D /tmp/x", "cargo new myproj", "cargo init", "gh pr list", "gh pr view 1", "glab mr list"]


@pytest.mark.parametrize("command", NAMED_BY_THE_SOURCE)
def test_a_file_named_by_its_source_or_a_suffix_is_a_write_of_its_zone(command: str) -> None:
    assert changes_config(command), command


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_copies_downloads_and_archives_stay_allowed(command: str) -> None:
    assert not changes_config(command), command


# curl -o's `#N` is what the URL's Nth glob matched (red-team pass of 2026-11-29, late morning: `curl -o '#1'
# 'https://h/{.mcp.json}'` wrote .mcp.json, read as a file named `#1`, allowed)
@pytest.mark.parametrize("command", [
    "curl -o '#1' 'https://x.example/{.mcp.json}'", "curl -o '.mcp.#1' 'https://x.example/{json}'",
    "curl 'https://x.example/{.envrc}' -o '#1'", "curl -o '#1/settings.json' 'https://x.example/{.claude}'",
    "curl --output '#1' 'https://x.example/[.envrc]'", "curl -so#1 'https://x.example/{.envrc}'"])
def test_a_curl_output_named_by_the_urls_globs_is_any_name_in_its_folder(command: str) -> None:
    assert changes_config(command), command


def test_a_curl_output_without_a_glob_number_is_the_file_it_names() -> None:
    assert not changes_config("curl -o 'out#.txt' https://x.example/a")
    assert not changes_config("curl -o /tmp/x/#1.txt 'https://x.example/[1-3]'")
