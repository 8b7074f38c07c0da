"""Keep freed image-sized buffers in the process for the next map, rather than returning them to
the system and faulting fresh pages in again.

glibc hands out blocks of 128 KB and more (its threshold grows to about 32 MB once such a block
is freed) as fresh memory mappings and gives the heap's top back on every free. A map's preview
and its arrays are megabytes, made and dropped once per map, so every map touched thousands of
new pages: a 1,000-map pack of 41 x 41-cell mazes took 875,000 page faults, a third of its time
(5.4 of 14 s with -j 1 on a 2-core VM). With fixed, high thresholds it takes 44,000, and 10.4 s.
The cost is that a worker keeps the memory of its largest maps until it exits.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

# mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_TOP_PAD = -2
_M_MMAP_THRESHOLD = -3

_MMAP_THRESHOLD = 64 * 1024**2  # blocks above it (huge maps' layers) are still mapped and unmapped
_TRIM_THRESHOLD = 256 * 1024**2
_TOP_PAD = 64 * 1024**2


@functools.cache
def reuse_freed_memory() -> bool:
    """Tune glibc's allocator for this process (once; children forked later inherit it). False
    where the C library is not glibc (macOS, musl, Windows): nothing to tune there."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return all(
        mallopt(param, value) == 1
        for param, value in ((_M_MMAP_THRESHOLD, _MMAP_THRESHOLD), (_M_TRIM_THRESHOLD, _TRIM_THRESHOLD), (_M_TOP_PAD, _TOP_PAD))
    )
