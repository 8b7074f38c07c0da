"""Shared grid kernels (directions, union-find, shuffles, breadth-first searches), used by many
stages: kept out of `pipeline/stages/`, which holds stages only."""
