"""Whether the compiled search kernels are ready, and the background warm-up that makes them ready.

numba compiles the BM25 kernel (:mod:`clear_rag.index.kernels`), the int8 pre-pass
(:mod:`clear_rag.index.prepass`) and the batched top k (:mod:`clear_rag.index.batched`) at their
first call. The predecessor called them from the first search, so the first question after an
install waited on the compiler: 15.7 s in the keyword stage against 26 ms in the vector stage, 19 to
43 s for a server's first question under load (issue 26).

Now a search asks :func:`kernels`, which never waits: until the kernels are ready it returns None
and the search runs on numpy, the path that gives the same lists (``ranking.exhaustive``, bit for
bit; one full float32 product for vectors, the same ids, scores equal to float32 rounding). Its
first call starts one daemon thread that

1. reads the stamp of :mod:`clear_rag.index.warm` (no numba import) to learn whether numba's on-disk
   cache already holds every kernel;
2. if not, runs ``python -m clear_rag.index.warm --nice 10`` in a subprocess, which compiles them
   into that cache: the compile holds the child's GIL, not this process's, at a lower priority;
3. loads the kernels into this process from the cache (well under a second) by the same calls, and
   switches numba's compiling off for them: a search passing argument types the warm-up did not
   cover gets ``TypeError`` instead of a compile, and :func:`fall_back` puts every later search back
   on numpy, saying why.

A warm-up that fails is recorded (:func:`status`'s reason) and logged once as a warning, never raised
into a question. Where numba is not installed nothing starts and every search uses numpy, as before.

Exit. The thread is a daemon, so a command exits as soon as its own work is done. A compile still
running then is left to finish, so that the next process finds the cache warm: the child holds no
pipe of ours (stdin and stdout are /dev/null, stderr an unlinked temporary file), so it never blocks
writing to a reader that went away nor keeps a caller's pipe open (``clear-rag ask | head`` ends with
clear-rag), and it runs in a session of its own, so a Ctrl-C meant for us does not cut it short.
numba writes each cache file under a temporary name and renames it, so a child killed anyway leaves
no half-written file, only a compile the next process runs again (see :mod:`clear_rag.index.warm`).
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Literal

from clear_rag.errors import ClearRagError
from clear_rag.index import warm

__all__ = ["Kernels", "Readiness", "Warmer", "fall_back", "kernels", "start", "status", "wait"]

logger = logging.getLogger(__name__)

NICE = 10  # the compile's priority below ours: on two cores a question still gets one
# The most a warm-up may take before it is stopped and searches stay on numpy: 15.7 s idle and 43 s
# under load were measured on two cores; a compile this slow is stuck, not busy.
TIMEOUT_S = 900.0
ROOT = warm.HERE.parents[1]  # the folder holding this clear_rag package
COMMAND = (sys.executable, "-m", "clear_rag.index.warm", "--nice", str(NICE))

State = Literal["absent", "idle", "warming", "loading", "ready", "failed"]


@dataclass(frozen=True, slots=True)
class Kernels:
    """The compiled modules, once they are loaded and may be called without compiling."""

    bm25: ModuleType  # clear_rag.index.kernels
    prepass: ModuleType  # clear_rag.index.prepass
    batched: ModuleType  # clear_rag.index.batched


@dataclass(frozen=True, slots=True)
class Readiness:
    """Where the warm-up is. ``reason`` says why the kernels are not used (``absent``, ``failed``) or
    how they were made ready; the times are seconds, from the warm-up's start."""

    state: State
    reason: str = ""
    cache_s: float | None = None  # until numba's cache held every kernel (the compile, if one ran)
    ready_s: float | None = None  # until the kernels were loaded here and searches switched to them


class WarmUpError(RuntimeError):
    """Why the warm-up did not make the kernels ready; recorded, never raised into a search."""


# Every compile started, referenced for the process's life: one may outlive the thread waiting on it,
# and a Popen collected while its child runs warns that it is still running.
_children: list[subprocess.Popen[bytes]] = []


def numba_installed() -> bool:
    return importlib.util.find_spec("numba") is not None


def spawn(command: Sequence[str] = COMMAND) -> Callable[[float], None]:
    """Start the compile in a subprocess; returns the wait for it, which raises ``WarmUpError`` with
    the end of its stderr if it fails or runs past the wait's timeout (then it is killed)."""
    said = shlex.join(command)
    errors = tempfile.TemporaryFile()  # noqa: SIM115 - the child writes it after we return; finish closes it
    try:
        # cwd: ``-m`` then imports this very package, not another checkout the caller stands in
        child = subprocess.Popen(
            command,
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errors,
            start_new_session=True,
        )
    except OSError as err:
        errors.close()
        raise WarmUpError(f"`{said}` could not start ({err})") from err
    _children.append(child)

    def finish(timeout_s: float) -> None:
        with errors:
            try:
                code = child.wait(timeout_s)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
                raise WarmUpError(f"`{said}` ran past {timeout_s:.0f} s and was stopped") from None
            if code != 0:
                errors.seek(0)
                lines = errors.read().decode("utf-8", "replace").strip().splitlines()
                last = lines[-1] if lines else "no message"
                raise WarmUpError(f"`{said}` exited with status {code}: {last}")

    return finish


def launch() -> Callable[[], str]:
    """Begin filling numba's cache: nothing where the stamp says it holds every kernel, else start the
    command. Called in the search that needs the kernels first (a stamp read, a process started:
    milliseconds), so the compile has begun even if this process ends right after; returns the wait
    for it, with a note of how the cache was filled."""
    if warm.is_warm():
        return lambda: "numba's cache already held every kernel"
    finish = spawn()

    def compiled() -> str:
        finish(TIMEOUT_S)
        return "compiled into numba's cache by `python -m clear_rag.index.warm`"

    return compiled


def load_cached() -> Kernels:
    """Import the kernels and load every version searches use from numba's cache, then switch
    compiling off for them (:func:`clear_rag.index.warm.freeze`)."""
    from clear_rag.index import batched, kernels, prepass

    compiled = warm.exercise()
    if compiled:  # the stamp was wrong, or the cache folder differs: the cache holds them now
        logger.info("compiled %d kernel version(s) in this process: numba's cache lacked them", compiled)
        with contextlib.suppress(ClearRagError):  # a stamp not written only costs a later check
            warm.write_stamp(0.0)
    warm.freeze()
    return Kernels(kernels, prepass, batched)


class Warmer:
    """One process's warm-up, started once by the first search that could use a kernel.

    ``launch`` begins filling numba's cache and returns the wait for it (a note of how it was
    filled), ``load`` loads the kernels here; tests pass fakes of both, and ``available`` in place
    of looking for numba.
    """

    def __init__(
        self,
        *,
        launch: Callable[[], Callable[[], str]] = launch,
        load: Callable[[], Kernels] = load_cached,
        available: Callable[[], bool] = numba_installed,
    ) -> None:
        self._launch, self._load, self._available = launch, load, available
        self._lock = threading.Lock()
        self._settled = threading.Event()  # ready, failed or absent: nothing more will change
        self._kernels: Kernels | None = None
        self._status = Readiness("idle")
        self._started = 0.0

    def kernels(self) -> Kernels | None:
        """The loaded kernels, or None while they are not ready (starting the warm-up, once)."""
        found = self._kernels
        if found is None and self._status.state == "idle":
            self.start()
        return found

    def start(self) -> None:
        """Start the warm-up, its waiting in a daemon thread, unless it has started (or numba is
        absent)."""
        with self._lock:
            if self._status.state != "idle":
                return
            if not self._available():
                self._status = Readiness("absent", "numba is not installed: searches use numpy")
                self._settled.set()
                return
            self._status, self._started = Readiness("warming"), time.perf_counter()
            try:
                filled = self._launch()
            except Exception as err:
                self._fail(err)
                return
        threading.Thread(target=self._run, args=(filled,), name="clear-rag-kernels", daemon=True).start()

    def wait(self, timeout: float | None = None) -> Readiness:
        """Start the warm-up if need be and wait until it has settled (or ``timeout`` seconds)."""
        self.start()
        self._settled.wait(timeout)
        return self._status

    def status(self) -> Readiness:
        return self._status

    def fall_back(self, err: BaseException) -> None:
        """A kernel refused a search's arguments (``TypeError``: a version the warm-up did not
        compile, which may not be compiled now): every later search uses numpy; said once."""
        with self._lock:
            if self._kernels is None:
                return
            self._kernels = None
            reason = f"a kernel has no compiled version for a search's arguments ({err})"
            self._status = replace(self._status, state="failed", reason=reason)
        logger.warning("%s; searches use numpy from now on, with the same results", reason)

    def _run(self, filled: Callable[[], str]) -> None:
        try:
            note = filled()
            with self._lock:
                self._status = Readiness("loading", note, time.perf_counter() - self._started)
            found = self._load()
        except Exception as err:  # whatever it is, the question must not see it: numpy answers
            with self._lock:
                self._fail(err)
            return
        with self._lock:
            self._kernels = found
            self._status = replace(self._status, state="ready", ready_s=time.perf_counter() - self._started)
            self._settled.set()

    def _fail(self, err: Exception) -> None:
        """Record why (the lock held), say it once, and settle on numpy."""
        reason = str(err) if isinstance(err, WarmUpError) else f"{type(err).__name__}: {err}"
        ready_s = time.perf_counter() - self._started
        self._status = replace(self._status, state="failed", reason=reason, ready_s=ready_s)
        logger.warning("the compiled search kernels are not used (%s); searches use numpy", reason)
        self._settled.set()


_warmer = Warmer()


def kernels() -> Kernels | None:
    """The compiled kernels if they are ready, else None (search with numpy); never waits."""
    return _warmer.kernels()


def start() -> None:
    """Start warming now (``clear-rag serve`` does, as it starts), rather than at the first search."""
    _warmer.start()


def wait(timeout: float | None = None) -> Readiness:
    """Wait until the kernels are ready, or the warm-up failed (tests and benchmarks; never a search)."""
    return _warmer.wait(timeout)


def status() -> Readiness:
    return _warmer.status()


def fall_back(err: BaseException) -> None:
    _warmer.fall_back(err)
