"""Building packs: the workspace every command builds through (`workspace`), planning what is
stale (`plan`), the build cache (`cache`), choosing attempts (`distinct`), running maps on an
executor (`builder`, `executor`, `dask_executor`, `worker`), writing files under the pack's
journal (`journal`, `stamps`) and manifest (`manifest`), the pack's own files (`pack_files`,
`contact_sheet`, `levels_index`) and measures (`measures`), and `pcg verify` (`verify`)."""
