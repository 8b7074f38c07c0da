"""What stages of several families build on: the walkable part of a map (`walkable`), placement
by walking distance (`bands`) and count parameters (`count`). A stage module imports these, and
never another stage's module, unless it runs that stage or shares its family's base class."""
