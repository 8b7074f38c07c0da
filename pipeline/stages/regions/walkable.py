"""The old home of WalkableStage, now `pipeline.stages.common.walkable`.

Plugin files import it from here (docs/python.md showed this path), and a plugin's source is
part of its stages' cache key: this import keeps them working without an edit that would make
what they built stale.
"""

from pipeline.stages.common.walkable import WalkableStage

__all__ = ["WalkableStage"]
