"""A child process of treelab's (a writer, a refit beside the games) ignores Ctrl-C, and a Ctrl-C that comes while
it starts is the parent's: held or kept pending, then handled by the parent's own handler, never lost."""

from __future__ import annotations

import multiprocessing.process
import os
import signal
import threading
import time
from typing import Any

import pytest

from treelab.store import writer


def echo(conn: Any) -> None:
    """A child: says it is up, then sends back what it is sent."""
    conn.send("up")
    conn.send(conn.recv())


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signals")
@pytest.mark.parametrize("method, other_thread", [("fork", False), ("spawn", False), ("spawn", True)])
def test_a_ctrl_c_while_a_child_starts_reaches_the_parent_and_not_the_child(monkeypatch: pytest.MonkeyPatch,
                                                                            method: str, other_thread: bool) -> None:
    """With another thread (a spawned start's reason: a notebook's, a test runner's), the kernel gives the signal
    to that thread while the main one blocks it: it must still reach the parent's handler (an ignored one would
    drop it, as session 16's loop did with tqdm's monitor thread)."""
    monkeypatch.setattr(writer, "start_method", lambda: method)
    done = threading.Event()
    if other_thread:
        threading.Thread(target=done.wait, name="test-other", daemon=True).start()
    start = multiprocessing.process.BaseProcess.start

    def interrupted_start(self: Any) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C just as the child is being started
        start(self)

    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", interrupted_start)
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        proc, conn = writer.spawn(echo, (), "treelab-test-child")
        monkeypatch.undo()
        deadline = time.monotonic() + 5
        while not caught and time.monotonic() < deadline:
            time.sleep(0.01)
        assert caught == [signal.SIGINT]  # the parent's handler had it, once
        assert signal.getsignal(signal.SIGINT) is not signal.SIG_IGN
        assert conn.poll(30) and conn.recv() == "up"
        os.kill(proc.pid, signal.SIGINT)  # the child ignores Ctrl-C
        conn.send("still here")
        assert conn.poll(30) and conn.recv() == "still here"
        proc.join(30)
        assert proc.exitcode == 0
    finally:
        done.set()
        signal.signal(signal.SIGINT, previous)


def test_treelab_bars_start_no_thread_so_children_fork() -> None:
    """tqdm's monitor thread would make every later child a spawned one (the loop's refit bar made it, session 16)."""
    from treelab.play.console import bar

    before = set(threading.enumerate())  # another test's thread may end meanwhile: only new ones count
    shown = bar(3, "refit v1", "epoch")
    shown.update(3)
    started = set(threading.enumerate()) - before
    shown.close()
    assert not started
