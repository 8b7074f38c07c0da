"""The build's news for the browser: what is building, how far it got, what failed.

Builds run on the watcher's thread; pages listen on the server's event loop (server-sent
events). The hub keeps the latest state, so a page opened mid-build shows it at once, and hands
every event to each listener's queue through that listener's loop (`call_soon_threadsafe`: an
asyncio queue is not safe to touch from another thread).
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import Any

Event = dict[str, Any]
# The last lines of each build a page shows; a build that prints more keeps its end.
LOG_LINES = 200


@dataclass
class Hub:
    generation: int = 0  # builds finished so far
    building: str | None = None  # the recipe being built
    progress: dict[str, int] = field(default_factory=dict)  # done, total of the pack building
    log: list[dict[str, Any]] = field(default_factory=list)  # the current (or last) build's lines
    errors: dict[str, list[str]] = field(default_factory=dict)  # recipe -> its last build's errors
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _listeners: list[tuple[asyncio.AbstractEventLoop, asyncio.Queue[Event | None]]] = field(default_factory=list)

    # -- the build thread tells --------------------------------------------------------

    def started(self, recipe: str) -> None:
        with self._lock:
            self.building, self.progress, self.log = recipe, {}, []
        self._publish({"type": "build", "recipe": recipe})

    def advanced(self, pack: str, done: int, total: int) -> None:
        with self._lock:
            self.progress = {"done": done, "total": total}
        self._publish({"type": "progress", "pack": pack, "done": done, "total": total})

    def line(self, text: str) -> None:
        error = text.startswith("error: ")
        item = {"text": text[7:] if error else text, "error": error}
        with self._lock:
            self.log = (self.log + [item])[-LOG_LINES:]
        self._publish({"type": "log", **item})

    def finished(self, recipe: str, pack: str | None) -> None:
        with self._lock:
            errors = [i["text"] for i in self.log if i["error"]]
            if errors:
                self.errors[recipe] = errors
            else:
                self.errors.pop(recipe, None)
            self.generation += 1
            self.building = None
            event = {"type": "built", "recipe": recipe, "pack": pack, "ok": not errors, "errors": errors, "generation": self.generation}
        self._publish(event)

    # -- pages listen ------------------------------------------------------------------

    def state(self) -> Event:
        with self._lock:
            return {
                "type": "state",
                "generation": self.generation,
                "building": self.building,
                "progress": dict(self.progress),
                "log": list(self.log),
                "errors": {k: list(v) for k, v in sorted(self.errors.items())},
            }

    def listen(self) -> asyncio.Queue[Event | None]:
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        with self._lock:
            self._listeners.append((asyncio.get_running_loop(), queue))
        return queue

    def leave(self, queue: asyncio.Queue[Event | None]) -> None:
        with self._lock:
            self._listeners = [(loop, q) for loop, q in self._listeners if q is not queue]

    def close(self) -> None:
        """End every listener's stream (the server is stopping)."""
        self._publish(None)

    def _publish(self, event: Event | None) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for loop, queue in listeners:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, event)
            except RuntimeError:  # that loop has closed: its page is gone
                self.leave(queue)
