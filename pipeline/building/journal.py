"""The write journal: what a build of a pack may write, and what it did write, kept until the
build has finished.

A build killed (SIGKILL, power loss) after writing some files but before its manifest names them
leaves files that no manifest claims; if the recipe then changes (fewer maps, another stem),
nothing would ever remove them. So before it writes anything, a build records every path it may
write (synced to disk), and before it writes a map's files, their sha256. The journal outlives
a build that does not finish, so the next build of the pack knows which files on disk it is
answerable for: one that no manifest claims, at a path the journal lists, is removed if a build
wrote exactly those bytes, or if no manifest ever claimed that path; a file someone edited by
hand is left alone. A build that finishes deletes its journal.

One journal per pack folder (its name and a digest of its resolved path), so builds of a pack
into two `--out` folders never consume each other's.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.fsio import atomic_write, read_regular

JOURNALS = "journal"


@dataclass
class Record:
    planned: set[str] = field(default_factory=set)  # paths (relative to the pack) a build may write
    wrote: dict[str, set[str]] = field(default_factory=dict)  # path -> sha256 of bytes written there


def cache_deleted(cache_root: Path) -> FileNotFoundError:
    """The error for a cache folder deleted while a build wrote the pack (it held the journal,
    and the files workers made, waiting to be put in place)."""
    return FileNotFoundError(
        errno.ENOENT, "deleted while this build was writing the pack, so the build stopped (it keeps its journal of the files"
        " it writes there); build again", str(cache_root))


class Journal:
    def __init__(self, cache_root: Path, pack_dir: Path):
        where = hashlib.sha256(str(pack_dir.resolve()).encode("utf-8")).hexdigest()[:16]
        self.path = cache_root / JOURNALS / f"{pack_dir.name}-{where}.jsonl"
        self.record = Record()

    def leftover(self) -> Record:
        """What an unfinished earlier build planned and wrote (empty if it finished)."""
        try:
            lines = read_regular(self.path).decode("utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            return Record()  # none (or not ours: it is only ever written by this module)
        record = Record()
        for line in lines:
            try:
                item = json.loads(line)
            except ValueError:
                continue  # a line cut short by the kill
            if not isinstance(item, dict):
                continue
            record.planned.update(p for p in item.get("paths", []) if isinstance(p, str))
            for path, digests in item.get("wrote", {}).items():
                record.wrote.setdefault(path, set()).update(d for d in digests if isinstance(d, str))
        return record

    def begin(self, record: Record, temp_dir: Path) -> None:
        """Record what this build may write (with what earlier builds left), synced to disk
        before any of it is written."""
        self.record = record
        head = {"paths": sorted(record.planned)}
        wrote = {"wrote": {p: sorted(d) for p, d in sorted(record.wrote.items())}}
        text = json.dumps(head, ensure_ascii=False) + "\n" + json.dumps(wrote, ensure_ascii=False) + "\n"
        atomic_write(self.path, text.encode("utf-8"), temp_dir, sync=True)

    def wrote(self, digests: dict[str, str]) -> None:
        """Append the digests of files about to be written (or just written by a worker)."""
        for path, digest in digests.items():
            self.record.wrote.setdefault(path, set()).add(digest)
        line = json.dumps({"wrote": {p: [d] for p, d in sorted(digests.items())}}, ensure_ascii=False) + "\n"
        # Appended, not synced: a kill (the common fault) loses nothing the kernel has; after a
        # power loss a missing line only means an orphan is kept, never that a file is lost.
        try:
            # Never made anew here: a journal deleted under the build is a cache deleted.
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
            with open(fd, "a", encoding="utf-8") as f:
                f.write(line)
        except FileNotFoundError:
            # Its folder went: `rm -r .pcg-cache` (or a cleaner) while the build ran. Writing on
            # without a journal could leave files no later build knows it made.
            raise cache_deleted(self.path.parent.parent) from None

    def end(self) -> None:
        self.path.unlink(missing_ok=True)
