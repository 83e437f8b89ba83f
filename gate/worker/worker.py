# gradegate grader worker.
#
# Started by gate/worker (Go) as `python -I -B -X utf8 -c <this file>`. It talks
# to Go over two pipes that are kept apart from the grader's stdout/stderr:
#
#   fd 3  requests, Go -> worker: one JSON object per line
#   fd 4  responses, worker -> Go: one JSON object per line
#
# The first request is {"op": "init", ...} carrying the grader's exact bytes;
# the worker answers {"op": "ready"} or {"op": "load_error", ...}. Every later
# request is one task ({"id", "sample", "item"}) or one batch ({"id", "batch"}),
# answered by exactly one response with the same id. Whatever the grader prints
# goes to a bounded in-memory capture and comes back inside the response, so
# nothing it prints can be taken for a result. Writes below Python (C code,
# faulthandler) reach fd 1/2, which Go drains with its own bound.
#
# The worker only classifies what Python alone can see (bool versus int, NaN,
# exception type and grader line). Timeouts, crashes and memory kills are
# judged by Go from outside, because a process that misbehaves cannot be
# trusted to report on itself.

import binascii
import builtins
import errno
import faulthandler
import io
import json
import math
import numbers
import os
import reprlib
import select
import signal
import struct
import sys
import types

REQ_FD = 3
RESP_FD = 4
MESSAGE_LIMIT = 2000
JUDGE_LIMIT = 64 * 1024
AF_UNIX = 1  # Linux; the one socket family the sandbox allows
SPAWN_EVENTS = frozenset(("os.fork", "os.forkpty", "os.posix_spawn", "subprocess.Popen", "os.exec"))
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def read_child(r, pid):
    """Reads one length-prefixed response from a forked child and reaps it.

    Returns (data, status, usage); data is b"" when the child died before it
    finished writing. A grandchild holding the pipe open cannot stall this: the
    read ends at the announced length, or when the child is gone and nothing
    more is buffered.
    """
    buf = bytearray()
    want = None
    reaped = None
    try:
        while True:
            ready, _, _ = select.select([r], [], [], 0.05)
            if ready:
                chunk = os.read(r, 1 << 16)
                buf += chunk
                if want is None and len(buf) >= 8:
                    want = 8 + struct.unpack(">Q", bytes(buf[:8]))[0]
                if (want is not None and len(buf) >= want) or not chunk:
                    break
                continue
            if reaped is not None:
                break  # the child is gone and nothing more is buffered
            wpid, status, usage = os.wait4(pid, os.WNOHANG)
            if wpid:
                reaped = (status, usage)
    finally:
        os.close(r)
    if reaped is None:
        _, status, usage = os.wait4(pid, 0)
        reaped = (status, usage)
    data = bytes(buf[8:want]) if want is not None and len(buf) >= want else b""
    return data, reaped[0], reaped[1]


def leftover_children():
    """Whether a child process of this one is still running.

    Exited children are reaped on the way, so only live ones count.
    """
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


def forbidden_open(args):
    """What an open() the sandbox refuses is trying, or None.

    Writes go only to the scratch directory (the working directory) and
    /dev/null; another process's /proc entries are closed. The sandbox
    (Landlock, uids) does the refusing; this only names the attempt.
    """
    if len(args) < 3 or not isinstance(args[0], (str, bytes)):
        return None
    path = os.fsdecode(args[0])
    mode, flags = args[1] or "", args[2] or 0
    if path.startswith("/proc/"):
        first = path[6:].split("/", 1)[0]
        if first.isdigit() and int(first) != os.getpid():
            return "to open another process's %s" % path
    writing = (flags & WRITE_FLAGS) or any(c in mode for c in "wax+")
    if not writing:
        return None
    full = os.path.normpath(os.path.join(os.getcwd(), path))
    scratch = os.getcwd()
    if full == "/dev/null" or full == scratch or full.startswith(scratch + os.sep):
        return None
    return "to write %s outside its scratch directory" % full


def forbidden_signal(event, args):
    """What a signal outside the grader's own process group is aimed at, or None."""
    if len(args) < 1 or not isinstance(args[0], int):
        return None
    target, own = args[0], os.getpgrp()
    if event == "os.killpg":
        return None if target == own else "to signal process group %d" % target
    if target == 0 or target == -own:
        return None
    if target < 0:
        return "to signal process group %d" % -target
    try:
        if os.getpgid(target) == own:
            return None
    except OSError:
        pass
    return "to signal pid %d outside its process group" % target

_repr = reprlib.Repr()
_repr.maxstring = 80
_repr.maxother = 80


def short_repr(value):
    try:
        return _repr.repr(value)
    except BaseException:  # a grader object whose __repr__ fails
        return "<%s>" % type(value).__name__


def clip(text, limit=MESSAGE_LIMIT):
    if len(text) > limit:
        return text[:limit] + "…"
    return text


class Capture(io.TextIOBase):
    """A bounded sink for sys.stdout and sys.stderr.

    One instance serves both streams for the whole life of the process, so a
    logging handler the grader created at import time still writes here; Go
    reads and resets it per task. Memory stays bounded however much the grader
    prints.
    """

    def __init__(self, limit):
        self.limit = limit
        self.reset()

    def reset(self):
        self.parts = []
        self.kept = 0
        self.cut = 0

    def take(self):
        data = "".join(self.parts).encode("utf-8", "replace")
        cut = self.cut
        if len(data) > self.limit:
            cut += len(data) - self.limit
            data = data[: self.limit]
        self.reset()
        return data.decode("utf-8", "ignore"), cut

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError("write() argument must be str, not %s" % type(s).__name__)
        room = self.limit - self.kept
        if room > 0:
            self.parts.append(s[:room])
            self.kept += min(len(s), room)
        if len(s) > room:
            self.cut += len(s) - max(room, 0)
        return len(s)

    def writable(self):
        return True

    def isatty(self):
        return False

    def flush(self):
        pass

    @property
    def encoding(self):
        return "utf-8"

    @property
    def errors(self):
        return "replace"

    @property
    def buffer(self):
        return _BinaryCapture(self)


class _BinaryCapture(io.RawIOBase):
    def __init__(self, text):
        self.text = text

    def writable(self):
        return True

    def write(self, b):
        self.text.write(bytes(b).decode("utf-8", "replace"))
        return len(b)


# Built once: json.dumps with any argument builds a new encoder per call,
# which is a measurable share of a case's round trip.
_encode_response = json.JSONEncoder(allow_nan=False, separators=(",", ":")).encode


def write_response(obj):
    data = (_encode_response(obj) + "\n").encode("utf-8")
    view = memoryview(data)
    while view:
        n = os.write(RESP_FD, view)
        view = view[n:]


def jsonable(value, depth=0):
    """Turns the grader's judge into plain JSON, never failing on it."""
    if depth > 20:
        return short_repr(value)
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, dict):
        return {str(k): jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v, depth + 1) for v in value]
    return short_repr(value)


def encode_judge(judge):
    if judge is None:
        return None
    try:
        value = jsonable(judge)
        text = json.dumps(value, allow_nan=False)
    except BaseException:  # a pathological object; the judge is only for debugging
        return short_repr(judge)
    if len(text) > JUDGE_LIMIT:
        return {"gradegate_truncated": True, "json_prefix": text[:4096]}
    return value


def as_score(value):
    """Returns (float, None) for a valid score, or (None, why not)."""
    # numbers.Real admits int, float, fractions and numpy scalars; bool is an
    # int subclass and must not pass (SPEC section 4: True == 1 hides bugs).
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or type(value).__name__ == "bool_":
        return None, "%s %s" % (type(value).__name__, short_repr(value))
    try:
        f = float(value)
    except (OverflowError, ValueError, TypeError) as e:
        return None, "%s %s (%s)" % (type(value).__name__, short_repr(value), e)
    if not math.isfinite(f):
        return None, "%s %s" % (type(value).__name__, short_repr(value))
    return f, None


def classify(ret, metric):
    """Maps what grade() returned to a response (SPEC section 4)."""
    if isinstance(ret, dict):
        if "scores" not in ret:
            return invalid("grade returned a dict without \"scores\": %s" % short_repr(ret))
        scores = ret["scores"]
        if not isinstance(scores, dict):
            return invalid("grade returned \"scores\" as %s %s, not a dict" % (type(scores).__name__, short_repr(scores)))
        out = {}
        for key, value in scores.items():
            if not isinstance(key, str):
                return invalid("scores key %s is not a string" % short_repr(key))
            f, why = as_score(value)
            if why is not None:
                return invalid("scores[%r] is %s, not a finite int or float" % (key, why))
            out[key] = f
        if metric not in out:
            return invalid("scores has no %r (the gating metric); keys: %s" % (metric, short_repr(sorted(out))))
        return {"class": "ok", "scores": out, "judge": encode_judge(ret.get("judge"))}
    f, why = as_score(ret)
    if why is not None:
        return invalid("grade returned %s, not a finite int or float or a {\"scores\": ...} dict" % why)
    return {"class": "ok", "scores": {metric: f}}


def invalid(message):
    return {"class": "invalid_return", "message": clip(message)}


def grader_line(tb, filename):
    # Walks the traceback by hand rather than with the traceback module,
    # which (with its imports) would add to every worker's start-up.
    line = 0
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno or 0
        tb = tb.tb_next
    return line


def takes_positional(fn, n):
    """Whether fn(*[None] * n) binds, for the common case of a plain function.

    Avoids importing inspect (and its imports) on every start; anything but
    a plain function is left to inspect.
    """
    code = getattr(fn, "__code__", None)
    if not isinstance(fn, types.FunctionType) or code is None:
        import inspect

        try:
            inspect.signature(fn).bind(*([None] * n))
        except TypeError:
            return False
        except ValueError:
            pass  # no signature to read: let the call decide
        return True
    positional = code.co_argcount
    required = positional - len(fn.__defaults__ or ())
    kwonly = code.co_varnames[positional : positional + code.co_kwonlyargcount]
    if any(k not in (fn.__kwdefaults__ or {}) for k in kwonly):
        return False
    has_varargs = bool(code.co_flags & 0x04)  # CO_VARARGS
    return required <= n and (n <= positional or has_varargs)


def signature_text(fn):
    code = getattr(fn, "__code__", None)
    if code is None:
        return "(…)"
    names = list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
    if code.co_flags & 0x04:
        names.insert(code.co_argcount, "*" + code.co_varnames[code.co_argcount + code.co_kwonlyargcount])
    return "(%s)" % ", ".join(names)


def exception_response(exc, filename, memory_mb):
    try:
        message = str(exc)
    except BaseException:
        message = "<unprintable %s>" % type(exc).__name__
    line = grader_line(exc.__traceback__, filename)
    if isinstance(exc, SyntaxError) and exc.filename == filename and exc.lineno:
        line = exc.lineno
    cls = "grader_exception"
    if isinstance(exc, MemoryError):
        cls = "memory_exceeded"
        if not message:
            message = "MemoryError (memory_mb=%d)" % memory_mb if memory_mb else "MemoryError"
    return {"class": cls, "type": type(exc).__name__, "message": clip(message), "line": line}


def hosted_sample(sample):
    """The sample as OpenAI's hosted grader hands it to grade().

    output_text, output_tools and choices pass through as stored. When
    output_json is not stored and output_text is valid JSON, output_json is
    its parse, as the hosted side builds it for a structured-output model.
    The stored sample is never modified.
    """
    if not isinstance(sample, dict) or "output_json" in sample:
        return sample
    text = sample.get("output_text")
    if not isinstance(text, str):
        return sample
    try:
        parsed = json.loads(text)
    except ValueError:
        return sample
    derived = dict(sample)
    derived["output_json"] = parsed
    return derived


def dump_stack_on(signum):
    # Go sends SIGUSR1 just before it kills a process for a timeout. The
    # faulthandler handler runs in C, so it prints the stack even while the
    # grader's Python code never yields; the output names the stuck line.
    faulthandler.register(signum, file=sys.__stderr__, all_threads=True, chain=False)


class Worker:
    def __init__(self, init):
        self.name = init["name"]
        self.metric = init["metric"]
        self.contract = init["contract"]
        self.fork = init["isolation"] == "case"
        self.memory_mb = int(init.get("memory_mb") or 0)
        self.capture = Capture(int(init["output_limit"]))
        self.fn = None
        self.violation = None
        self.spawned = False

    def load(self, source):
        """Compiles the exact bytes Go sent, under the grader's file name."""
        # A real module registered in sys.modules, so dataclasses, pickle and
        # typing that look a class's module up by name keep working; not
        # "__main__", so an `if __name__ == "__main__":` block does not run.
        mod = types.ModuleType("__grader__")
        mod.__file__ = self.name
        mod.__builtins__ = builtins
        sys.modules["__grader__"] = mod
        try:
            code = compile(source, self.name, "exec", dont_inherit=True)
            exec(code, mod.__dict__)
        except BaseException as exc:
            resp = self.exception(exc)
            resp["message"] = clip("%s: %s" % (resp["type"], resp["message"]))
            return resp
        want = "grade_batch" if self.contract == "batch" else "grade"
        fn = mod.__dict__.get(want)
        if not callable(fn):
            usage = "grade_batch(samples)" if want == "grade_batch" else "grade(sample, item)"
            return {"class": "grader_exception", "type": "", "message": "%s defines no %s function" % (self.name, usage), "line": 0}
        n = 1 if want == "grade_batch" else 2
        if not takes_positional(fn, n):
            count = "one positional parameter (samples)" if n == 1 else "exactly two positional parameters (sample, item)"
            return {
                "class": "grader_exception",
                "type": "TypeError",
                "message": "%s%s must take %s" % (want, signature_text(fn), count),
                "line": getattr(getattr(fn, "__code__", None), "co_firstlineno", 0),
            }
        self.fn = fn
        return None

    def call(self, req):
        """Runs one request in this process and returns its response."""
        self.capture.reset()
        self.violation = None
        self.spawned = False
        if "batch" in req:
            resp = self.call_batch(req["batch"])
        else:
            try:
                ret = self.fn(hosted_sample(req["sample"]), req["item"])
            except BaseException as exc:
                resp = self.exception(exc)
            else:
                resp = self.classify(ret)
        resp["output"], resp["output_cut"] = self.capture.take()
        if leftover_children():
            # A child of the grader would outlive its case (and keep counting
            # against the slot's process limit): the Go side replaces this
            # process, which kills its whole process group.
            resp["leftover"] = True
        return resp

    def exception(self, exc):
        resp = exception_response(exc, self.name, self.memory_mb)
        if self.violation is not None and resp["class"] == "grader_exception":
            # The grader failed after trying something the sandbox forbids:
            # that refusal, not the grader's logic, is the cause (SPEC
            # section 4, sandbox_violation). A grader that catches the
            # refusal and still returns a score is graded normally.
            resp["class"] = "sandbox_violation"
            resp["message"] = clip("the grader tried %s, which the sandbox forbids: %s: %s" % (self.violation, resp["type"], resp["message"]))
        elif isinstance(exc, OSError) and exc.errno == errno.EFBIG and resp["class"] == "grader_exception":
            # RLIMIT_FSIZE (1 GiB): Python ignores SIGXFSZ, so the write fails.
            resp["class"] = "sandbox_violation"
            resp["message"] = clip("the grader tried to write a file past the sandbox's 1 GiB limit: %s: %s" % (resp["type"], resp["message"]))
        elif self.spawned and isinstance(exc, BlockingIOError) and resp["class"] == "grader_exception":
            # EAGAIN from fork after the grader started processes: the
            # sandbox's process limit (RLIMIT_NPROC) stopped it.
            resp["class"] = "sandbox_violation"
            resp["message"] = clip("the grader tried to start more processes than the sandbox allows: %s: %s" % (resp["type"], resp["message"]))
        return resp

    def audit(self, event, args):
        # Runs for every audit event in the process (and cannot be removed by
        # the grader); keep the common path to a few string comparisons. Only
        # the first attempt of a case is kept.
        if event in SPAWN_EVENTS:
            self.spawned = True
        if self.violation is not None:
            return
        if event == "socket.__new__":
            if len(args) > 1 and args[1] != AF_UNIX:
                self.violation = "a network socket (address family %s)" % args[1]
        elif event == "open":
            self.violation = forbidden_open(args)
        elif event == "os.kill" or event == "os.killpg":
            self.violation = forbidden_signal(event, args)

    def classify(self, ret):
        try:
            return classify(ret, self.metric)
        except BaseException as exc:  # e.g. a dict subclass whose get() raises
            return invalid("grade returned %s, which could not be read: %s: %s" % (type(ret).__name__, type(exc).__name__, exc))

    def call_batch(self, batch):
        try:
            ret = self.fn([{"case_id": c["case_id"], "sample": hosted_sample(c["sample"]), "item": c["item"]} for c in batch])
        except BaseException as exc:
            return self.exception(exc)
        if not isinstance(ret, dict) or not isinstance(ret.get("samples"), list):
            return invalid("grade_batch returned %s, not a dict with a \"samples\" list" % short_repr(ret))
        asked = {c["case_id"] for c in batch}
        by_id, dupes, strangers = {}, set(), []
        for entry in ret["samples"]:
            if isinstance(entry, dict) and isinstance(entry.get("case_id"), str):
                cid = entry["case_id"]
                if cid in by_id:
                    dupes.add(cid)
                by_id.setdefault(cid, entry)
                if cid not in asked:
                    strangers.append(cid)
        # Entries for cases that were never asked for mean the grader
        # mislabels its results: none of them can be trusted to belong to
        # the case they name.
        if strangers:
            return invalid("grade_batch returned entries for case_ids that were not in the batch: %s" % short_repr(sorted(set(strangers))))
        results = []
        for case in batch:
            entry = by_id.get(case["case_id"])
            if entry is None:
                results.append(invalid("grade_batch returned no entry for case_id %r" % case["case_id"]))
            elif case["case_id"] in dupes:
                # Two scores for one case: picking either would be a guess.
                results.append(invalid("grade_batch returned more than one entry for case_id %r" % case["case_id"]))
            else:
                results.append(self.classify({"scores": entry.get("scores"), "judge": entry.get("judge")}))
        return {"class": "ok", "results": results}

    def call_forked(self, req):
        """Runs one request in a forked child, so the grader's state dies with it."""
        r, w = os.pipe()
        try:
            pid = os.fork()
        except OSError as exc:
            os.close(r)
            os.close(w)
            return {"class": "died", "message": "could not fork: %s" % exc}
        if pid == 0:
            try:
                os.close(r)
                # The child never speaks the protocol; closing it means a
                # grader cannot write a forged line into the response pipe.
                os.close(REQ_FD)
                os.close(RESP_FD)
                dump_stack_on(signal.SIGUSR1)
                data = json.dumps(self.call(req), allow_nan=False).encode("utf-8")
                # Length first: the grader's own children inherit this pipe,
                # so its end cannot be told by EOF.
                view = memoryview(struct.pack(">Q", len(data)) + data)
                while view:
                    view = view[os.write(w, view):]
            finally:
                os._exit(0)
        os.close(w)
        data, status, usage = read_child(r, pid)
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and data:
            try:
                return json.loads(data)
            except ValueError:
                pass
        died = {"maxrss_kb": usage.ru_maxrss}
        if os.WIFSIGNALED(status):
            died["signal"] = os.WTERMSIG(status)
        elif os.WIFEXITED(status):
            died["status"] = os.WEXITSTATUS(status)
        return {"class": "died", "died": died}

    def serve(self, requests):
        for line in requests:
            req = json.loads(line)
            resp = self.call_forked(req) if self.fork else self.call(req)
            resp["id"] = req["id"]
            write_response(resp)


def main():
    requests = open(REQ_FD, "rb", buffering=1 << 16)
    init = json.loads(requests.readline())
    worker = Worker(init)
    if worker.memory_mb and init.get("set_rlimit_as"):
        # Second belt: the sandbox launcher owns limits, but when it did not
        # apply RLIMIT_AS (--unsandboxed, or a host that refuses it) a grader
        # would otherwise grow until the host's OOM killer picks a victim.
        import resource

        limit = worker.memory_mb << 20
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    # Fatal signals (a segfault in C code) print the Python stack to fd 2,
    # which Go drains; it names the grader line that crashed.
    faulthandler.enable(file=sys.__stderr__)
    dump_stack_on(signal.SIGUSR1)
    sys.stdout = sys.stderr = worker.capture
    if init.get("network_denied"):
        sys.addaudithook(worker.audit)
    err = worker.load(binascii.a2b_base64(init["source"]))
    out, cut = worker.capture.take()
    if err is not None:
        err.update({"op": "load_error", "output": out, "output_cut": cut})
        write_response(err)
        return
    if worker.fork:
        # From now on only the forked children run grader code; the parent's
        # own stack would only add noise to a timed-out case's output.
        faulthandler.unregister(signal.SIGUSR1)
        signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    write_response({"op": "ready", "pid": os.getpid()})
    worker.serve(requests)


main()
