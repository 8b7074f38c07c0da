"""The compiled node kinds of the rule interpreter, one module each, around the shared match
upkeep in `matching`; `pipeline.rewrite.machine` runs the turns and the branches between them."""
