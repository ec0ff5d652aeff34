"""Well-formed image files with random pictures, for the tool-call reader's tests (E33): a PNG (chunks with CRCs), a
baseline JPEG (segments, an entropy-coded scan with its 0xFF bytes stuffed) and a GIF (blocks and sub-blocks)."""
import random
import struct
import zlib


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(rng: random.Random, size: int = 32, extra: bytes = b"", trailing: bytes = b"") -> bytes:
    rows = b"".join(b"\x00" + rng.randbytes(3 * size) for _ in range(size))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0))
            + chunk(b"pHYs", struct.pack(">IIB", 2835, 2835, 1)) + extra
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"") + trailing)


def jpeg(rng: random.Random, scan: int = 3000, extra: bytes = b"", trailing: bytes = b"") -> bytes:
    def segment(marker: int, data: bytes) -> bytes:
        return bytes((0xFF, marker)) + struct.pack(">H", len(data) + 2) + data
    entropy = rng.randbytes(scan).replace(b"\xff", b"\xff\x00")
    return (b"\xff\xd8" + segment(0xE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00") + extra
            + segment(0xDB, b"\x00" + rng.randbytes(64)) + segment(0xC0, b"\x08\x00\x20\x00\x20\x01\x01\x11\x00")
            + segment(0xC4, b"\x00" + bytes(16) + b"") + segment(0xDA, b"\x01\x01\x00\x00\x3f\x00")
            + entropy + b"\xff\xd9" + trailing)


def gif(rng: random.Random, picture: int = 3000, extra: bytes = b"", trailing: bytes = b"") -> bytes:
    data = rng.randbytes(picture)
    blocks = b"".join(bytes((len(part),)) + part for part in (data[i:i + 255] for i in range(0, len(data), 255)))
    return (b"GIF89a" + struct.pack("<HHBBB", 32, 32, 0xF7, 0, 0) + rng.randbytes(768)
            + b"\x21\xf9\x04\x00\x00\x00\x00\x00" + extra
            + b"\x2c" + struct.pack("<HHHHB", 0, 0, 32, 32, 0) + b"\x08" + blocks + b"\x00\x3b" + trailing)


def comment_gif(text: bytes) -> bytes:   # a GIF comment extension block holding `text`
    return b"\x21\xfe" + b"".join(bytes((len(p),)) + p for p in (text[i:i + 255] for i in range(0, len(text), 255))) + b"\x00"


def jpeg_segment(marker: int, data: bytes) -> bytes:
    return bytes((0xFF, marker)) + struct.pack(">H", len(data) + 2) + data
