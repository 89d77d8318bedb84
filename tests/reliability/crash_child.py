"""The child of the crash test: commits until it is killed.

Run as a script, this module is a *zygote*: it imports viewstore once, then forks one committing
child per request, so a trial starts in milliseconds instead of paying the imports every time
(and forks from a small single-threaded process, not from the test runner). Protocol, one line each
way on stdin/stdout::

    start <path> <durability> <report> <trial> <seed>   ->  <pid>
    wait <pid>                                          ->  <raw wait status>
"""

from __future__ import annotations

import os
import random
import sys

from viewstore import ViewChange, ViewStore

VIEWS = [f"crash.v{i}" for i in range(6)]
COLUMNS = [("id", "bigint"), ("name", "string")]


def child_loop(path: str, durability: str, report: str, trial: int, seed: int) -> None:
    """Commit forever (until killed), reporting each call before and after."""
    fd = os.open(report, os.O_WRONLY | os.O_CREAT | os.O_APPEND)

    def say(line: str) -> None:
        os.write(fd, (line + "\n").encode())

    store = ViewStore(path, actor=f"child{trial}", durability=durability)
    rng = random.Random(seed)
    say("ready")
    created: list[str] = []
    seq = 0
    while True:
        seq += 1
        token = f"tok-{trial}-{seq}"
        roll = rng.random()
        name = rng.choice(VIEWS)
        if roll < 0.38:
            say(f"intent {token} 1")
            view = store.alter_view(name, ViewChange.update_comment(token))
        elif roll < 0.50:  # a transaction: two views changed in one commit, or neither
            other = rng.choice([v for v in VIEWS if v != name])
            say(f"intent {token} 2")
            with store.transaction():
                store.alter_view(other, ViewChange.update_comment(token))
                view = store.alter_view(name, ViewChange.update_comment(token))
        elif roll < 0.70:  # a batch: three events in one commit
            say(f"intent {token} 3")
            view = store.alter_view(name, *(ViewChange.set_property(f"key.{k}", token) for k in "abc"))
        elif roll < 0.85:  # a new version
            say(f"intent {token} 1")
            view = store.replace_view(name, columns=COLUMNS, representations=[("spark", f"SELECT '{token}' AS t")],
                                      default_namespace="crash")
        elif roll < 0.95 or not created:
            name = f"crash.t{trial}_{seq}"
            say(f"intent {token} 1")
            view = store.create_view(name, columns=COLUMNS, representations=[("spark", "SELECT 1 AS id")],
                                     default_namespace="crash", comment=token)
            created.append(name)
        else:
            name = created.pop()
            view = store.load_view(name)
            store.drop_view(name)
            say(f"dropped {view.uuid} {view.stream_version + 1}")
            continue
        say(f"done {token} {view.uuid} {view.stream_version}")


def zygote() -> None:
    for line in sys.stdin:
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "start":
            path, durability, report, trial, seed = parts[1:]
            pid = os.fork()
            if pid == 0:
                code = 0
                try:
                    child_loop(path, durability, report, int(trial), int(seed))
                except BaseException as e:  # reported to the test through the exit code and the report file
                    with open(report, "a") as f:
                        f.write(f"error {type(e).__name__}: {e}\n")
                    code = 1
                finally:
                    os._exit(code)
            print(pid, flush=True)
        elif parts[0] == "wait":
            _, status = os.waitpid(int(parts[1]), 0)
            print(status, flush=True)


if __name__ == "__main__":
    zygote()
