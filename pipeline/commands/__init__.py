"""The `pcg` command line: `app` assembles it, and each command has a module named for it
(`build`, `watch`, `stats`, ...) that reads its options, asks the layers below (`building`,
`recipe`, `serve`) to do the work and prints what they return. Shared pieces: `options` (the
options several commands take), `messages` (how errors, warnings and Ctrl+C reach the user) and
`seed_edits` (what `pin`, `reroll` and `unpin` share).

Heavy modules (numpy, numba, pydantic) are imported inside the commands, so that `pcg --help`
starts fast."""
