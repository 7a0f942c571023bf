"""The rendered project works for real: its own tests, then the demo end to end."""

import csv
import re

import pytest

pytestmark = pytest.mark.slow


def test_rendered_project_passes_its_own_tests(baker, python):
    """Defaults, as a competitor gets them; includes a tiny CPU training pass and a submission."""
    baked = baker()
    result = baked.run(python, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", timeout=900)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    summary = result.stdout.strip().splitlines()[-1]
    assert re.search(r"\d+ passed", summary) and "skipped" not in summary, summary
    for test in (
        "test_train.py::test_train_then_predict_writes_a_submission_matching_the_sample",
        "test_train.py::test_doctor_reports_replicas_batch_records_and_spec",
        "test_replicas.py::test_eight_replicas_take_the_same_step_as_one[tensorflow]",
        "test_replicas.py::test_eight_replicas_take_the_same_step_as_one[jax]",
        "test_replicas.py::test_two_jax_processes_take_the_same_step_as_one",
        "test_replicas.py::test_two_processes_train_one_epoch_of_the_demo_together",
        "test_resume.py::test_a_killed_run_resumes_from_its_last_finished_epoch[jax]",
        "test_kernel.py::test_the_notebook_runs_alone_offline_and_writes_a_submission_matching_the_sample",
        "test_kernel.py::test_the_script_runs_alone_offline_the_same_way",
        "test_kaggle.py::test_push_sends_our_notebook_to_a_tpu_v5e8_with_internet_off",
    ):
        assert f"PASSED tests/{test}" in result.stdout, test


def test_demo_writes_a_submission_matching_the_sample_and_scores_well(baker, python):
    baked = baker()
    # No "Leaving directory" lines when this runs under `make test`: the last lines are the score.
    result = baked.run("make", "--no-print-directory", "demo", f"PYTHON={python}")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    lines = result.stdout.strip().splitlines()
    assert f"submission: {baked.path / 'output/demo/submission.csv'}" in lines[-4:]
    accuracy = float(lines[-1].removeprefix("accuracy: "))
    assert accuracy >= 0.90, result.stdout[-3000:]

    def ids(name):
        with open(baked.path / name, newline="") as file:
            return [row["id"] for row in csv.DictReader(file)]

    assert ids("output/demo/submission.csv") == ids("data/demo/sample_submission.csv")
