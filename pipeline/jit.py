"""Compiled hot loops without paying for numba at import time."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

# Lock files of the kernels, one per kernel and checkout, inside the version's cache folder.
LOCKS = "locks"


@functools.cache
def _cache_dir() -> Path:
    """Where numba keeps compiled kernels: a folder per version of our source.

    numba checks only the source file of the function it compiles, not the helpers it calls from
    other files nor the global arrays it bakes in, so its own cache can serve stale code after an
    edit. Naming the folder after a hash of every module of the package rules that out.
    """
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode())
        digest.update(path.read_bytes())
    return cache_home() / f"numba-{digest.hexdigest()[:16]}"


# Kernel folders of other versions (older releases, earlier edits) not used for this long are
# removed when a first build compiles a new version's: each holds tens of megabytes.
UNUSED_DAYS = 14


def kernels_cached() -> bool:
    """Whether this version's kernels were compiled for this checkout before (a first build
    compiles every kernel it uses, about 16 s on 2 cores); marks the version's folder as used.

    numba keeps a folder per source folder, named after its absolute path: a second checkout
    of the same version shares the version's folder but compiles into folders of its own.
    """
    folder = _cache_dir()
    package = Path(__file__).resolve().parent
    ours = {_numba_subpath(d) for d in (package, *(p for p in package.rglob("*") if p.is_dir()))}
    if not folder.is_dir() or not any(entry.name in ours for entry in folder.iterdir()):
        return False
    with contextlib.suppress(OSError):
        os.utime(folder)
    return True


def lock_dir() -> Path:
    """The kernels' lock files of this checkout. Checkouts of one version share its cache folder
    but not their compiled kernels (numba keeps a folder per source path): a lock file is made
    the first time a kernel is compiled, so a lock folder per checkout tells that another
    checkout is compiling what the first compiled long ago (`notice_compiles`)."""
    return _cache_dir() / LOCKS / _numba_subpath(Path(__file__).resolve().parent)


def _numba_subpath(source_dir: Path) -> str:
    """The folder numba caches the kernels of `source_dir`'s files in, inside its cache folder
    (numba.core.caching._CacheLocator.get_suitable_cache_subpath; a test holds the two equal)."""
    path = os.path.abspath(source_dir)
    return f"{os.path.basename(path)}_{hashlib.sha1(path.encode()).hexdigest()}"


def remove_unused_kernels() -> list[Path]:
    """Delete the kernel folders of other versions that no build used for UNUSED_DAYS days;
    returns them."""
    import shutil
    import time

    current, home = _cache_dir(), cache_home()
    cutoff = time.time() - UNUSED_DAYS * 86400
    removed = []
    for folder in sorted(home.glob("numba-*")) if home.is_dir() else []:
        with contextlib.suppress(OSError):
            if folder != current and folder.is_dir() and not folder.is_symlink() and folder.stat().st_mtime < cutoff:
                shutil.rmtree(folder)
                removed.append(folder)
    return removed


def cache_home() -> Path:
    """This user's cache folder of pcg-pipeline (compiled kernels, plugin sources)."""
    return Path(
        os.environ.get("NUMBA_CACHE_DIR")
        or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "pcg-pipeline")
    )


class _Lazy:
    """A function that becomes `numba.njit(cache=True, nogil=True)(fn)` on its first call."""

    def __init__(self, fn: Callable[..., Any]):
        self.fn = fn
        self.dispatcher: Any = None
        functools.update_wrapper(self, fn)

    def materialize(self) -> Any:
        if self.dispatcher is None:
            import numba
            from numba import njit

            numba.config.CACHE_DIR = str(_cache_dir())

            # Compiled code can only call compiled code: swap every lazy helper this function
            # names (imported or local) for its real dispatcher before numba reads the globals.
            namespace = self.fn.__globals__
            for name in self.fn.__code__.co_names:
                dep = namespace.get(name)
                if isinstance(dep, (_Lazy, _Deferred)):
                    namespace[name] = dep.materialize()
            # No C-callable wrapper: nothing takes a kernel's address, and numba would lower,
            # optimise and machine-compile one per kernel (a seventh of a first build's LLVM time).
            dispatcher = njit(cache=True, nogil=True, no_cfunc_wrapper=True)(self.fn)
            dispatcher.compile = _one_at_a_time(dispatcher.compile, f"{self.fn.__module__}.{self.fn.__qualname__}")
            self.dispatcher = dispatcher
        return self.dispatcher

    def __call__(self, *args: Any) -> Any:
        return self.materialize()(*args)


# Kernels whose lock this process holds: a kernel that calls itself is compiled within its own
# compile, and a second flock of the same file from this process would wait for itself.
_held: set[str] = set()


def _one_at_a_time(compile: Callable[[Any], Any], kernel: str) -> Callable[[Any], Any]:
    """`dispatcher.compile` (every signature, and also when a caller being compiled types a call
    to this kernel) under a lock across processes: the worker processes of a cold `pcg build -j
    N` all reach the same kernels at the same moment, and each would compile them (the same
    seconds of work, N times over). Under the lock, numba first looks in its disk cache, so the
    processes that waited load what the first compiled.

    Locks are taken in call order (caller, then callee) and kernels never call each other in a
    cycle, so two processes cannot each hold what the other waits for. Inside a process, numba's
    compiler lock comes first: a thread compiling a caller holds it while it takes the callee's
    file lock, so a thread holding a file lock must never wait for the compiler lock."""
    from numba.core import sigutils
    from numba.core.compiler_lock import global_compiler_lock

    from pipeline.time_limit import paused

    overloads = compile.__self__.overloads  # type: ignore[attr-defined]

    def locked_compile(sig: Any) -> Any:
        # numba asks again each time a caller types a call to this kernel: a version this
        # process has needs no lock (nor a wait while another process compiles another one).
        existing = overloads.get(tuple(sigutils.normalize_signature(sig)[0]))
        if existing is not None:
            return existing.entry_point
        with paused(), global_compiler_lock, _kernel_lock(kernel):
            return compile(sig)

    return locked_compile


@contextlib.contextmanager
def _kernel_lock(kernel: str) -> Iterator[None]:
    from pipeline.lock import exclusive

    if kernel in _held:
        yield
        return
    with contextlib.ExitStack() as stack:
        try:
            folder = lock_dir()
            folder.mkdir(parents=True, exist_ok=True)
            stack.enter_context(exclusive(folder / f"{kernel}.lock"))
        except OSError:
            pass  # a cache folder we cannot write: numba cannot cache there either, so nothing to share
        _held.add(kernel)
        stack.callback(_held.discard, kernel)
        yield


def compile_notice(first_run: bool) -> str:
    """What a build says as it starts compiling (`pcg build`, `pcg watch`, `pcg serve`)."""
    if first_run:
        return "compiling kernels, first run only (about 16 s on 2 cores for the example recipes; later builds load them) ..."
    return "compiling kernels of stages or rule nodes not run before, once (a rule program's nodes can take a minute) ..."


@contextlib.contextmanager
def notice_compiles(notice: Callable[[], None], interval: float = 0.25) -> Iterator[None]:
    """Call `notice()` once if, while the block runs, a worker starts compiling a kernel that no
    build of this version in this checkout has compiled: it takes its lock first, and a kernel's
    lock file is made the first time. A first build would otherwise sit silent for most of a
    minute, and one that only adds a stage kind or rule node (a rule program's `observe` or
    `wfc`: up to a minute) too; a build that compiles nothing says nothing."""
    import threading

    folder = lock_dir()

    def locks() -> set[str]:
        try:
            return set(os.listdir(folder))
        except OSError:
            return set()

    known, stop = locks(), threading.Event()

    def watch() -> None:
        while not stop.wait(interval):
            if locks() - known:
                notice()
                return

    thread = threading.Thread(target=watch, name="pcg-compile-notice", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


class _Deferred:
    """A function from numba's own modules (which import numba), imported when a compiled
    function that calls it is compiled."""

    def __init__(self, module: str, name: str):
        self.module = module
        self.name = name

    def materialize(self) -> Any:
        import importlib

        return getattr(importlib.import_module(self.module), self.name)


def numba_function(module: str, name: str) -> Any:
    """`from module import name` for compiled functions, deferred like `compiled` (numba's jitable
    helpers, such as its bounded random integers, are only importable with numba)."""
    return _Deferred(module, name)


def uncompiled(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """A `compiled` function's own Python code, to run without numba: the same results, at
    Python's speed (it must call no other compiled function). The module's name may hold the
    lazy wrapper, or numba's dispatcher once a compiled caller swapped it in (`_Lazy.materialize`)."""
    return kernel.fn if isinstance(kernel, _Lazy) else kernel.py_func  # type: ignore[attr-defined, no-any-return]


def compiled(fn: F) -> F:
    """`numba.njit(cache=True, nogil=True)`, applied on the first call.

    Importing numba costs about 0.3 s; stage modules are imported by every command (to validate
    recipes, to list stages), but only a build that runs the stage needs the compiled loop.
    Compiled functions may call each other, and release the GIL, so threads can run them at
    once (`pipeline.threads`).
    """
    return _Lazy(fn)  # type: ignore[return-value]


def ready_before_fork() -> None:
    """Import numba and set up its CPU target (its lowering registries, the BLAS check) in this
    process, for the workers it is about to fork to inherit: about 0.6 s of one core that each
    worker would otherwise spend on its first kernel, all of them at once. The kernels
    themselves still load in the workers (each batch's stages pick its own). It starts no
    thread (a test holds it), so forking after it is safe. Only a saving: should it fail, each
    worker sets numba up itself, and says why if it cannot."""
    try:
        from numba.core.registry import cpu_target

        cpu_target.target_context.refresh()
    except Exception:  # the workers meet the same problem, with its message
        pass
