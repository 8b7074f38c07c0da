"""The error of a program that cannot be read, from either of its forms (TOML or XML)."""

from __future__ import annotations


class ProgramError(ValueError):
    """A problem at a place in a program: `where` is a path such as `markov[1].one` (TOML) or a
    line such as `line 4` (XML)."""

    def __init__(self, where: str, message: str):
        self.where = where
        self.message = message
        super().__init__(f"{where}: {message}" if where else message)
