"""Puzzle analysis: solvers that rate generated boards."""
