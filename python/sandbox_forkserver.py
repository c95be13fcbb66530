"""Fork server for sandboxed Python answers (used by src/oreval/forkserver.cpp; see docs/eval.md).

Starting /usr/bin/python3 and importing the gurobipy layer costs far more than running a typical answer. This
process is started once (trusted code, as root), imports what answers use (the layer and the standard modules
below, plus the modules named after the socket's fd on its command line, e.g. numpy pandas), then serves
requests on a Unix SEQPACKET socket (fd given as argv[1]). A request is one JSON message carrying four or five file descriptors:
stdout and stderr of the program, a status pipe, a "life" pipe and optionally a solve channel (a socket to
the evaluator, which solves LP text for the layer: the program gets it as fd 3 and TREX_SOLVE_FD=3). Per request it forks a monitor that
builds the same sandbox as src/oreval/sandbox.cpp does for an exec'd program:

  monitor (root PID namespace): joins the request's cgroups, unshares PID/network/mount namespaces, makes
      every mount read-only except the working directory, forks the namespace's init, then waits; when the
      caller closes the life pipe (wall-clock limit, or the caller died) it kills init, which takes every
      process of the namespace with it.
  init (PID 1): mounts a fresh /proc and a private /dev/shm, sets the rlimits (CPU, address space, file size,
      processes, core, open files), chdirs into the working directory, forks the program, drops every
      capability, reaps, and writes the program's wait status (native int) to the status pipe.
  program: new session, no capabilities, no new privileges, the request's environment, stdin /dev/null,
      then runs the script like `python3 SCRIPT` (module __main__, sys.argv, sys.path[0], exit status,
      uncaught exceptions printed as the interpreter does).

Nothing of an answer ever runs in this process, so every answer starts from the same pre-imported state.
"""
import ctypes
import ctypes.util
import json
import os
import resource
import select
import signal
import socket
import struct
import sys
import traceback

# What answers import, loaded once here. The layers first (gurobipy is what most answers use; coptpy is trex's
# coptpy layer on the same core, python/shim/coptpy).
PRELOAD = ["gurobipy", "trex_gurobipy.solve", "coptpy", "subprocess", "json", "math", "csv", "re", "itertools",
           "collections", "random", "statistics", "fractions", "decimal", "copy", "functools", "operator", "io",
           "tempfile", "traceback", "runpy", "threading"]
# Loaded when present (Debian's python3-pulp; trex_pulp points it at /usr/bin/cbc per run, not here: a solver
# object made here would keep this process's temporary folder). Absent: a PuLP answer's import reports it.
OPTIONAL_PRELOAD = ["pulp", "trex_pulp"]

CLONE_NEWNS = 0x00020000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
LINUX_CAPABILITY_VERSION_3 = 0x20080522
SYS_CAPSET = {"x86_64": 126, "aarch64": 91}.get(os.uname().machine)

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_libc.unshare.argtypes = [ctypes.c_int]
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]


class SetupError(Exception):
    pass


def _check(ret, what):
    if ret != 0:
        err = ctypes.get_errno()
        raise SetupError(f"{what}: {os.strerror(err)}")


def _mount(src, target, fstype, flags, data=None):
    enc = lambda s: None if s is None else s.encode()  # noqa: E731
    return _libc.mount(enc(src), enc(target), enc(fstype), flags, enc(data))


def _drop_privileges():
    if os.geteuid() == 0:
        for cap in range(64):
            _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
        _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
        if SYS_CAPSET is None:
            raise SetupError("drop capabilities: unknown capset syscall on this machine")
        header = (ctypes.c_uint32 * 2)(LINUX_CAPABILITY_VERSION_3, 0)
        data = (ctypes.c_uint32 * 6)()  # two __user_cap_data_struct, all zero
        _check(_libc.syscall(SYS_CAPSET, header, data), "drop capabilities")
    _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


def _set_limits(lim):
    cpu = max(1, int(lim["cpu_seconds"] + 0.999))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (lim["memory_bytes"], lim["memory_bytes"]))
    resource.setrlimit(resource.RLIMIT_FSIZE, (lim["max_file_bytes"], lim["max_file_bytes"]))
    resource.setrlimit(resource.RLIMIT_NPROC, (lim["max_processes"], lim["max_processes"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))


def _write_all(fd, data):
    while data:
        data = data[os.write(fd, data):]


def _run_program(req):
    """The answer itself: behaves like `python3 SCRIPT` started in the working directory."""
    os.setsid()
    _drop_privileges()
    solve_fd = req.get("_solve_fd")
    if solve_fd is not None:
        os.dup2(solve_fd, 3)  # inheritable, unlike the received descriptor
    # Nothing of the server's (its socket, pipes of other answers) reaches the answer.
    os.closerange(3 if solve_fd is None else 4, 1 << 16)
    os.environ.clear()
    for item in req["env"]:
        key, _, value = item.partition("=")
        os.environ[key] = value
    if solve_fd is not None:
        os.environ["TREX_SOLVE_FD"] = "3"
    import tempfile
    tempfile.tempdir = None  # recomputed from TMPDIR
    # Modules seeded from OS entropy at import were seeded once, in the server: reseed them as a fresh
    # interpreter would be, so that answers do not share one random sequence.
    if "random" in sys.modules:
        sys.modules["random"].seed()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    script = req["argv"][1]
    path = os.path.join(req["workdir"], script)
    sys.argv = list(req["argv"][1:])
    sys.path[0] = os.path.dirname(path)
    import types
    main = types.ModuleType("__main__")
    main.__file__ = path
    main.__builtins__ = __builtins__
    sys.modules["__main__"] = main
    status = 0
    try:
        with open(path, "rb") as f:
            source = f.read()
        exec(compile(source, path, "exec"), main.__dict__)
    except SystemExit as e:
        code = e.code
        if code is None:
            status = 0
        elif isinstance(code, int):
            status = code & 0xFF
        else:
            print(code, file=sys.stderr)
            status = 1
    except BaseException:  # noqa: B902 - the interpreter's own top level
        traceback.print_exc()
        status = 1
    # Interpreter shutdown order: wait for non-daemon threads, then atexit handlers.
    if "threading" in sys.modules:
        try:
            sys.modules["threading"]._shutdown()
        except BaseException:  # noqa: B902
            pass
    try:
        import atexit
        atexit._run_exitfuncs()
    except BaseException:  # noqa: B902
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: B902
            status = status or 120
    os._exit(status)


def _init(req, status_w):
    """PID 1 of the answer's namespace: limits, the program, its wait status."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getpid() != 1:
        raise SetupError("not the init of a new PID namespace")
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY)
    _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=16m")
    _set_limits(req["limits"])
    os.chdir(req["workdir"])
    prog = os.fork()
    if prog == 0:
        os.close(status_w)
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        _run_program(req)
    _drop_privileges()
    while True:
        try:
            pid, st = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(125)
        except InterruptedError:
            continue
        if pid == prog:
            _write_all(status_w, struct.pack("i", st))
            os._exit(0)


def _monitor(req, out_w, err_w, status_w, life_r, solve_fd=None):
    """Child of the server, in the root PID namespace: sets the sandbox up and ends it on request."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    devnull = os.open("/dev/null", os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)
    for fd in (devnull, out_w, err_w):
        os.close(fd)
    try:
        for d in req["cgroups"]:
            with open(os.path.join(d, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
        _check(_libc.unshare(CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWNS), "unshare namespaces")
        _check(_mount(None, "/", None, MS_REC | MS_PRIVATE), "make mounts private")
        workdir = req["workdir"]
        _check(_mount(workdir, workdir, None, MS_BIND | MS_REC), "bind workdir")
        for m in req["mounts"]:
            _mount(None, m, None, MS_REMOUNT | MS_BIND | MS_RDONLY)  # best effort, as sandbox.cpp
        _check(_mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY), "remount / read-only")
        req["_solve_fd"] = solve_fd
        init = os.fork()
        if init == 0:
            os.close(life_r)
            try:
                _init(req, status_w)
            except BaseException as e:  # noqa: B902
                _write_all(2, f"sandbox: {e}\n".encode())
            os._exit(125)
    except SetupError as e:
        _write_all(2, f"sandbox: {e}\n".encode())
        os._exit(125)
    if solve_fd is not None:
        os.close(solve_fd)
    # status_w stays open until this process exits: the caller's EOF on it means init and the monitor
    # are both gone (so the cgroups are empty and can be removed).
    for fd in (0, 1, 2):
        os.close(fd)
    pidfd = os.pidfd_open(init)
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    poller.register(life_r, select.POLLIN | select.POLLHUP)
    while True:
        ready = dict(poller.poll())
        if pidfd in ready:
            break
        if life_r in ready:  # the caller wants it ended (or is gone)
            os.kill(init, signal.SIGKILL)
            break
    os.waitpid(init, 0)
    os._exit(0)


def _reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def serve(sock):
    while True:
        _reap()
        try:
            r, _, _ = select.select([sock], [], [], 1.0)
        except InterruptedError:
            continue
        if not r:
            continue
        try:
            msg, fds, _, _ = socket.recv_fds(sock, 1 << 20, 5)
        except OSError:
            msg, fds = b"", []
        if not msg:  # the caller closed the socket: wait for the last monitors (their runs are being ended)
            while True:
                try:
                    os.waitpid(-1, 0)
                except ChildProcessError:
                    return
                except InterruptedError:
                    continue
        try:
            if len(fds) not in (4, 5):
                raise SetupError(f"expected 4 or 5 file descriptors, got {len(fds)}")
            req = json.loads(msg)
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                try:
                    sock.close()
                    _monitor(req, *fds)
                except BaseException as e:  # noqa: B902
                    try:
                        _write_all(2, f"sandbox: {e}\n".encode())
                    except OSError:
                        pass
                os._exit(125)
            reply = b"ok"
        except Exception as e:  # noqa: BLE001 - a bad request is answered, never fatal
            reply = f"error: {e}".encode()
        for fd in fds:
            os.close(fd)
        sock.send(reply)


def main():
    sock = socket.socket(fileno=int(sys.argv[1]))
    for name in PRELOAD:
        __import__(name)
    for name in OPTIONAL_PRELOAD + sys.argv[2:]:
        try:
            __import__(name)
        except Exception:  # noqa: BLE001 - absent or broken: the answer's own import reports it as before
            pass
    if len(os.listdir("/proc/self/task")) != 1:  # fork() below needs a single-threaded process
        sock.send(b"error: the server has threads after its imports")
        return
    sys.stdout.flush()
    sys.stderr.flush()
    sock.send(b"ready")
    serve(sock)


if __name__ == "__main__":
    main()
