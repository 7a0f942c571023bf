"""The suite's fresh processes forked from a warm interpreter (tests/warm.py) end as fresh
interpreters do: what the tests that start them read (exit codes, output, signals) is the
same either way."""

import signal
import time

import pytest
from conftest import Warm, start

pytestmark = pytest.mark.slow  # starts the warm interpreter, importing TensorFlow

ENDINGS = {
    "finished": "import sys; print('out'); print('err', file=sys.stderr); print(sys.argv[1:])",
    "exit code": "import sys; print('bye'); sys.exit(3)",
    "exit text": "import sys; sys.exit('a reason')",
    "uncaught": "print('before'); raise ValueError('wrong')",
    "ctrl-c": "raise KeyboardInterrupt",
    "killed": "import os, signal; print('going', flush=True); os.kill(os.getpid(), signal.SIGKILL)",
    "atexit": "import atexit; atexit.register(lambda: print('at exit'))",
}


@pytest.mark.parametrize("ending", list(ENDINGS))
def test_a_warm_command_ends_as_a_fresh_one_does(ending):
    ended = {}
    for warm in (False, True):
        process = start("-c", ENDINGS[ending], "a", "b", warm=warm)
        assert isinstance(process, Warm) == warm  # the warm interpreter served it
        out, err = process.communicate(timeout=120)
        ended[warm] = (process.returncode, out, err.strip().splitlines()[-1:])
    assert ended[True] == ended[False]


def test_a_warm_command_answers_signals_and_its_own_folder_and_environment(tmp_path):
    script = tmp_path / "wait.py"
    script.write_text(
        "import os, sys, time\n"
        "print(os.getcwd(), os.environ['KERAS_BACKEND'], sys.argv[1:], flush=True)\n"
        "open(os.path.join(os.path.dirname(sys.argv[0]), 'started'), 'w').close()\n"
        "time.sleep(60)\n"
    )
    process = start(str(script), "x")
    assert isinstance(process, Warm)
    deadline = time.monotonic() + 60
    while not script.with_name("started").exists():  # waiting, its line printed
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == -signal.SIGINT  # as Python ends on an uncaught Ctrl-C
    assert "KeyboardInterrupt" in err
    assert out.split()[1:] == ["tensorflow", "['x']"]
