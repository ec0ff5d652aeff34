"""What a build is made of, shared by the writer (synth.freeze) and the reader (enforce.loader).

Stdlib only, no I/O: the online side imports it.
"""
from __future__ import annotations

from typing import Any, Mapping

CERT_FORMAT = "veriguard-certificate/2"
# keys of a spec's [extraction] entries whose values name files beside the spec (copied into the build, hashed)
FILE_KEYS = ("schema", "bank", "commands", "zones")


def referenced_files(extraction: Mapping[str, Any]) -> list[str]:
    """Files an [extraction] section points at (schemas, example banks, command tables, zone maps),
    relative to the spec."""
    return sorted({str(cfg[k]) for cfg in extraction.values() if isinstance(cfg, Mapping)
                   for k in FILE_KEYS if k in cfg})
