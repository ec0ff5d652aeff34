"""`veriguard synth --jobs N`: several specs at once, each job with its own Nagini worker (one JVM each).

Nagini is not thread-safe inside one process, so parallelism means separate worker processes; each
costs a JVM start and its heap (about 0.5 to 1 GB with the default heap), and on two cores two jobs
are the useful most. Jobs share the proof cache (entries are written atomically). With one job
nothing runs ahead: each spec is synthesized when the caller asks for it, in the caller's thread.
"""
from __future__ import annotations

import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Callable, NamedTuple

from veriguard.synth.specfile import SpecFile, load_spec
from veriguard.synth import pipeline
from veriguard.verify.nagini import NaginiWorker
from veriguard.verify.proof_cache import ProofCache


class Done(NamedTuple):
    spec: SpecFile
    result: pipeline.SynthResult
    worker: NaginiWorker      # the worker that proved it (its stats go into run.json)


class SpecRunner:
    """load_spec + pipeline.compiled_policy + synthesize for each path, `jobs` at a time; `done(path)` returns
    its outcome in the caller's thread and raises the spec's own error (a VeriguardError) there."""

    def __init__(self, paths: list[str], *, jobs: int, make_worker: Callable[[], NaginiWorker],
                 cache: ProofCache | None, mutant_limit: int, progress: Callable[[str], None],
                 before_proof: Callable[[SpecFile], None] | None = None) -> None:
        self.make_worker, self.cache, self.mutant_limit = make_worker, cache, mutant_limit
        self.progress, self.before_proof = progress, before_proof
        self.workers: list[NaginiWorker] = []
        self._local = threading.local()
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="synth") if jobs > 1 else None
        self._futures: dict[str, Future[Done]] = {}
        if self._pool is not None:
            self._futures = {p: self._pool.submit(self._run, p) for p in dict.fromkeys(paths)}

    def _worker(self) -> NaginiWorker:
        worker = getattr(self._local, "worker", None)
        if worker is None:
            worker = self._local.worker = self.make_worker()
            with self._lock:
                self.workers.append(worker)
        return worker

    def _run(self, path: str) -> Done:
        self.progress(f"{path}: loading the spec")
        spec = load_spec(path)
        if self.before_proof is not None:
            self.before_proof(spec)
        compiled = pipeline.compiled_policy(spec, self.cache)
        worker = self._worker()

        def progress(message: str) -> None:
            self.progress(f"{spec.name}: {message}")

        with tempfile.TemporaryDirectory(prefix="veriguard-") as tmp:
            result = pipeline.synthesize_spec(spec, worker, workdir=Path(tmp), progress=progress,
                                              mutant_limit=self.mutant_limit, cache=self.cache, compiled=compiled)
        return Done(spec, result, worker)

    def done(self, path: str) -> Done:
        future = self._futures.get(path)
        return future.result() if future is not None else self._run(path)

    def close(self) -> None:
        """Cancel what has not started, wait for what runs, then stop every worker."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        for worker in self.workers:
            worker.close()
