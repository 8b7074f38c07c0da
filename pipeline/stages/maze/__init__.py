"""Maze generators. Mazes use block form: `w x h` cells become a `(2h+1) x (2w+1)` tile grid."""
