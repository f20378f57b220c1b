"""The demo world's generator (entry point: scripts/gen_demo.py; the content is data in
scripts/demo_world/). A writer per agent format (`claude`, `codex`, `gemini`, `pi`, `copilot`,
`cline`, `openhands`), `replay` (plays a session's data file through its writer), `world` (reads
scripts/demo_world/), `readme` (fixtures/demo/README.md), `checks`, and the deterministic ids,
times and diffs (`ids`, `diffs`)."""
