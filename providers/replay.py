"""Answers from recorded exchanges: replays a synthesis, or serves hand-scripted answers in tests."""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from veriguard.providers.errors import fail
from veriguard.providers.types import (
    Completion, CompletionRequest, ProviderError, canonical_json, hash_parts, request_hash,
)



class ReplayProvider:
    """Answers from recorded exchanges, in order, checking each request against the recording.

    An exchange is a mapping as exported by `synth.transcripts` (`stage`, `request_hash`,
    `system`, `prompt`, `schema`, `data`, `text`, ..., `error`). One with no `request_hash` and
    no texts is checked on its stage only, which makes hand-scripted answers easy.
    """

    name = "replay"
    needs_key = False

    def __init__(self, exchanges: Sequence[Mapping[str, Any]], *, model: str = "replay") -> None:
        self.exchanges = list(exchanges)
        self.model = model
        self.position = 0

    @classmethod
    def from_file(cls, path: str | Path) -> ReplayProvider:
        transcript = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls(transcript["exchanges"], model=str(transcript.get("synthesis", {}).get("model", "replay")))

    def complete(self, request: CompletionRequest) -> Completion:
        index = self.position
        if index >= len(self.exchanges):
            why = f"exchange {index + 1} (stage {request.stage!r}) diverged from the recording, which has only"
            fix = "the loop asked for more than was recorded; re-record with a live provider"
            raise ProviderError("provider.replay_mismatch", f"{why} {len(self.exchanges)} exchanges; {fix}")
        recorded = self.exchanges[index]
        self._check(index, recorded, request)
        self.position += 1
        error = recorded.get("error")
        if error:
            raise fail(error["code"], error["message"], (recorded.get("request"), recorded.get("response")))
        if not isinstance(recorded.get("data"), Mapping):
            why = f"exchange {index + 1} has neither an answer ('data' object) nor an 'error'"
            raise ProviderError("provider.replay_mismatch", f"{why}; the transcript is incomplete, re-record it")
        return Completion(
            data=dict(recorded["data"]),
            text=str(recorded.get("text") or canonical_json(recorded["data"])),
            model=str(recorded.get("model") or self.model),
            input_tokens=int(recorded.get("input_tokens") or 0),
            output_tokens=int(recorded.get("output_tokens") or 0),
            latency_s=0.0,
            stop_reason=recorded.get("stop_reason"),
            raw_request=dict(recorded.get("request") or {}),
            raw_response=dict(recorded.get("response") or {}),
        )

    def _check(self, index: int, recorded: Mapping[str, Any], request: CompletionRequest) -> None:
        problems = []
        if recorded.get("stage") != request.stage:
            problems.append(f"stage is {request.stage!r}, recorded {recorded.get('stage')!r}")
        expected_hash = recorded.get("request_hash")
        if expected_hash is None and "prompt" in recorded:
            expected_hash = hash_parts(recorded["system"], recorded["prompt"], recorded["schema"])
        if expected_hash is not None and expected_hash != request_hash(request):
            current = {"system": request.system, "prompt": request.prompt, "schema": request.schema}
            differing = [part for part, now in current.items() if part in recorded and recorded[part] != now]
            problems.append(
                f"request hash {request_hash(request)[:12]} != recorded {str(expected_hash)[:12]}"
                + (f" ({', '.join(differing)} changed)" if differing else "")
            )
        if problems:
            raise ProviderError(
                "provider.replay_mismatch",
                f"exchange {index + 1} of {len(self.exchanges)} diverged from the recording: "
                f"{'; '.join(problems)}. The spec, prompts or loop changed since recording; "
                "re-record with a live provider or replay with the matching veriguard version",
            )
