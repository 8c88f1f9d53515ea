"""Every ```python block of README.md runs as written, on its own, in a fresh interpreter (CPU, float32)."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def _blocks(text: str) -> list[tuple[str, str]]:
    """``(id, code)`` of every ```python block; the id is the nearest preceding heading (deduplicated)."""
    blocks, heading, seen, lines, i = [], "top", {}, text.splitlines(), 0
    while i < len(lines):
        m = re.match(r"#{1,6}\s+(.+)", lines[i])
        if m:
            heading = re.sub(r"\W+", "_", m.group(1)).strip("_").lower()
        if lines[i].strip() == "```python":
            end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
            seen[heading] = seen.get(heading, 0) + 1
            ident = heading if seen[heading] == 1 else f"{heading}-{seen[heading]}"
            blocks.append((ident, "\n".join(lines[i + 1 : end]) + "\n"))
            i = end
        i += 1
    return blocks


BLOCKS = _blocks(README.read_text(encoding="utf-8"))


def test_readme_has_python_blocks():
    assert len(BLOCKS) >= 20, [b[0] for b in BLOCKS]


@pytest.mark.parametrize("code", [b[1] for b in BLOCKS], ids=[b[0] for b in BLOCKS])
def test_readme_block_runs(code, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    env["JAX_PLATFORMS"] = "cpu"
    script = tmp_path / "block.py"
    script.write_text(code, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, f"README block failed (exit {proc.returncode}):\n{code}\n--- stderr ---\n{proc.stderr}"
    assert proc.stdout.strip(), f"README block printed nothing:\n{code}"
