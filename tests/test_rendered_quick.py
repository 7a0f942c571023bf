"""`make test-quick`'s share of the rendered project, for the edit loop: its tests of one unit
alone (no training, notebook or fresh process). `make test` leaves this out: it runs the
rendered project's whole suite, these among them (test_rendered_project.py)."""

import re

import pytest

pytestmark = pytest.mark.edit_loop


def test_rendered_project_passes_its_quick_tests(baker, python):
    baked = baker()
    result = baked.run(
        python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "quick and not slow"
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    summary = result.stdout.strip().splitlines()[-1]
    assert re.search(r"\d+ passed", summary), summary
    assert not re.search(r"failed|error|skipped", summary), summary
