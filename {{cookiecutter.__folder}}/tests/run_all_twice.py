"""Run All, edit, Run All again, in one Jupyter kernel: what a competitor does after editing a
cell, without restarting the kernel.

Usage (test_kernel.py runs it): python tests/run_all_twice.py FIRST.ipynb SECOND.ipynb, in the
notebooks' folder, inside a network namespace that has only loopback. Jupyter's own runner
(nbclient) starts one kernel, runs every cell of FIRST, then every cell of SECOND (the same
notebook, edited) in that kernel, and saves each notebook with its outputs in place. The exit
code is 1 if a cell raised.
"""

import sys

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

paths = sys.argv[1:3]
notebooks = [nbformat.read(path, as_version=4) for path in paths]
client = NotebookClient(notebooks[0], timeout=600, kernel_name="python3")
failed = False
with client.setup_kernel():
    for notebook in notebooks:
        client.nb = notebook  # where the runner keeps each cell's outputs
        try:
            for index, cell in enumerate(notebook.cells):
                client.execute_cell(cell, index)
        except CellExecutionError as error:
            print(error, file=sys.stderr)
            failed = True
            break
for notebook, path in zip(notebooks, paths, strict=True):
    nbformat.write(notebook, path)
sys.exit(1 if failed else 0)
