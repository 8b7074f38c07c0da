"""Stages that lay a level out from its structure (a level graph)."""
