"""Whether a host named in a remote operand (`scp x HOST:PATH`, `scp://HOST/PATH`) is this machine, so that its path
is a local path: scp and rsync reach this machine's files through its own ssh server as well as any other host's.

A fixed list of spellings missed most of them (`[::1]`, `127.1`, `0x7f000001`, `localhost.`, the machine's own
hostname, a name /etc/hosts or ~/.ssh/config gives it): any loopback or unspecified address in any notation the C
library reads, the names of `localhost`, and the names this machine answers to on its disk."""
from __future__ import annotations

import functools
import ipaddress
import os
import re
import socket

LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback", "localhost4",
                         "localhost6", "localhost4.localdomain4", "localhost6.localdomain6"})
_NUMERIC = re.compile(r"^[0-9a-fx.]+$", re.IGNORECASE)      # inet_aton's forms: 127.1, 0x7f000001, 2130706433, 0177.1
HOSTS_FILE = "/etc/hosts"


def this_machine(host: str, home: str) -> bool:
    """Whether `host` (`user@` and `[...]` allowed) names this machine."""
    h = host.rsplit("@", 1)[-1].strip("[]").split("%", 1)[0].rstrip(".").casefold()
    if h in LOCAL_NAMES or h.endswith(".localhost"):
        return True
    ip = _address(h)
    if ip is not None:
        return _local_address(ip)
    return h in machine_names(home)


def _address(h: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(h)
    except ValueError:
        pass
    if _NUMERIC.match(h):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(h))
        except OSError:
            return None
    return None


def _local_address(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback or ip.is_unspecified or ip in interface_addresses()


FIB_TRIE = "/proc/net/fib_trie"
IF_INET6 = "/proc/net/if_inet6"


@functools.lru_cache(maxsize=1)
def interface_addresses() -> frozenset[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """The addresses of this machine's own network interfaces (`scp x 192.0.2.2:.bashrc` with 192.0.2.2 on eth0 reaches
    the home through the machine's own ssh server): Linux's routing table's local entries and its IPv6 interface list.
    Empty where they cannot be read (another system: its interfaces' addresses are not known here)."""
    found: set[ipaddress.IPv4Address | ipaddress.IPv6Address] = set()
    last = ""
    for line in _proc_lines(FIB_TRIE):
        words = line.split()
        if words[:1] == ["|--"] and len(words) == 2:
            last = words[1]
        elif "host" in words and "LOCAL" in words and (ip := _address(last)) is not None:
            found.add(ip)
    for line in _proc_lines(IF_INET6):
        words = line.split()
        if words and _HEX32.fullmatch(words[0]):
            found.add(ipaddress.IPv6Address(int(words[0], 16)))
    return frozenset(found)


_HEX32 = re.compile(r"[0-9a-fA-F]{32}")


def _proc_lines(path: str) -> list[str]:
    """The lines of a /proc file; none where it cannot be read (not Linux: only loopback and the names count there)."""
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.readlines()
    except OSError:
        return []


@functools.lru_cache(maxsize=8)
def machine_names(home: str) -> frozenset[str]:
    """This machine's own names (its hostname and the first label of it), the names /etc/hosts gives a loopback
    address or one of those names' addresses, and the ~/.ssh/config aliases (`Host a b`) whose HostName is one of
    them; case-folded. Read once a process (the hook decides one call a process)."""
    names = {socket.gethostname().casefold()}
    names.add(next(iter(names)).split(".", 1)[0])
    names |= _hosts_names(names)
    names |= _ssh_aliases(os.path.join(home, ".ssh", "config"), names)
    names.discard("")
    return frozenset(names)


def _hosts_names(names: set[str]) -> set[str]:
    try:
        with open(HOSTS_FILE, encoding="utf-8", errors="replace") as f:
            lines = [line.split("#", 1)[0].split() for line in f]
    except OSError:
        return set()
    out: set[str] = set()
    for words in (w for w in lines if len(w) >= 2):
        ip = _address(words[0].split("%", 1)[0])
        folded = {w.casefold().rstrip(".") for w in words[1:]}
        if (ip is not None and _local_address(ip)) or folded & names:
            out |= folded
    return out


def _ssh_aliases(path: str, names: set[str]) -> set[str]:
    """The `Host` aliases of an ssh configuration whose `HostName` is this machine (no wildcard aliases, no Include)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = [line.split("#", 1)[0].strip() for line in f]
    except OSError:
        return set()
    out: set[str] = set()
    aliases: list[str] = []
    for line in lines:
        key, _, value = line.replace("=", " ", 1).partition(" ")
        key, value = key.casefold(), value.strip()
        if key in ("host", "match"):
            aliases = [a.casefold() for a in value.split() if key == "host" and not any(c in a for c in "*?!")]
        elif key == "hostname" and aliases:
            target = value.casefold().rstrip(".")
            ip = _address(target.strip("[]"))
            if target in LOCAL_NAMES or target in names or (ip is not None and _local_address(ip)):
                out |= set(aliases)
    return out
