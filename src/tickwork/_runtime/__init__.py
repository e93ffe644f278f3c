"""The runtime: the parts one engine shares, one attempt of a run, its context."""
