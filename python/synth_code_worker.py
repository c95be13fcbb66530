"""Code-answer worker of `trex synth` (started by src/ordata/code_check.cpp, one per synth thread; see docs/synth.md).

The synth pipeline runs every gurobipy-style program it exports through trex's gurobipy-compatible layer.
Starting /usr/bin/python3 and importing the layer per program would cost more than everything else a sample
needs, so this process is started once per worker thread and runs many programs, each like `python3 answer.py`
in a folder of its own:

  - a fresh folder under this worker's temporary folder holding the sample's data files (data.json, CSV
    tables), which becomes the working directory;
  - fresh globals (module __main__), stdout and stderr captured;
  - Model.optimize() sends the LP text to the synth process over the channel it inherited (the layer's
    $TREX_SOLVE_FD path, the same as in `trex eval`'s fork server), which reads it with trex's LP reader and
    solves it with CBC: no process is started per program or per solve.

The programs are trex's own generated code (trusted): no sandbox, but the synth process kills this worker when
a program overruns its time limit and starts a new one.

Channel (argv[1], a stream socket; every message is "<length>\\n<JSON>"):
  synth -> worker   {"code": SOURCE, "files": {NAME: TEXT}}
  worker -> synth   {"lp": TEXT, "time_limit": S}           (a solve; the reply is `trex solve --json --values`)
  worker -> synth   {"done": true, "ok": BOOL, "stdout": TEXT, "stderr": TEXT, "error": TEXT}
The worker first sends {"ready": true, "workdir": FOLDER} once its imports are done, and ends (removing its folder) at EOF.
"""
import builtins
import io
import json
import os
import shutil
import sys
import tempfile
import traceback

# What the generated programs import, loaded once.
PRELOAD = ["gurobipy", "trex_gurobipy.solve", "json", "csv", "math"]


def _read_exact(fd, size):
    data = bytearray()
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            return None
        data += chunk
    return bytes(data)


def receive(fd):
    header = b""
    while not header.endswith(b"\n"):
        chunk = os.read(fd, 1)
        if not chunk:
            return None
        header += chunk
    payload = _read_exact(fd, int(header))
    return None if payload is None else json.loads(payload)


def send(fd, obj):
    payload = json.dumps(obj).encode()
    data = b"%d\n" % len(payload) + payload
    while data:
        data = data[os.write(fd, data):]


def run_program(req, work):
    """Runs one program in `work` (created here, removed after); returns the "done" message."""
    os.mkdir(work)
    for name, text in req.get("files", {}).items():
        if not name or "/" in name or name.startswith("."):
            raise ValueError(f"bad data file name {name!r}")
        with open(os.path.join(work, name), "w", encoding="utf-8") as f:
            f.write(text)
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr, os.getcwd()
    main = {"__name__": "__main__", "__builtins__": builtins, "__file__": os.path.join(work, "answer.py")}
    ok, error = True, ""
    sys.stdout, sys.stderr = out, err
    try:
        os.chdir(work)
        exec(compile(req["code"], "answer.py", "exec"), main)
    except SystemExit as e:
        if e.code not in (None, 0):
            ok, error = False, f"SystemExit: {e.code}"
    except BaseException:  # noqa: B902 - whatever the program raises is its failure
        ok, error = False, traceback.format_exc()
    finally:
        sys.stdout, sys.stderr = saved[0], saved[1]
        os.chdir(saved[2])
        main.clear()
        shutil.rmtree(work, ignore_errors=True)
    return {"done": True, "ok": ok, "stdout": out.getvalue()[-20000:], "stderr": err.getvalue()[-4000:],
            "error": error[-4000:]}


def _scratch_parent():
    """$TMPDIR when set, else /dev/shm when writable (tmpfs: creating and removing a folder per program costs
    far less there than on a disk file system), else the platform default."""
    if os.environ.get("TMPDIR"):
        return None
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK | os.X_OK):
        return "/dev/shm"
    return None


def main():
    fd = int(sys.argv[1])
    for path in reversed(sys.argv[2:]):
        sys.path.insert(0, path)
    os.environ["TREX_SOLVE_FD"] = str(fd)  # the layer's solve channel is this worker's channel
    for name in PRELOAD:
        __import__(name)
    base = tempfile.mkdtemp(prefix="trex-synth-code-", dir=_scratch_parent())
    try:
        os.chdir(base)
        send(fd, {"ready": True, "workdir": base})
        n = 0
        while True:
            req = receive(fd)
            if req is None:
                break
            send(fd, run_program(req, os.path.join(base, str(n))))
            n += 1
    finally:
        os.chdir("/")
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
