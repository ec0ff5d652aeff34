"""Where veriguard keeps what it can recompute (proofs, gate results, the encoder's optimised copy).

Stdlib only: the online side (enforce) and the verifier (verify) both import it."""
from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "VERIGUARD_CACHE"


def cache_dir() -> Path:
    """$VERIGUARD_CACHE, else $XDG_CACHE_HOME/veriguard, else ~/.cache/veriguard."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "veriguard"
