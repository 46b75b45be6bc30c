"""Every notebook in notebooks/ runs top to bottom (a temp copy, python3 kernel, Agg backend)."""

import pathlib
import shutil

import nbclient
import nbformat
import pytest

NOTEBOOKS = sorted((pathlib.Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path, tmp_path, monkeypatch):
    copy = tmp_path / path.name
    shutil.copy(path, copy)
    monkeypatch.setenv("MPLBACKEND", "Agg")  # the kernel inherits it: no display needed
    nb = nbformat.read(copy, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    errors = [o for cell in nb.cells for o in cell.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors, errors
