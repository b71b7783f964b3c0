"""Hostile implementations under test: each MODE misbehaves in one way on the wire.

    python iut.py MODE [ARG]

Every mode reads the first `start` message first, so the misbehaviour happens inside a case.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

OP = {"type": "op", "op": "call_round", "args": {"mode": "exploration", "recovery": False}}


def say(msg: object) -> None:
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def main(mode: str, arg: str | None) -> int:
    if mode == "exit-at-once":  # before reading anything
        return 3
    if mode == "crash-on-raise":  # the reference, except that a failed host call kills it
        return _crash_on_raise()
    if mode == "once":  # misbehave (crash) in the first process only, then be the real scheduler
        if not os.path.exists(arg or ""):
            open(arg or "", "w").close()
            sys.stdin.readline()
            raise RuntimeError("first process crashes")
        node = os.path.join(os.path.dirname(__file__), "..", "node", "deeptutor-scheduler.js")
        os.execvp("node", ["node", node])
    sys.stdin.readline()  # start
    if mode == "hang":
        time.sleep(3600)
    elif mode == "hang-mid-case":
        say(OP)
        sys.stdin.readline()
        time.sleep(3600)
    elif mode == "crash":
        say(OP)
        sys.stdin.readline()
        sys.stderr.write("about to fail\n")
        raise ValueError("the scheduler crashed on purpose")
    elif mode == "exit-early":
        return 0
    elif mode == "garbage":
        sys.stdout.write("this is not json\n")
        sys.stdout.flush()
    elif mode == "wrong-type":
        say({"type": "result", "facts": {}})
    elif mode == "unknown-op":
        say({"type": "op", "op": "launch_missiles", "args": {}})
    elif mode == "missing-field":
        say({"type": "end", "terminal": "finish"})
    elif mode == "bad-arg":
        say({"type": "op", "op": "call_round", "args": {"mode": "exploration", "recovery": 1}})
    elif mode == "flood-line":  # ARG megabytes on one line (default 10)
        block = b"x" * (1 << 20)
        progress = os.environ.get("HOSTILE_PROGRESS")  # a file: the megabytes written so far
        for written in range(int(arg or 10)):
            sys.stdout.buffer.write(block)
            sys.stdout.buffer.flush()
            if progress:
                with open(progress, "w") as f:
                    f.write(str(written + 1))
        sys.stdout.buffer.write(b"\n")
        sys.stdout.flush()
    elif mode == "deep-json":
        sys.stdout.write("[" * 200_000 + "\n")
        sys.stdout.flush()
    elif mode == "huge-int":
        sys.stdout.write(
            '{"type": "end", "terminal": "finish", "counters": {"rounds": ' + "9" * 5000 + "}}\n"
        )
        sys.stdout.flush()
    elif mode == "flood-messages":
        while True:  # asks again and again without reading the answers
            say({"type": "op", "op": "finish", "args": {}})
    elif mode == "grandchild":  # leaves a sleeping child behind, tells its pid, then hangs
        child = subprocess.Popen(["sleep", "3600"])
        sys.stderr.write(f"grandchild {child.pid}\n")
        sys.stderr.flush()
        time.sleep(3600)
    elif mode == "setsid-grandchild":  # a child in a session of its own: out of the process group
        child = subprocess.Popen(["sleep", "3600"], start_new_session=True)
        sys.stderr.write(f"grandchild {child.pid}\n")
        sys.stderr.flush()
        time.sleep(3600)
    elif mode == "daemon":  # double fork: the grandchild leaves the group and loses its parent
        read, write = os.pipe()
        if os.fork() == 0:
            os.setsid()
            pid = os.fork()
            if pid == 0:
                os.execvp("sleep", ["sleep", "3600"])
            os.write(write, str(pid).encode())
            os._exit(0)
        os.close(write)
        sys.stderr.write(f"grandchild {os.read(read, 32).decode()}\n")
        sys.stderr.flush()
        os.wait()
        time.sleep(3600)
    else:
        sys.stderr.write(f"unknown mode {mode}\n")
        return 2
    time.sleep(3600)  # after the misbehaviour, stay alive: turnbound must still not wait forever
    return 0


class _Dies:
    """stdin, except that a host failure (not turnbound's cancel) ends the process with code 1."""

    def readline(self) -> str:
        line = sys.stdin.readline()
        if '"type":"raise"' in line.replace(" ", "") and "turnbound-cancel" not in line:
            sys.exit(1)
        return line

    def __iter__(self) -> _Dies:
        return self

    def __next__(self) -> str:
        line = self.readline()
        if not line:
            raise StopIteration
        return line


def _crash_on_raise() -> int:
    from turnbound.properties.conformance.serve import reference_run, serve
    from turnbound.reference.profiles import load_profile

    return serve(reference_run(load_profile("deeptutor-scheduler")), _Dies())  # type: ignore[arg-type]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None))
