"""Snakemake commands the tests plan with (dry runs, lint), each in a process forked from
one that has imported Snakemake already.

A test session runs some forty such commands. ``python -m snakemake`` spends about
1.9 CPU-s of a dry run's 3.6 starting the interpreter and importing Snakemake and pandas,
the same every time: here a small fork server (a ``python`` started once, on first use)
imports them, and each command runs in a fork of it as ``python -m snakemake`` runs it
(``snakemake.cli.main`` with the same arguments, working directory, environment and
``sys.path``), its output to files. A fork shares nothing with the others or with the
test process, so each command starts from the state of a fresh interpreter, but for the
modules already imported. Real runs are not run here: their ``snakemake`` processes are
the users', run as such (and their jobs are separate processes anyway).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import Future
from pathlib import Path

#: imported once by the server (import-time work only: no thread, no open file)
PRELOAD = ["snakemake.cli", "snakemake.api", "pandas", "numpy", "yaml", "jsonschema"]

# The server: one request per line on stdin (id, working directory, output files,
# arguments, tab-separated), a fork for each; it answers "<id> started <pid>" and, once the
# fork has ended, "<id> exit <code>". Single-threaded (a fork of a threaded process may
# inherit a held lock): it polls stdin and reaps its forks in one loop. A fork's state is a
# fresh `python -m snakemake`'s but for the Workflow class's run directory, read when the
# server imported it (in its own folder): the fork sets it to its working directory.
_SERVER = r"""
import os, select, sys, traceback
for name in sys.argv[1:]:
    __import__(name)
import snakemake.cli
import snakemake.workflow

MAIN = os.path.join(os.path.dirname(snakemake.cli.__file__), "__main__.py")

def child(cwd, out, err, args):
    os.setsid()
    os.chdir(cwd)
    sys.path[0] = cwd
    # what the Workflow class reads at import, in the server's folder: a fresh process's
    snakemake.workflow.Workflow._rundir = cwd
    for fd, name in ((1, out), (2, err)):
        target = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(target, fd)
        os.close(target)
    os.close(0)
    sys.stdin = None
    sys.stdout = open(1, "w", closefd=False)
    sys.stderr = open(2, "w", closefd=False)
    sys.argv = [MAIN, *args]
    code = 1
    try:
        snakemake.cli.main(args)
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)

running = {}
buffer = b""
stdin_open = True
while stdin_open or running:
    ready = select.select([0], [], [], 0.05)[0] if stdin_open else []
    if ready:
        chunk = os.read(0, 65536)
        stdin_open = bool(chunk)
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            ident, cwd, out, err, *args = line.decode().split("\t")
            pid = os.fork()
            if pid == 0:
                child(cwd, out, err, args)
            running[pid] = ident
            os.write(1, f"{ident} started {pid}\n".encode())
    while running:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            break
        ident = running.pop(pid, None)
        if ident is not None:
            os.write(1, f"{ident} exit {os.waitstatus_to_exitcode(status)}\n".encode())
    if not ready and not stdin_open:
        select.select([], [], [], 0.05)
"""

_LOCK = threading.Lock()
_STATE: dict = {}


class _Server:
    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, "-c", _SERVER, *PRELOAD],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd="/",
                                     text=True, bufsize=1)
        self.started: dict[str, Future] = {}
        self.ended: dict[str, Future] = {}
        self.count = 0
        self.lock = threading.Lock()
        threading.Thread(target=self._read, name="snakerun-reader", daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            ident, what, value = line.split()
            with self.lock:
                future = (self.started if what == "started" else self.ended).pop(ident)
            future.set_result(int(value))
        with self.lock:  # the server is gone: nobody answers the requests still open
            for future in [*self.started.values(), *self.ended.values()]:
                future.set_exception(RuntimeError("the snakerun server stopped"))

    def submit(self, cwd: str, out: str, err: str, args: list[str]) -> tuple[Future, Future]:
        fields = [cwd, out, err, *args]
        if any(("\t" in f or "\n" in f) for f in fields):
            raise ValueError(f"a tab or line break in {fields!r}")
        with self.lock:
            self.count += 1
            ident = str(self.count)
            started, ended = self.started[ident], self.ended[ident] = Future(), Future()
            self.proc.stdin.write("\t".join([ident, *fields]) + "\n")
            self.proc.stdin.flush()
        return started, ended


def start() -> _Server:
    """The server, started on first use. conftest starts it from the test process's main
    thread when workflow tests are selected: started from a background run's worker
    thread, it and every fork would inherit that thread's lower priority
    (tests/helpers/background.py), the test process's own dry runs included."""
    with _LOCK:
        if "server" not in _STATE:
            _STATE["server"] = _Server()
        return _STATE["server"]


def run(args: list[str], *, cwd: Path | str, timeout: float = 900
        ) -> subprocess.CompletedProcess:
    """``python -m snakemake *args`` in ``cwd`` with this process's environment (output
    captured, as text): the ``CompletedProcess`` ``subprocess.run`` gives, or
    ``TimeoutExpired`` past ``timeout`` (the fork then killed)."""
    server = start()
    with tempfile.TemporaryDirectory(prefix="dprepro-snakerun-") as folder:
        out, err = os.path.join(folder, "stdout"), os.path.join(folder, "stderr")
        started, ended = server.submit(str(Path(cwd).resolve()), out, err, list(args))
        pid = started.result(timeout=60)
        try:
            code = ended.result(timeout=timeout)
        except TimeoutError:
            os.killpg(pid, signal.SIGKILL)
            ended.result(timeout=60)
            raise subprocess.TimeoutExpired(["snakemake", *args], timeout) from None
        return subprocess.CompletedProcess(["snakemake", *args], code,
                                           Path(out).read_text(errors="replace"),
                                           Path(err).read_text(errors="replace"))


def stop() -> None:
    """Stop the server (end of session) and wait for it, so that its forks' CPU time
    counts in the test process's children, as that of subprocesses does."""
    server = _STATE.pop("server", None)
    if server is not None:
        server.proc.stdin.close()
        server.proc.wait(timeout=300)
