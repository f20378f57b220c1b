"""The demo world's generator, as a package: the writer per agent format (`claude`, `codex`), the
deterministic ids and times (`ids`), diffs (`diffs`). `scripts/gen_demo.py` is the entry point."""
