"""`pcg serve`: a live web gallery of the packs (see docs/serve.md)."""
