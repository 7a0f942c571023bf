"""A warm interpreter for the suite's fresh processes: TensorFlow and Keras imported once, each
command then run in a fork of it, so that a test's fresh process starts in a fraction of a
second instead of importing TensorFlow again (about 9 s of CPU each, a sixth of the suite).

The fork is a fresh process in all that the tests check: its own devices (neither TensorFlow
nor JAX has started its runtime before the fork, which `serve` checks), its own arguments,
environment, folder and output, signals as a fresh interpreter answers them, and its exit
code. What it cannot have is an environment that changes what an import decided: conftest's
`start` uses a fresh interpreter instead wherever a variable read at import differs (see
IMPORT_TIME), and for tests of the first screen, which are of the imports themselves.

Usage: python tests/warm.py SOCKET (KERAS_BACKEND chooses the backend). It serves until the
process that started it ends. A client sends one line of JSON (args, env, cwd) with the
command's stdin, stdout and stderr; it reads back the command's pid, then its wait status.
"""

import json
import os
import re
import runpy
import select
import signal
import socket
import sys

# Variables read as TensorFlow, Keras or JAX are imported (or Python starts): a command whose
# environment differs from the warm interpreter's in one of them needs a fresh interpreter.
IMPORT_TIME = re.compile(r"(TF|KERAS|JAX|XLA_PYTHON|PYTHON|LD|CUDA|TPU|OMP|KMP|MKL)_?\w*")


def import_time(env: dict) -> dict:
    return {name: value for name, value in env.items() if IMPORT_TIME.fullmatch(name)}


def serve(path: str) -> None:
    import keras
    import tensorflow  # noqa: F401 - what every command imports, imported once here
    from tensorflow.python.eager import context

    # Devices are set up by the first operation (TensorFlow) or backend call (JAX), from flags
    # each command gives: that must happen in the command's process, never here.
    assert not context.context()._initialized, "TensorFlow's runtime started before a fork"
    if keras.backend.backend() == "jax":
        from jax._src import xla_bridge

        assert not xla_bridge._backends, "JAX's backend started before a fork"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(f"{path}.tmp")
    listener.listen(16)
    os.rename(f"{path}.tmp", path)  # ready: clients wait for the path
    parent = os.getppid()
    while os.getppid() == parent:  # until the test session that started it ends
        while True:  # reap the monitors of finished commands
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break
        if not select.select([listener], [], [], 1)[0]:
            continue
        connection, _ = listener.accept()
        sys.stdout.flush()
        sys.stderr.flush()
        if os.fork() == 0:
            listener.close()
            monitor(connection)  # ends the process
        connection.close()
    os.unlink(path)


def monitor(connection: socket.socket) -> None:
    """Start the command, send its pid, wait for it and send how it ended."""
    _, fds, _, _ = socket.recv_fds(connection, 1, 3)
    with connection.makefile("rb") as lines:
        request = json.loads(lines.readline())
    command = os.fork()
    if command == 0:
        connection.close()
        run(request, fds)  # ends the process
    for fd in fds:
        os.close(fd)
    print(f"process {command}:", *request["args"], flush=True)  # what it served, in its log
    connection.sendall(f"{command}\n".encode())
    _, status = os.waitpid(command, 0)
    connection.sendall(f"{status}\n".encode())
    os._exit(0)


def run(request: dict, fds: list[int]) -> None:
    """`python ARGS...` as a fresh interpreter runs it, in this forked one."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as Python sets it at start
    args = request["args"]
    # What a fresh interpreter does at its end, this one does too: an exception the command
    # leaves uncaught is printed and ends it with 1 (Ctrl-C's by SIGINT), through the
    # interpreter's own exit (atexit handlers run, output is flushed).
    if args[0] == "-m":
        sys.argv, sys.path[0] = [args[1], *args[2:]], os.getcwd()
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    elif args[0] == "-c":
        sys.argv, sys.path[0] = ["-c", *args[2:]], ""
        exec(compile(args[1], "<string>", "exec"), {"__name__": "__main__"})  # noqa: S102 - as -c
    else:
        sys.argv, sys.path[0] = list(args), os.path.dirname(os.path.abspath(args[0]))
        runpy.run_path(args[0], run_name="__main__")
    sys.exit(0)


if __name__ == "__main__":
    serve(sys.argv[1])
