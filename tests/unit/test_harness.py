"""The suite's own guard rails: no test reaches the network."""
import socket

import pytest


@pytest.mark.parametrize("address", [("192.0.2.1", 80), ("10.0.0.1", 443)])
def test_a_connection_off_this_machine_fails_the_test(address):
    with socket.socket() as sock, pytest.raises(AssertionError, match="network"):
        sock.connect(address)


def test_resolving_a_remote_name_fails_the_test():
    with pytest.raises(AssertionError, match="resolve"):
        socket.getaddrinfo("api.anthropic.com", 443)


def test_loopback_stays_reachable():
    server = socket.create_server(("127.0.0.1", 0))
    try:
        client = socket.create_connection(server.getsockname(), timeout=1)
        client.close()
    finally:
        server.close()
