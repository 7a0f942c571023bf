"""Run notebooks' cells in one Jupyter kernel, as a competitor works: Run All, then an edited
cell and the cells below it, then Run All of an edited notebook, with no restart.

Usage (test_kernel.py runs it): python tests/in_one_kernel.py NOTEBOOK FIRST LAST [NOTEBOOK
FIRST LAST ...], in the notebooks' folder, inside a network namespace that has only loopback.
Jupyter's own runner (nbclient) starts one kernel and runs, pass after pass, the cells FIRST to
LAST (their indexes, both run) of each NOTEBOOK, as that file holds them (the same notebook,
edited), saving each notebook with its outputs in place. The exit code is 1 if a cell raised.
"""

import sys

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

args = sys.argv[1:]
passes = [
    (path, int(first), int(last)) for path, first, last in zip(*[iter(args)] * 3, strict=True)
]
notebooks = {path: nbformat.read(path, as_version=4) for path, _, _ in passes}
client = NotebookClient(notebooks[passes[0][0]], timeout=600, kernel_name="python3")
failed = False
with client.setup_kernel():
    for path, first, last in passes:
        client.nb = notebooks[path]  # where the runner keeps each cell's outputs
        try:
            for index in range(first, last + 1):
                client.execute_cell(client.nb.cells[index], index)
        except CellExecutionError as error:
            print(error, file=sys.stderr)
            failed = True
            break
for path, notebook in notebooks.items():
    nbformat.write(notebook, path)
sys.exit(1 if failed else 0)
