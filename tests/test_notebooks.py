"""The researcher notebooks: each runs top to bottom in a fresh kernel, and each stored .ipynb
is exactly what its jupytext .py (the source of truth) regenerates, without outputs.

Regenerate the .ipynb files after editing a .py:  python -m tests.test_notebooks
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

jupytext = pytest.importorskip("jupytext", reason="the notebooks extra is not installed")
nbformat = pytest.importorskip("nbformat", reason="the notebooks extra is not installed")

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
SOURCES = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py"))
CELL_TIMEOUT_S = 180
"""A hang guard per cell, not a speed target: each notebook takes well under a minute."""


def regenerated(source: Path) -> str:
    """The .ipynb text for a jupytext percent .py: no outputs, cell ids by position, and no
    jupytext version in the metadata, so the same .py always gives the same bytes."""
    nb = jupytext.read(source)
    nb.metadata.get("jupytext", {}).pop("text_representation", None)
    for i, cell in enumerate(nb.cells):
        cell.id = f"cell-{i:02d}"
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    text: str = jupytext.writes(nb, fmt="ipynb")
    return text if text.endswith("\n") else text + "\n"


def test_there_are_five_notebooks() -> None:
    assert [p.stem[:2] for p in SOURCES] == ["01", "02", "03", "04", "05"]


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_ipynb_is_in_sync_with_its_py(source: Path) -> None:
    stored = source.with_suffix(".ipynb")
    assert stored.exists(), f"{stored.name} is missing: run python -m tests.test_notebooks"
    assert stored.read_text(encoding="utf-8") == regenerated(source), (
        f"{stored.name} drifted from {source.name} (or stores outputs): run python -m tests.test_notebooks"
    )


@pytest.mark.slow  # 20-60 s each: the proofs and sweeps are real; CI runs the slow marker as its own step
@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_notebook_runs_top_to_bottom(source: Path) -> None:
    """Executes the stored .ipynb in a fresh kernel, in the notebooks folder; any error fails."""
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
    client = nbclient.NotebookClient(
        nb,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors


def main() -> int:
    for source in SOURCES:
        target = source.with_suffix(".ipynb")
        text = regenerated(source)
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
            print(f"wrote {target.relative_to(NOTEBOOKS.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
