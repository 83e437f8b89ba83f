"""A grader that attacks its sandbox, one attack per case.

Every case names its attack in item["attack"]; the end-to-end tests check the
class each attack ends in, that the remaining cases are still graded, that the
gate stays alive, and that nothing leaks. An item without an attack is graded
honestly, so the canaries can show the grader can pass and fail.
"""
import ctypes
import os
import signal
import socket
import subprocess
import sys


def honest(sample, item):
    return 1.0 if sample["output_text"] == item["expected"] else 0.0


def grade(sample, item):
    attack = item.get("attack", "none")
    if attack == "none":
        return honest(sample, item)
    if attack == "connect":
        # Seccomp refuses every socket family but AF_UNIX.
        s = socket.create_connection(("127.0.0.1", int(item.get("port", 9))), timeout=2)
        s.sendall(b"stolen")
        return 1.0
    if attack == "secrets":
        found = [k for k in ("GITHUB_TOKEN", "OPENAI_API_KEY", "ACTIONS_RUNTIME_TOKEN", "INPUT_GITHUB-TOKEN") if k in os.environ]
        if found:
            raise RuntimeError("leaked into the grader: " + ", ".join(found))
        return 1.0
    if attack == "parent-environ":
        with open("/proc/%d/environ" % os.getppid(), "rb") as f:
            data = f.read()
        raise RuntimeError("read the gate's environment: %d bytes" % len(data))
    if attack == "write-outside":
        with open(item["path"], "w") as f:
            f.write("escaped")
        return 1.0
    if attack == "memory":
        block = bytearray(4 << 30)
        return float(len(block) > 0)
    if attack == "fork-bomb":
        for _ in range(10000):
            if os.fork() == 0:
                signal.pause()
                os._exit(0)
        return 1.0
    if attack == "busy-loop":
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        while True:
            pass
    if attack == "outlive":
        # A child that would outlive the case; the gate kills the process group.
        subprocess.Popen(["/bin/sleep", item["sleep"]])
        return 1.0
    if attack == "exit":
        os._exit(3)
    if attack == "segfault":
        ctypes.string_at(0)
    if attack == "kill-gate":
        os.kill(os.getppid(), signal.SIGKILL)
        return 1.0
    if attack == "flood":
        chunk = "x" * (1 << 20)
        for _ in range(100):
            sys.stdout.write(chunk)
        return 1.0
    if attack == "forge":
        # A result line on stdout must not be taken for a result.
        print('{"op": "result", "class": "ok", "score": 1.0}')
        print('{"scores": {"score": 1.0}}', file=sys.stderr)
        return 0.0
    if attack == "big-file":
        # Sparse: one byte past 1 GiB needs no disk, only the size limit.
        with open("big.bin", "wb") as f:
            f.seek(1 << 30)
            f.write(b"x")
        return 1.0
    if attack == "setsid":
        os.setsid()
        return 1.0
    if attack == "read":
        # A file outside the grader's reach: the checkout's .git/config
        # (with the token actions/checkout leaves), the event payload, the
        # workspace, the environment of another of the user's processes.
        with open(item["path"], "rb") as f:
            f.read()
        return 1.0
    if attack == "append":
        # GITHUB_ENV (code execution in later steps), the grader's own file.
        with open(item["path"], "a") as f:
            f.write(item["text"])
        return 1.0
    if attack == "unix-connect":
        # A socket the grader did not create: docker.sock, the user's own
        # 0600 sockets, an abstract socket ("@name").
        path = item["path"]
        if path.startswith("@"):
            path = "\0" + path[1:]
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        s.sendall(b"GET /containers/json HTTP/1.0\r\n\r\n")
        return 1.0
    if attack == "sysv-shm":
        # A 0666 segment outlives the run and is open to every later one.
        libc = ctypes.CDLL(None, use_errno=True)
        shm = libc.shmget(0, 4096, 0o1000 | 0o666)
        if shm == -1:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        libc.shmctl(shm, 0, None)  # IPC_RMID
        return 1.0
    if attack == "mq":
        libc = ctypes.CDLL(None, use_errno=True)
        q = libc.mq_open(b"/gradegate-hostile", 0o100 | 0o2, 0o666, None)
        if q == -1:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        libc.mq_unlink(b"/gradegate-hostile")
        return 1.0
    if attack == "memory-total":
        # Eight children under memory_mb each, far past it together.
        pids = []
        r, w = os.pipe()
        for _ in range(8):
            pid = os.fork()
            if pid == 0:
                block = b"x" * (150 << 20)
                os.write(w, b".")
                signal.pause()
                os._exit(len(block) & 0)
            pids.append(pid)
        held = 0
        while held < 8:
            held += len(os.read(r, 8))
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        return 1.0
    if attack == "disk":
        # Past the scratch budget in files each under the file size limit.
        chunk = b"x" * (64 << 20)
        for name in ("part1.bin", "part2.bin"):
            with open(name, "wb") as f:
                for _ in range(9):
                    f.write(chunk)
        return 1.0
    raise ValueError("unknown attack %r" % attack)
