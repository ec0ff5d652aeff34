"""The OpenAI-compatible fake server (tests/openai_fake_server.py) behind TLS, with a certificate for 127.0.0.1
signed by a throw-away CA that the test writes: what whoever sets the monitor's environment (SSL_CERT_FILE) and
runs a server could do (tests only).

Run: python tests/tls_fake_server.py CERT.pem KEY.pem; it prints its loopback port on stdout. Beside the fake
server's control endpoints, GET /headers gives the headers of every chat-completions request received so far.
"""
from __future__ import annotations

import datetime
import ipaddress
import json
import ssl
import sys
from pathlib import Path
from http.server import ThreadingHTTPServer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from openai_fake_server import LOCK, Handler  # noqa: E402

HEADERS: list[dict[str, str]] = []


class RecordingHandler(Handler):
    """The fake server's handler that also keeps each completion request's headers (a credential sent, say)."""

    def do_GET(self) -> None:
        if self.path == "/headers":
            with LOCK:
                self._send(200, json.dumps(HEADERS).encode())
        else:
            super().do_GET()

    def do_POST(self) -> None:
        if self.path == "/v1/chat/completions":
            with LOCK:
                HEADERS.append({k.lower(): v for k, v in self.headers.items()})
        super().do_POST()


def write_ca_and_server_cert(folder: Path) -> tuple[Path, Path, Path]:
    """(ca.pem, server.pem, server.key) in `folder`: a CA and a certificate for 127.0.0.1 that it signed."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test CA whoever sets the environment holds")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
          .not_valid_after(now + datetime.timedelta(days=2))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])).issuer_name(ca_name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = folder / "ca.pem", folder / "server.pem", folder / "server.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return paths


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), RecordingHandler)
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[1], sys.argv[2])
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print(server.server_address[1], flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()


if __name__ == "__main__":
    sys.exit(main())
