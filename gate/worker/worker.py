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
# answered by exactly one response with the same id, in request order. Go keeps
# a window of requests queued ahead, so the worker never waits for the gate:
# it takes the next request as soon as it wrote the previous response.
#
# Whatever the grader prints goes to a bounded in-memory capture and comes back
# inside the response, so nothing it prints can be taken for a result. Writes
# below Python (C code, faulthandler) reach fd 1/2, which Go drains with its
# own bound; after each request the worker writes an end marker carrying the
# request id to fd 2, before the response, so Go splits that stream between
# pipelined cases exactly.
#
# A request the worker cannot decode is answered with {"op": "bad_request"}
# and the worker stops: Go sent something its own worker cannot read, which is
# a tool failure, never a grader's outcome.
#
# The worker only classifies what Python alone can see (bool versus int, NaN,
# exception type and grader line). Timeouts, crashes and memory kills are
# judged by Go from outside, because a process that misbehaves cannot be
# trusted to report on itself.

import binascii
import builtins
import errno
import faulthandler
import gc
import io
import math
import _socket
import os
import resource
# The C module signal wraps: signal's enum classes import enum, which costs
# more of an interpreter's start than the worker's own code. The grader's
# own "import signal" gets the whole module, as it would anywhere.
import _signal as signal
import sys
import time

# numbers, reprlib, select, struct and types are not imported at start
# either: they cost a start more than they serve it (numbers only for a
# score that is not an int or a float, reprlib for a message, select for a
# forked child's answer, struct and types not at all).
FunctionType = type(lambda: None)  # types.FunctionType
ModuleType = type(sys)  # types.ModuleType

REQ_FD = 3
RESP_FD = 4
MESSAGE_LIMIT = 2000
JUDGE_LIMIT = 64 * 1024
# RESULT_LIMIT bounds one case's response without its output (scores, judge,
# message). Go refuses a longer line as a broken protocol; a grader whose own
# result is longer gets invalid_return here instead.
RESULT_LIMIT = 160 * 1024
END_MARKER = b"\x00gradegate-end:%d\n"
# Every LEFTOVER_EVERY cases, and after any case that started a process, the
# worker looks for child processes left running.
LEFTOVER_EVERY = 64
AF_UNIX = 1  # Linux; the one socket family the sandbox allows
# The audit events of the calls whose refusal the sandbox answers for: a
# file's mode, owner, times and extended attributes are not the grader's
# to change, in scratch or out (the seccomp filter refuses them).
METADATA_EVENTS = {
    "os.chmod": "mode", "os.chown": "owner", "os.utime": "times",
    "os.setxattr": "extended attributes", "os.removexattr": "extended attributes",
}

SPAWN_EVENTS = frozenset(("os.fork", "os.forkpty", "os.posix_spawn", "subprocess.Popen", "os.exec"))
# What json.loads skips around a value, and every character a value can
# start with (NaN, Infinity and -Infinity included, as Python reads them).
JSON_WHITESPACE = " \t\n\r"
JSON_START = frozenset('"{[ntfNI-0123456789')


class _LazyModule:
    """A module imported when one of its names is first used."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        return getattr(__import__(self._name), attr)


# The worker reads and writes its protocol with json's own C scanner and
# encoder (_json), and imports json itself (with re, enum, functools and
# collections: half of an interpreter's start) only for what else it
# formats: a judge, a ctx record's model_dump_json, an MKA1 target, and
# the exact error of a line that does not parse. A grader's "import json"
# is the whole module, as it would be anywhere.
json = _LazyModule("json")


class _JSONDecoderContext:
    """What json.JSONDecoder() gives its C scanner: the defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__


def _json_default(o):
    # json.JSONEncoder.default's refusal, word for word.
    raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")


try:
    import _json
    # json.loads's own scanner: the value at an index, and where it ends.
    _scan_json = _json.make_scanner(_JSONDecoderContext)
    _make_encoder = _json.make_encoder
    _encode_string = _json.encode_basestring_ascii
except (ImportError, AttributeError):  # a Python built without json's C part
    _scan_json = json.JSONDecoder().scan_once
    _make_encoder = None


def scan_json_from(text, start):
    """The value of str text from start, where JSON's whitespace ends, as
    json.loads reads it; StopIteration or ValueError where json.loads
    raises."""
    value, end = _scan_json(text, start)
    if end != len(text) and text[end:].strip(JSON_WHITESPACE):
        raise ValueError("extra data after the value")
    return value


def loads_json(data):
    """json.loads(data) for the gate's lines and the worker's own.

    The value of a UTF-8 line (str or bytes), scanned as json.loads scans
    it, without the wrapper that imports json and runs two regular
    expressions; whatever that path does not take (a line that does not
    parse, another encoding) goes to json.loads itself, so the value and the
    error are json.loads's.
    """
    try:
        text = data
        if type(data) is not str:
            # json.loads reads a byte string whose first two bytes are
            # ASCII and not NUL as UTF-8 (json.detect_encoding).
            head = data[:2]
            if not head or head[0] >= 0x80 or 0 in head:
                raise ValueError
            text = data.decode("utf-8", "surrogatepass")
        return scan_json_from(text, len(text) - len(text.lstrip(JSON_WHITESPACE)))
    except (StopIteration, ValueError):
        pass
    return json.loads(data)


def loads_request(line):
    """loads_json(line) for a request line as Go writes it: compact JSON
    that starts with "{" and ends with one newline, scanned at once (a
    quarter of loads_json's cost per case); any other line takes
    loads_json's way, so the value and the error are its."""
    if line[-1:] == b"\n" and line[:1] == b"{":
        try:
            text = line.decode("utf-8", "surrogatepass")
            value, end = _scan_json(text, 0)
            if end == len(text) - 1:
                return value
        except (StopIteration, ValueError):
            pass
    return loads_json(line)


WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def read_child(r, pid):
    """Reads one length-prefixed response from a forked child.

    Returns (data, status, usage). When the child wrote its whole response,
    status and usage are None and the child is not waited for: it is exiting,
    and tearing down its memory overlaps the next case (see reap). Otherwise
    data is b"" and the child is reaped: it died before it finished writing.
    A grandchild holding the pipe open cannot stall this: the read ends at
    the announced length, or when the child is gone and nothing more is
    buffered.
    """
    import select

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
                    want = 8 + int.from_bytes(buf[:8], "big")
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
    if want is not None and len(buf) >= want and reaped is None:
        return bytes(buf[8:want]), None, None
    if reaped is None:
        _, status, usage = os.wait4(pid, 0)
        reaped = (status, usage)
    data = bytes(buf[8:want]) if want is not None and len(buf) >= want else b""
    return data, reaped[0], reaped[1]


def reap(pids, block):
    """Waits for forked children that answered and are on their way out."""
    for pid in list(pids):
        try:
            done, _ = os.waitpid(pid, 0 if block else os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            pids.remove(pid)


def leftover_children(grace=0.5):
    """Whether a child process of this one is still running.

    Exited children are reaped on the way, so only live ones count. A child
    that is on its way out (a grader that forks, lets the child _exit and
    does not wait) gets up to grace seconds to finish: it is not left over,
    and must not cost the worker a restart.
    """
    end = None
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid != 0:
            continue
        now = time.monotonic()
        if end is None:
            end = now + grace
        if now >= end:
            return True
        time.sleep(0.001)


def forbidden_open(args):
    """What an open() the sandbox refuses is trying, or None.

    Writes go only to the scratch directory (the working directory) and
    /dev/null; /proc is closed but for reopening the grader's own
    descriptors (/proc/self/fd/N). The sandbox (Landlock, uids) does the
    refusing; this only names the attempt.
    """
    if len(args) < 3 or not isinstance(args[0], (str, bytes)):
        return None
    path = os.fsdecode(args[0])
    mode, flags = args[1] or "", args[2] or 0
    if path.startswith("/proc/"):
        parts = path.split("/")
        if len(parts) > 4 and parts[3] == "fd" and parts[2] in ("self", "thread-self", str(os.getpid())):
            return None
        return "to open %s" % path
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

_repr = None


def short_repr(value):
    global _repr
    try:
        if _repr is None:
            import reprlib
            r = reprlib.Repr()
            r.maxstring = 80
            r.maxother = 80
            _repr = r
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


def _response_encoder(allow_nan=False):
    """A JSON encoder built once.

    json.dumps, and JSONEncoder.encode too, build a new C encoder on every
    call, which was a measurable share of a case's cost.
    """
    if _make_encoder is None:
        return json.JSONEncoder(allow_nan=allow_nan, separators=(",", ":")).encode
    it = _make_encoder(None, _json_default, _encode_string, None, ":", ",", False, False, allow_nan)
    return lambda obj: "".join(it(obj, 0))


_encode_response = _response_encoder()
_encode_copy = _response_encoder(allow_nan=True)


def json_copy(value):
    """json.loads(json.dumps(value)): a copy that shares nothing."""
    return loads_json(_encode_copy(value))


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_response(obj):
    write_all(RESP_FD, (_encode_response(obj) + "\n").encode("utf-8"))


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
    # int subclass and must not pass (True == 1 hides bugs). An int or a
    # float is one without asking numbers (whose import a numpy scalar's
    # module has made already).
    t = type(value)
    if t is not float and t is not int:
        import numbers

        if isinstance(value, bool) or not isinstance(value, numbers.Real) or t.__name__ == "bool_":
            return None, "%s %s" % (t.__name__, short_repr(value))
    try:
        f = float(value)
    except (OverflowError, ValueError, TypeError) as e:
        return None, "%s %s (%s)" % (type(value).__name__, short_repr(value), e)
    if not math.isfinite(f):
        return None, "%s %s" % (type(value).__name__, short_repr(value))
    return f, None


def classify(ret, metric):
    """Maps what grade() returned to a response (the outcome classes)."""
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


def same_answer(a, b):
    """Whether two responses to one task give the same outcome: class,
    scores and exception type."""
    return (a.get("class"), a.get("scores"), a.get("type")) == (b.get("class"), b.get("scores"), b.get("type"))


def outcome_text(resp):
    """A response in a few words: its score, or its class and type."""
    if resp.get("class") == "ok":
        return short_repr(resp.get("scores"))
    return "%s%s" % (resp.get("class"), " (%s)" % resp["type"] if resp.get("type") else "")


def per_case(resp, n):
    """A batch response's n results: a failure of the batch as a whole is
    each case's."""
    if resp.get("class") == "ok":
        return resp["results"]
    whole = {k: v for k, v in resp.items() if k in ("class", "type", "message", "line")}
    return [dict(whole) for _ in range(n)]


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
    if not isinstance(fn, FunctionType) or code is None:
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
    return {"class": cls, "type": clip(type(exc).__name__, 200), "message": clip(message), "line": line}


def rss_kb():
    # The peak resident size: the sandbox keeps graders out of /proc, and
    # so out of /proc/self/statm's current one.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def unix_sockets_refused():
    """Whether this sandbox refuses AF_UNIX sockets, as it does below Landlock ABI 9."""
    try:
        _socket.socket(AF_UNIX, _socket.SOCK_STREAM).close()
    except PermissionError:
        return True
    return False


class ReadLog(dict):
    """An item that notes which of its keys the grader reads.

    Only a request with "reads" gets one (canaries, whose derived
    fixture-breaking variants remove each key read in turn); cases get the
    plain dict, so their path costs nothing. Reading every value at once
    (items, values, iteration, a copy) counts as reading every key.
    """

    __slots__ = ("reads", "aliases")

    def __init__(self, d):
        dict.__init__(self, d)
        self.reads = []
        # A key filled from another (MKA1's target from the row's answer)
        # reads as that key, or as nothing (None) when no item key feeds it.
        self.aliases = {}

    def _note(self, key):
        if type(key) is str and key in self.aliases:
            key = self.aliases[key]
        if type(key) is str and key not in self.reads and dict.__contains__(self, key):
            self.reads.append(key)

    def _note_all(self):
        for key in dict.keys(self):
            self._note(key)

    def __getitem__(self, key):
        self._note(key)
        return dict.__getitem__(self, key)

    def get(self, key, default=None):
        self._note(key)
        return dict.get(self, key, default)

    def __contains__(self, key):
        self._note(key)
        return dict.__contains__(self, key)

    def pop(self, key, *default):
        self._note(key)
        return dict.pop(self, key, *default)

    def setdefault(self, key, default=None):
        self._note(key)
        return dict.setdefault(self, key, default)

    def items(self):
        self._note_all()
        return dict.items(self)

    def values(self):
        self._note_all()
        return dict.values(self)

    def __iter__(self):
        self._note_all()
        return dict.__iter__(self)

    def copy(self):
        self._note_all()
        return dict(self)


def logged_item(req):
    """The request's item, as a ReadLog when the request asks for its reads."""
    item = req["item"]
    if "reads" in req and type(item) is dict:
        return ReadLog(item)
    return item


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
    # Most model output is prose, and json.loads raising on it costs more
    # than the rest of a case's overhead: a text whose first character after
    # JSON's whitespace cannot start a value (or an empty one) is not JSON,
    # without asking.
    start = len(text) - len(text.lstrip(JSON_WHITESPACE))
    if text[start:start + 1] not in JSON_START:
        return sample
    # What json.loads does, without its wrapper (the encoding checks and two
    # regular expressions for the whitespace around the value), which cost
    # four times the scan of a short text: a value from start, then nothing
    # but JSON's whitespace.
    try:
        parsed = scan_json_from(text, start)
    except (StopIteration, ValueError):
        return sample
    derived = dict(sample)
    derived["output_json"] = parsed
    return derived


class PreprocessTimeout(BaseException):
    """Raised inside the preprocessor's call when it runs past its timeout.

    A BaseException, so that a preprocessor's `except Exception` does not
    swallow it; one that catches everything is still stopped by Go, at the
    request's deadline.
    """


def _preprocess_alarm(signum, frame):
    raise PreprocessTimeout()


# What a row the preprocessor dropped is answered with (Go: preprocessed_out).
DROPPED = "preprocessed_out"


class Preprocessor:
    """The manifest's preprocessor, run in the grader's process before grade.

    contract row calls transform(row) on each item: it returns the new row
    (a dict), or None to drop it. contract batch calls transform_batch(rows)
    on a list of items (a grade_batch batch's, or a list of one per case of
    a sample grader): it returns the rows to keep. A returned row belongs to
    the case whose row object it is, else to the case whose id field it
    carries, else (when as many rows come back as went in) to the case at
    its place; a row left out is dropped. A drop is an omission
    (preprocessed_out), never an error; anything else the preprocessor does
    wrong is the case's error, classed as a grader's, marked "pre" and
    naming the preprocessor.
    """

    def __init__(self, init):
        self.name = init["name"]
        self.contract = init["contract"]
        self.timeout = float(init["timeout"])
        self.id_field = init.get("id_field") or "case_id"
        self.source = binascii.a2b_base64(init["source"])
        self.fn = None

    def usage(self):
        return "transform_batch(rows)" if self.contract == "batch" else "transform(row)"

    def load(self, worker):
        """Compiles the preprocessor's exact bytes; a load_error response, or None."""
        mod = ModuleType("__preprocess__")
        mod.__file__ = self.name
        mod.__builtins__ = builtins
        sys.modules["__preprocess__"] = mod
        try:
            exec(compile(self.source, self.name, "exec", dont_inherit=True), mod.__dict__)
        except BaseException as exc:
            resp = self.raised(worker, exc)
            resp["message"] = clip("%s: %s" % (resp["type"], resp["message"]))
            return resp
        want = self.usage().split("(")[0]
        fn = mod.__dict__.get(want)
        if not callable(fn):
            return {"class": "grader_exception", "type": "", "pre": True, "line": 0, "message": clip(
                "the preprocessor %s defines no %s function (preprocess.contract: %s)" % (self.name, self.usage(), self.contract))}
        if not takes_positional(fn, 1):
            return {"class": "grader_exception", "type": "TypeError", "pre": True, "line": 0, "message": clip(
                "the preprocessor's %s%s must take one positional parameter (%s line %d)" % (
                    want, signature_text(fn), self.name, getattr(getattr(fn, "__code__", None), "co_firstlineno", 0)))}
        self.fn = fn
        return None

    def raised(self, worker, exc):
        """The response to an exception of the preprocessor, classed as a grader's."""
        resp = worker.exception(exc)
        line = grader_line(exc.__traceback__, self.name)
        if isinstance(exc, SyntaxError) and exc.filename == self.name and exc.lineno:
            line = exc.lineno
        where = "%s line %d" % (self.name, line) if line else self.name
        message = resp["message"]
        if message.startswith("the grader "):
            message = "the preprocessor " + message[len("the grader "):]
        # The line is the preprocessor's file's, not the grader's: it goes
        # in the message, and the response names no grader line.
        resp["message"] = clip("%s (raised in the preprocessor, %s)" % (message, where))
        resp["line"] = 0
        resp["pre"] = True
        return resp

    def timed_out(self, exc):
        line = grader_line(exc.__traceback__, self.name) if exc is not None else 0
        where = " (%s line %d)" % (self.name, line) if line else ""
        return {"class": "timeout", "pre": True, "line": 0, "message": clip(
            "the preprocessor %s ran past preprocess.timeout_seconds=%g%s" % (self.name, self.timeout, where))}

    def invalid(self, message):
        resp = invalid("the preprocessor %s: %s" % (self.name, message))
        resp["pre"] = True
        return resp

    def run(self, worker, arg):
        """Calls the preprocessor within its timeout: (value, None) or (None, response)."""
        old = signal.signal(signal.SIGALRM, _preprocess_alarm)
        start = time.perf_counter()
        try:
            signal.setitimer(signal.ITIMER_REAL, self.timeout)
            try:
                value = self.fn(arg)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except PreprocessTimeout as exc:
            return None, self.timed_out(exc)
        except BaseException as exc:
            return None, self.raised(worker, exc)
        finally:
            signal.signal(signal.SIGALRM, old)
        if time.perf_counter() - start > self.timeout:
            # It caught the alarm and went on.
            return None, self.timed_out(None)
        return value, None

    def task(self, worker, req):
        """Rewrites one task's item in req: None, or the task's response
        when the preprocessor dropped the row or failed on it."""
        if self.contract == "batch":
            rows, resp = self.rows(worker, [req["item"]], [None])
            if resp is not None:
                return resp
            row = rows[0]
        else:
            row, resp = self.run(worker, req["item"])
            if resp is not None:
                return resp
            if row is not None and not isinstance(row, dict):
                return self.invalid("transform returned %s %s, not a dict (the new row) or None (to drop it)" % (
                    type(row).__name__, short_repr(row)))
        if row is None:
            return {"class": DROPPED}
        req["item"] = row
        # What the preprocessor tried is not the grader's doing.
        worker.violation = None
        return None

    def rows(self, worker, items, ids):
        """Runs transform_batch over items: ([new row, or None when dropped,
        per item], None), or (None, response) for them all."""
        value, resp = self.run(worker, list(items))
        if resp is not None:
            return None, resp
        if not isinstance(value, (list, tuple)):
            return None, self.invalid("transform_batch returned %s %s, not a list of rows" % (type(value).__name__, short_repr(value)))
        by_object = {id(row): i for i, row in enumerate(items)}
        by_id = {}
        for i, key in enumerate(ids):
            if type(key) is str:
                by_id[key] = i if key not in by_id else None
        out = [None] * len(items)
        placed, unplaced = [], []
        for k, row in enumerate(value):
            if not isinstance(row, dict):
                return None, self.invalid("transform_batch returned %s %s at index %d, not a dict (a row)" % (type(row).__name__, short_repr(row), k))
            i = by_object.get(id(row))
            if i is None or items[i] is not row:
                key = row.get(self.id_field)
                i = by_id.get(key) if type(key) is str else None
            if i is None:
                unplaced.append(k)
                continue
            if out[i] is not None:
                return None, self.invalid("transform_batch returned the row of %s twice" % (
                    "case %r" % ids[i] if ids[i] is not None else "its input %d" % i))
            out[i] = row
            placed.append((i, k))
        if unplaced:
            if len(value) != len(items) or any(i != k for i, k in placed):
                return None, self.invalid(
                    "transform_batch returned %d rows for %d, and the row at index %d is neither one of the rows it was given nor carries the %r of one, so the case it belongs to cannot be told"
                    % (len(value), len(items), unplaced[0], self.id_field))
            out = list(value)
        return out, None
# MKA1's grader contract (grader.platform: mka1). What MKA1 hands its
# graders, built from what gradegate stores: the sample gains the fields
# MKA1 fills (extracted_output defaults to output_text; sample_id, task_id,
# run_id and model from the init when the stored sample has none), the item
# the convenience fields (target, reference_answer, prompt, task_id), and
# the return rules are MKA1's (a dict's non-finite scores are dropped, not
# fatal). Nothing stored is modified: the grader gets copies.

# The item fields that fill item["target"] when grader.target_field names
# none, first present wins.
MKA1_TARGET_FIELDS = ("target", "reference_answer", "answer", "label", "expected", "expected_output")


def mka1_text(value):
    """A row value as MKA1 renders a target: text as it is, numbers as
    Python prints them, anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def mka1_target_field(item, conf):
    """The item field that fills item["target"], or None."""
    if not isinstance(item, dict):
        return None
    names = (conf["target_field"],) if conf.get("target_field") else MKA1_TARGET_FIELDS
    for name in names:
        if dict.get(item, name) is not None:
            return name
    return None


def mka1_target(item, conf):
    name = mka1_target_field(item, conf)
    return None if name is None else mka1_text(dict.__getitem__(item, name))


def mka1_sample(sample, item, case_id, conf):
    """The sample grade(sample, item) gets under MKA1's contract."""
    out = dict(sample) if isinstance(sample, dict) else {"output_text": sample}
    out.setdefault("output_text", None)
    out.setdefault("extracted_output", out["output_text"])
    out.setdefault("model", conf.get("model") or None)
    # dict.get: filling the sample is no read of the grader's.
    prompt = dict.get(item, "prompt") if isinstance(item, dict) else None
    out.setdefault("prompt", prompt)
    out.setdefault("task_id", conf.get("task_id"))
    out.setdefault("run_id", conf.get("run_id"))
    out.setdefault("sample_id", case_id)
    return out


def mka1_item(item, sample, conf):
    """The item grade gets: the row, plus MKA1's convenience fields where
    the row has none of its own."""
    if not isinstance(item, dict):
        return item
    out = dict(item)
    target = mka1_target(item, conf)
    out.setdefault("target", target)
    out.setdefault("reference_answer", target)
    if "prompt" not in out:
        out["prompt"] = sample.get("prompt") if isinstance(sample, dict) else None
    out.setdefault("task_id", conf.get("task_id"))
    return out


def mka1_scores(scores):
    """MKA1 keeps only finite numeric score values: the others are dropped
    per key. Returns (kept, dropped descriptions)."""
    kept, dropped = {}, []
    for key, value in scores.items():
        f, why = as_score(value)
        if not isinstance(key, str):
            dropped.append("%s (not a string key)" % short_repr(key))
        elif why is not None:
            dropped.append("%s: %s" % (key, why))
        else:
            kept[key] = f
    return kept, dropped


def mka1_classify(ret, metric):
    """What grade returned, by MKA1's rules: a finite number is stored under
    metric_id; a dict keeps its finite numeric scores and is invalid without
    any; bools, strings, None and non-finite numbers are invalid."""
    if isinstance(ret, dict):
        scores = ret.get("scores")
        if not isinstance(scores, dict):
            return invalid("grade returned a dict without a \"scores\" dict, so without any finite numeric score: %s" % short_repr(ret))
        kept, dropped = mka1_scores(scores)
        if not kept:
            return invalid("grade returned a dict without any finite numeric score: %s" % short_repr(scores))
        if metric not in kept:
            why = "scores has no finite %r (grader.metric_id); finite keys: %s" % (metric, short_repr(sorted(kept)))
            if dropped:
                why += "; dropped: %s" % "; ".join(dropped)
            return invalid(why)
        resp = {"class": "ok", "scores": kept, "judge": encode_judge(ret.get("judge"))}
        if dropped:
            resp["dropped"] = [clip(d, 200) for d in dropped]
        return resp
    f, why = as_score(ret)
    if why is not None:
        return invalid("grade returned %s, not a finite number or a dict with finite numeric \"scores\"" % why)
    return {"class": "ok", "scores": {metric: f}}


class FlatReads(dict):
    """An MKA1 flat sample of a canary whose reads are recorded: its
    dataset_row is the row's ReadLog, and a read of its target (or
    reference answer) is a read of the row field that fed it."""

    __slots__ = ("row", "source")

    def __getitem__(self, key):
        self._note(key)
        return dict.__getitem__(self, key)

    def get(self, key, default=None):
        self._note(key)
        return dict.get(self, key, default)

    def _note(self, key):
        if key in ("target", "reference_answer") and self.source is not None:
            self.row._note(self.source)


def mka1_flat(case, conf):
    """One of the samples grade_batch(samples) gets under MKA1's contract."""
    item = case["item"]
    flat = mka1_flat_fields(case, conf)
    if type(item) is ReadLog:
        flat = FlatReads(flat)
        flat.row, flat.source = item, mka1_target_field(item, conf)
    return flat


def mka1_flat_fields(case, conf):
    """mka1_flat's fields, as a plain dict."""
    item = case["item"]
    sample = mka1_sample(case["sample"], item, case["case_id"], conf)
    stored = case["sample"] if isinstance(case["sample"], dict) else {}
    scores = stored.get("scores")
    return {
        "sample_id": sample["sample_id"],
        "task_id": sample["task_id"],
        "model": sample["model"],
        "prompt": sample["prompt"],
        "target": mka1_target(item, conf),
        "output_text": sample["output_text"],
        "extracted_output": sample["extracted_output"],
        "dataset_row": item if type(item) is ReadLog else dict(item) if isinstance(item, dict) else item,
        "response_id": stored.get("response_id"),
        "scores": dict(scores) if isinstance(scores, dict) else {},
        "judge": stored.get("judge"),
    }


def mka1_metrics(ret, declared):
    """grade_batch's "metrics", by MKA1's rules: finite numbers kept, the
    rest dropped and named; with declared metric ids, the undeclared ones
    dropped too. Returns (metrics, dropped) or an invalid response."""
    metrics = ret.get("metrics")
    if metrics is None:
        return {}, []
    if not isinstance(metrics, dict):
        return invalid("grade_batch returned \"metrics\" as %s %s, not a dict" % (type(metrics).__name__, short_repr(metrics))), None
    kept, dropped = mka1_scores(metrics)
    if declared is not None:
        for key in sorted(k for k in kept if k not in declared):
            del kept[key]
            dropped.append("%s: not among grader.metrics" % key)
    return kept, [clip(d, 200) for d in dropped]


def dump_stack_on(signum):
    # Go sends SIGUSR1 just before it kills a process for a timeout. The
    # faulthandler handler runs in C, so it prints the stack even while the
    # grader's Python code never yields; the output names the stuck line.
    faulthandler.register(signum, file=sys.__stderr__, all_threads=True, chain=False)


# Model calls from Python (ctx): the grader asks, the gate calls. The worker
# writes one call per line to fd 5 and reads its answer from fd 6; the gate
# holds the key, the cache and the budget, so the grader holds neither a key
# nor a socket.
CALL_FD = 5
ANSWER_FD = 6
ANSWER_LIMIT = 16 << 20


class ModelCallError(Exception):
    """A model call the gate refused or the API rejected; the grader may catch it."""


class ModelCallBudgetExceeded(ModelCallError):
    """The call would go past grader.max_model_calls for this execution."""


class ModelCallNotRecorded(ModelCallError):
    """A replay (mutation testing) met a call that was never recorded."""


class GateFailure(BaseException):
    """The gate could not make the call (network, key, a corrupt cache): the
    run fails whatever the grader does with this."""


class Record(dict):
    """A model response: a dict, also read by attribute as the OpenAI SDK's
    objects are (response.output_text, result.data[0].embedding)."""

    __slots__ = ()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self.get(name)

    def model_dump(self, *args, **kwargs):
        return plain(self)

    to_dict = model_dump

    def model_dump_json(self, *args, **kwargs):
        return json.dumps(plain(self))


def as_record(value):
    if type(value) is dict:
        return Record((k, as_record(v)) for k, v in value.items())
    if type(value) is list:
        return [as_record(v) for v in value]
    return value


def plain(value):
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


class Context:
    """The grader's ctx: ctx.responses_create and ctx.embeddings_create."""

    ModelCallError = ModelCallError
    ModelCallBudgetExceeded = ModelCallBudgetExceeded
    ModelCallNotRecorded = ModelCallNotRecorded

    def __init__(self, available):
        import _thread

        self._available = available
        self._lock = _thread.allocate_lock()
        self._buf = b""
        self.rid = 0

    def responses_create(self, *args, **kwargs):
        if args:
            raise TypeError("ctx.responses_create takes keyword arguments only (model=..., input=...)")
        return self._call("responses", kwargs)

    def embeddings_create(self, *args, **kwargs):
        if args:
            raise TypeError("ctx.embeddings_create takes keyword arguments only (model=..., input=...)")
        return self._call("embeddings", kwargs)

    def _call(self, kind, kwargs):
        if not self._available:
            raise ModelCallError("ctx model calls are not available here: they need gradegate's Linux worker pool, and this grader process has no model call pipes")
        try:
            line = json.dumps({"id": self.rid, "kind": kind, "args": kwargs}, allow_nan=False, separators=(",", ":"))
        except (TypeError, ValueError) as exc:
            raise TypeError("ctx.%s_create arguments must be JSON: %s" % (kind, exc)) from None
        with self._lock:
            write_all(CALL_FD, (line + "\n").encode("utf-8"))
            answer = self._read()
        if "ok" in answer:
            return as_record(answer["ok"])
        err = answer.get("error") or {}
        kinds = {"ModelCallBudgetExceeded": ModelCallBudgetExceeded, "ModelCallNotRecorded": ModelCallNotRecorded}
        if err.get("fatal"):
            raise GateFailure(err.get("message", "the gate could not make the model call"))
        raise kinds.get(err.get("type"), ModelCallError)(err.get("message", "the model call failed"))

    def _read(self):
        while b"\n" not in self._buf:
            chunk = os.read(ANSWER_FD, 1 << 16)
            if not chunk:
                raise GateFailure("the gate closed the model call pipe")
            self._buf += chunk
            if len(self._buf) > ANSWER_LIMIT:
                raise GateFailure("the gate's answer is over %d bytes" % ANSWER_LIMIT)
        line, _, self._buf = self._buf.partition(b"\n")
        return loads_json(line)


def takes_ctx(fn, n):
    """Whether fn has a positional parameter after its n: ctx."""
    code = getattr(fn, "__code__", None)
    if isinstance(fn, FunctionType) and code is not None:
        return code.co_argcount > n
    return takes_positional(fn, n + 1) and not takes_positional(fn, n)


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
        # When to ask Go for a replacement (0: never): peak resident memory grown
        # past the size after loading by grow_mb, or CPU time spent past
        # cpu_seconds (the CPU rlimit, a backstop, sits above it).
        self.network_denied = False
        self.unix_denied = False  # AF_UNIX sockets refused too (unix_sockets_refused)
        self.exiting = []  # pids of forked children that answered (reap)
        self.next_child = None  # isolation case: the child forked ahead (spawn)
        # stray is set in the child of a fork the grader made (os.fork,
        # multiprocessing), own_fork around the worker's own forks.
        self.stray = False
        self.own_fork = False
        self.devnull = -1
        self.grow_kb = int(init.get("grow_mb") or 0) * 1024
        self.cpu_seconds = float(init.get("cpu_seconds") or 0)
        self.base_rss_kb = 0
        self.cases = 0
        self.pre = Preprocessor(init["preprocess"]) if init.get("preprocess") else None
        # grader.platform mka1: the sample, item and return rules of MKA1's
        # contract (mka1_*); None for OpenAI's.
        self.mka1 = init.get("mka1")
        # ctx: set when grade takes it (load); its calls go to the gate
        # only when the gate opened the call pipes (init "broker").
        self.ctx = None
        self.broker = bool(init.get("broker"))

    def forked(self):
        """Runs in the child of every fork in this process (os.register_at_fork).

        In the child of a fork the grader made, the protocol's pipes become
        /dev/null: a child that goes on past the grader's code into the
        worker's (a grader that forks and does not exit in the child, as a
        mutant of `if pid == 0:` does) can neither take a request meant for
        this process nor answer one, and it exits as soon as it is back in
        the worker (leave_if_stray). How a case ends then never depends on
        which of the two processes read the next request first.
        """
        if self.own_fork:
            return
        self.stray = True
        for fd in (REQ_FD, RESP_FD):
            try:
                if self.devnull >= 0:
                    os.dup2(self.devnull, fd)
                else:
                    os.close(fd)
            except OSError:
                pass

    def leave_if_stray(self):
        """Ends a grader's forked child that came back into the worker."""
        if self.stray:
            os._exit(0)

    def own(self, fork):
        """Forks for the worker itself (a case's child, a variant's child)."""
        self.own_fork = True
        try:
            return fork()
        finally:
            self.own_fork = False

    def load(self, source):
        """Compiles the exact bytes Go sent, under the grader's file name."""
        if self.pre is not None:
            err = self.pre.load(self)
            if err is not None:
                return err
        # A real module registered in sys.modules, so dataclasses, pickle and
        # typing that look a class's module up by name keep working; not
        # "__main__", so an `if __name__ == "__main__":` block does not run.
        mod = ModuleType("__grader__")
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
        fn, err = self.check_signature(fn, want)
        if err is not None:
            return err
        self.fn = fn
        return None

    def check_signature(self, fn, want):
        """(the function to call, None) when fn can be called the way this
        contract calls it, else (None, the load error that says how not).

        grade(sample, item) and grade_batch(samples), each optionally with
        ctx after them (model calls through the gate): such a function is
        called through with_ctx.
        """
        if not callable(fn):
            usage = "grade_batch(samples)" if want == "grade_batch" else "grade(sample, item)"
            return None, {"class": "grader_exception", "type": "", "message": "%s defines no %s function" % (self.name, usage), "line": 0}
        n = 1 if want == "grade_batch" else 2
        if not takes_positional(fn, n) and takes_positional(fn, n + 1) or takes_positional(fn, n) and takes_ctx(fn, n):
            return self.with_ctx(fn, n), None
        if takes_positional(fn, n):
            return fn, None
        count = "one positional parameter (samples), or two with ctx" if n == 1 else "exactly two positional parameters (sample, item), or three with ctx"
        return None, {
            "class": "grader_exception",
            "type": "TypeError",
            "message": "%s%s must take %s" % (want, signature_text(fn), count),
            "line": getattr(getattr(fn, "__code__", None), "co_firstlineno", 0),
        }

    def with_ctx(self, fn, n):
        """fn called with the worker's ctx after its n arguments."""
        self.ctx = ctx = Context(self.broker)
        if n == 1:
            return lambda samples: fn(samples, ctx)
        return lambda sample, item: fn(sample, item, ctx)

    def call(self, req, check_children):
        """Runs one request in this process and returns its response."""
        if self.ctx is not None:
            self.ctx.rid = req.get("id", 0)
        self.capture.reset()
        self.violation = None
        self.spawned = False
        item = None
        pre = self.pre.task(self, req) if self.pre is not None and "batch" not in req else None
        if pre is not None:
            resp = pre
        elif "batch" in req and self.pre is not None:
            resp = self.call_batch_preprocessed(req["batch"])
        elif "batch" in req and any("reads" in c and type(c["item"]) is dict for c in req["batch"]):
            resp = self.call_batch_recording_reads(req["batch"])
        elif "batch" in req:
            resp = self.grade_batch_call(req["batch"])
        elif req.get("trace"):
            resp = self.call_traced(req)
        elif "reads" in req and self.ctx is None and type(req["item"]) is dict:
            resp = self.call_recording_reads(req)
        else:
            item = logged_item(req)
            resp = self.grade_one(req, item)
            if type(item) is ReadLog:
                resp["reads"] = list(item.reads)
        if self.capture.parts or self.capture.cut:
            resp["output"], resp["output_cut"] = self.capture.take()
        if (self.spawned or check_children) and leftover_children():
            # A child of the grader would outlive its case (and keep counting
            # against the slot's process limit): the Go side replaces this
            # process, which kills its whole process group.
            resp["leftover"] = True
        return resp

    def grade_one(self, req, item):
        """grade on req's sample and item, classified."""
        try:
            ret = self.fn(*self.arguments(req, item))
        except BaseException as exc:
            return self.exception(exc)
        return self.classify(ret)

    def call_recording_reads(self, req):
        """A canary whose reads the gate needs (its fixture-breaking variants
        remove each key read in turn). It is graded first with the plain
        dict every case gets, and that answer counts; then again with a
        ReadLog, a dict subclass that notes the keys read. A grader that
        answers the two apart tells a recording item from a case's (or is
        not deterministic within one process): the canary is then an
        invalid return that says so, never the answer it gave.
        """
        # A copy, as the first call may change the item it was given.
        second = ReadLog(json_copy(req["item"]))
        resp = self.grade_one(req, req["item"])
        # What the counted call printed is the canary's output.
        printed = self.capture.take() if self.capture.parts or self.capture.cut else None
        again = self.grade_one(req, second)
        self.capture.reset()
        if printed is not None:
            resp["output"], resp["output_cut"] = printed
        if not same_answer(resp, again):
            return invalid("graded twice in one process, the grader answered %s then %s: the second time the item was "
                           "a dict subclass that notes the keys read (for the canary's fixture-breaking variants), "
                           "so the grader tells such an item from a case's, or is not deterministic"
                           % (outcome_text(resp), outcome_text(again)))
        resp["reads"] = list(second.reads)
        return resp

    def call_batch_recording_reads(self, batch):
        """call_recording_reads for a batch under OpenAI's contract: the
        batch is graded with the plain dicts every case gets, and that
        answer counts; then grade_batch runs again over the same batch, the
        items of the cases that ask for their reads as ReadLogs. When any
        case's result of the second call differs from the first's, the
        cases that asked are invalid returns that say the grader tells the
        items apart; the other cases keep the counted answer. A grader that
        takes ctx is called once, with the ReadLogs, as a single task is:
        a second call would make its model calls again.
        """
        # Copies, as the first call may change what it was given.
        second = json_copy(batch) if self.ctx is None else list(batch)
        logs = {}
        for k, c in enumerate(second):
            if "reads" in c and type(c["item"]) is dict:
                second[k] = dict(c, item=ReadLog(c["item"]))
                logs[k] = second[k]["item"]
        if self.ctx is not None:
            resp = self.grade_batch_call(second)
            if resp.get("class") == "ok":
                for k, log in logs.items():
                    resp["results"][k]["reads"] = list(log.reads)
            return resp
        resp = self.grade_batch_call(batch)
        printed = self.capture.take() if self.capture.parts or self.capture.cut else None
        again = self.grade_batch_call(second)
        self.capture.reset()
        if printed is not None:
            resp["output"], resp["output_cut"] = printed
        firsts, agains = per_case(resp, len(batch)), per_case(again, len(batch))
        for k, case in enumerate(batch):
            a, b = firsts[k], agains[k]
            if not same_answer(a, b):
                told = invalid("graded twice in one process, grade_batch answered case_id %s %s then %s: the second time "
                               "the items of the cases whose reads are recorded (for their fixture-breaking variants) were "
                               "a dict subclass that notes the keys read, so the grader tells such an item from a case's, "
                               "or is not deterministic" % (short_repr(case["case_id"]), outcome_text(a), outcome_text(b)))
                out = {"class": "ok", "results": [dict(told) if j in logs else r for j, r in enumerate(firsts)]}
                if printed is not None:
                    out["output"], out["output_cut"] = printed
                return out
        if resp.get("class") == "ok":
            for k, log in logs.items():
                resp["results"][k]["reads"] = list(log.reads)
        return resp

    def call_traced(self, req):
        """Runs one request with a profile hook that finds the grader line
        whose return produced the value grade returned ("return_line").

        Go asks for it only when replaying a canary that failed, never for
        a case: the hook costs a call per Python function call. Returns
        inside the grader's file are watched; the value is followed back
        through returns that hand on the very same object (grade returning
        another function's result), to the first of them.
        """
        name = self.name
        # (line, value, caller) of the latest returns that handed one object
        # on: to the caller, which returns it, or to a function the caller
        # passes it to (grade's `return check(parse(text))`).
        chain = []

        def hook(frame, event, arg):
            if event == "return" and frame.f_code.co_filename == name:
                if not (chain and chain[-1][1] is arg and (chain[-1][2] is frame or chain[-1][2] is frame.f_back)):
                    chain.clear()
                chain.append((frame.f_lineno, arg, frame.f_back))

        sys.setprofile(hook)
        try:
            ret = self.fn(*self.arguments(req, req["item"]))
        except BaseException as exc:
            sys.setprofile(None)
            return self.exception(exc)
        sys.setprofile(None)
        resp = self.classify(ret)
        if chain and chain[-1][1] is ret:
            resp["return_line"] = chain[0][0]
        chain.clear()  # frames hold the grader's locals
        return resp

    def wants_replacement(self):
        """Why this process should be replaced after the current case, or None.

        Looked at every LEFTOVER_EVERY cases and at least once a second: a
        few system calls, not per case.
        """
        if self.grow_kb and self.base_rss_kb:
            rss = rss_kb()
            if rss > self.base_rss_kb + self.grow_kb:
                return "peak memory grew from %d to %d MiB" % (self.base_rss_kb >> 10, rss >> 10)
        if self.cpu_seconds:
            t = os.times()
            if t.user + t.system >= self.cpu_seconds:
                return "CPU time reached %.0f s" % (t.user + t.system)
        return None

    def exception(self, exc):
        resp = exception_response(exc, self.name, self.memory_mb)
        if self.violation is not None and resp["class"] == "grader_exception":
            # The grader failed after trying something the sandbox forbids:
            # that refusal, not the grader's logic, is the cause
            # (sandbox_violation). A grader that catches the refusal and
            # still returns a score is graded normally.
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
        if self.violation is not None or not self.network_denied:
            return
        if event == "socket.__new__":
            if len(args) > 1 and args[1] != AF_UNIX:
                self.violation = "a network socket (address family %s)" % args[1]
            elif len(args) > 1 and self.unix_denied:
                self.violation = "a UNIX socket (only socketpair is allowed below Landlock ABI 9)"
        elif event == "open":
            self.violation = forbidden_open(args)
        elif event == "os.kill" or event == "os.killpg":
            self.violation = forbidden_signal(event, args)
        elif event in METADATA_EVENTS:
            self.violation = "to change a file's %s (%s), which the sandbox refuses everywhere" % (METADATA_EVENTS[event], event)
        elif event == "resource.prlimit" and args and args[0] not in (0, os.getpgrp()) and len(args) > 2 and args[2] is not None:
            self.violation = "to change the resource limits of pid %s" % short_repr(args[0])

    def arguments(self, req, item):
        """grade's (sample, item): OpenAI's hosted shape, or MKA1's."""
        if self.mka1 is None:
            return hosted_sample(req["sample"]), item
        sample = mka1_sample(req["sample"], req["item"], req.get("case_id"), self.mka1)
        shaped = mka1_item(req["item"], sample, self.mka1)
        if type(item) is ReadLog:
            source = mka1_target_field(item, self.mka1)
            for k, v in shaped.items():
                if not dict.__contains__(item, k):
                    dict.__setitem__(item, k, v)
                    item.aliases[k] = source if k in ("target", "reference_answer") else None
            shaped = item
        return sample, shaped

    def classify(self, ret):
        try:
            if self.mka1 is not None:
                return mka1_classify(ret, self.metric)
            return classify(ret, self.metric)
        except BaseException as exc:  # e.g. a dict subclass whose get() raises
            return invalid("grade returned %s, which could not be read: %s: %s" % (type(ret).__name__, type(exc).__name__, exc))

    def call_batch_preprocessed(self, batch):
        """A batch through the preprocessor, then grade_batch on the rows it kept.

        The response has a result per case of the batch: a dropped row's,
        and under contract row a row the preprocessor failed on, included;
        a failure of grade_batch as a whole is each kept case's.
        """
        failed = [None] * len(batch)
        if self.pre.contract == "batch":
            rows, resp = self.pre.rows(self, [c["item"] for c in batch], [c["case_id"] for c in batch])
            if resp is not None:
                return resp
        else:
            rows = []
            for i, c in enumerate(batch):
                req = {"item": c["item"]}
                resp = self.pre.task(self, req)
                rows.append(req["item"] if resp is None else None)
                if resp is not None and resp.get("class") != DROPPED:
                    failed[i] = resp
        self.violation = None
        kept = [dict(c, item=row) for c, row in zip(batch, rows) if row is not None]
        graded = self.grade_batch_call(kept) if kept else {"class": "ok", "results": []}
        if graded.get("class") != "ok":
            whole = {k: v for k, v in graded.items() if k in ("class", "type", "message", "line")}
            graded = {"class": "ok", "results": [dict(whole) for _ in kept]}
        done = iter(graded["results"])
        graded["results"] = [
            failed[i] if failed[i] is not None else ({"class": DROPPED} if row is None else next(done))
            for i, row in enumerate(rows)
        ]
        return graded

    def grade_batch_call(self, batch):
        """grade_batch over the batch, in the platform's shape."""
        return self.call_batch_mka1(batch) if self.mka1 is not None else self.call_batch(batch)

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

    def call_batch_mka1(self, batch):
        """grade_batch(samples) under MKA1's contract: flat samples keyed by
        sample_id; the reply's sample updates are applied by sample_id
        (scores merged, judge and extracted_output replaced) before each
        case is classified, and its metrics are kept (without the
        undeclared ones). A reply that names a sample_id not in the batch,
        names one twice, or has an update without one is invalid as a
        whole: none of its updates can be trusted to belong to the sample
        it names."""
        conf = self.mka1
        flat = [mka1_flat(c, conf) for c in batch]
        ids = {}
        for k, f in enumerate(flat):
            sid = f["sample_id"]
            if not isinstance(sid, str) or sid in ids:
                return invalid("the stored samples' sample_id %s is %s: grade_batch's updates need one unique string per sample"
                               % (short_repr(sid), "repeated" if sid in ids else "not a string"))
            ids[sid] = k
        try:
            ret = self.fn(flat)
        except BaseException as exc:
            return self.exception(exc)
        if not isinstance(ret, dict):
            return invalid("grade_batch returned %s, not a dict with \"metrics\" and/or \"samples\"" % short_repr(ret))
        metrics, dropped = mka1_metrics(ret, conf.get("metrics"))
        if dropped is None:
            return metrics
        updates = ret.get("samples")
        if updates is None:
            updates = []
        if not isinstance(updates, list):
            return invalid("grade_batch returned \"samples\" as %s %s, not a list" % (type(updates).__name__, short_repr(updates)))
        seen = set()
        for u in updates:
            sid = u.get("sample_id") if isinstance(u, dict) else None
            if not isinstance(u, dict) or "sample_id" not in u:
                return invalid("grade_batch returned a sample update without a sample_id: %s" % short_repr(u))
            if not isinstance(sid, str) or sid not in ids:
                return invalid("grade_batch returned an update for sample_id %s, which is not in the batch" % short_repr(sid))
            if sid in seen:
                return invalid("grade_batch returned more than one update for sample_id %r" % sid)
            seen.add(sid)
        bad, replaced = {}, set()
        for u in updates:
            f = flat[ids[u["sample_id"]]]
            if "scores" in u and u["scores"] is not None:
                if not isinstance(u["scores"], dict):
                    bad[u["sample_id"]] = "the update's \"scores\" is %s %s, not a dict" % (type(u["scores"]).__name__, short_repr(u["scores"]))
                    continue
                f["scores"].update(u["scores"])
            if "judge" in u:
                f["judge"] = u["judge"]
            if "extracted_output" in u:
                if u["extracted_output"] is not None and not isinstance(u["extracted_output"], str):
                    bad[u["sample_id"]] = "the update's extracted_output is %s, not a string or null" % short_repr(u["extracted_output"])
                    continue
                f["extracted_output"] = u["extracted_output"]
                replaced.add(u["sample_id"])
        results = []
        for f in flat:
            sid = f["sample_id"]
            if sid in bad:
                results.append(invalid("grade_batch: sample_id %r: %s" % (sid, bad[sid])))
                continue
            if not f["scores"]:
                results.append(invalid("grade_batch gave sample_id %r no score (no update with scores, none stored); a case is gated by scores[%r] (grader.metric_id)" % (sid, self.metric)))
                continue
            r = self.classify({"scores": f["scores"], "judge": f["judge"]})
            if sid in replaced:
                # What the case row shows as the grader's extraction.
                out = f["extracted_output"]
                r["extracted_output"] = None if out is None else clip(out, 2000)
            results.append(r)
        resp = {"class": "ok", "results": results, "metrics": metrics}
        if dropped:
            resp["metrics_dropped"] = dropped
        return resp

    def spawn(self):
        """Forks a child that waits for one request, then grades it.

        The next case's child is forked while the current one grades, so
        the fork overlaps the grading and a case pays only for handing its
        request over. The child sets up nothing before its request comes: a
        timeout's stack dump (SIGUSR1 to the process group) must not print
        an idle child's stack. Returns (pid, request pipe, response pipe),
        or None when the fork failed.
        """
        rq, wq = os.pipe()
        r, w = os.pipe()
        try:
            pid = self.own(os.fork)
        except OSError:
            for fd in (rq, wq, r, w):
                os.close(fd)
            return None
        if pid == 0:
            try:
                os.close(wq)
                os.close(r)
                # The child never speaks the protocol; closing it means a
                # grader cannot write a forged line into the response pipe.
                os.close(REQ_FD)
                os.close(RESP_FD)
                # Set up while the previous case grades: the stack dump
                # handler (its signal held back until there is a case, so an
                # idle child never prints a stack), and the pages every case
                # writes to (the first write to a page copies it).
                signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
                dump_stack_on(signal.SIGUSR1)
                _encode_response(self.classify(0.5))
                loads_json(b'{"warm": [1, 2.5, "x", null, true]}')
                line = b""
                while True:
                    chunk = os.read(rq, 1 << 16)
                    if not chunk:
                        break
                    line += chunk
                os.close(rq)
                if not line:
                    return  # the parent is gone, or needs no more children
                signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGUSR1])
                resp = self.call(loads_json(line), True)
                self.leave_if_stray()
                data = _encode_response(resp).encode("utf-8")
                # Length first: the grader's own children inherit this pipe,
                # so its end cannot be told by EOF.
                view = memoryview(len(data).to_bytes(8, "big") + data)
                while view:
                    view = view[os.write(w, view):]
            finally:
                os._exit(0)
        os.close(rq)
        os.close(w)
        return pid, wq, r

    def drop_spare_child(self):
        """Lets the child forked ahead of time go (it exits at EOF)."""
        if self.next_child is not None:
            pid, wq, r = self.next_child
            self.next_child = None
            os.close(wq)
            os.close(r)
            os.waitpid(pid, 0)

    def call_forked(self, req, line):
        """Runs one request in a forked child, so the grader's state dies with it."""
        # Children that answered are reaped here, a case later; a few that
        # are slow to go are waited for, so they never pile up.
        reap(self.exiting, len(self.exiting) > 8)
        child, self.next_child = self.next_child or self.spawn(), None
        if child is None:
            return {"class": "died", "message": "could not fork a process for the case"}
        pid, wq, r = child
        try:
            write_all(wq, line)
        except OSError:
            pass  # the child died already; read_child tells how
        os.close(wq)
        self.next_child = self.spawn()
        data, status, usage = read_child(r, pid)
        if status is None:
            self.exiting.append(pid)
            try:
                return loads_json(data)
            except ValueError:
                os.waitpid(pid, 0)
                self.exiting.remove(pid)
                return {"class": "died", "message": "the child's response could not be read"}
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and data:
            try:
                return loads_json(data)
            except ValueError:
                pass
        died = {"maxrss_kb": usage.ru_maxrss}
        if os.WIFSIGNALED(status):
            died["signal"] = os.WTERMSIG(status)
        elif os.WIFEXITED(status):
            died["status"] = os.WEXITSTATUS(status)
        return {"class": "died", "died": died}

    def serve(self, requests):
        """Answers requests until fd 3 closes.

        One response per request, written as soon as it is known; Go keeps
        requests queued ahead, so the next one is usually already buffered
        and read with many others in one system call.
        """
        clock = time.perf_counter
        loads = loads_request
        write = os.write
        # The common answer (one finite score, nothing printed) is formatted
        # directly: a third of the encoder's cost.
        fast = '{"id":%%d,"t":%%.4f,"class":"ok","scores":{%s:%%r}}\n' % _encode_response(self.metric).replace("%", "%%")
        check_at = clock() + 1.0
        fn = self.fn
        capture = self.capture
        # What sends every request the long way, whatever it holds; fixed
        # once the grader is loaded.
        special = bool(self.fork or self.mka1 is not None or self.ctx is not None or self.pre is not None)
        for line in requests:
            try:
                req = loads(line)
                if type(req) is dict and "op" in req:
                    if req["op"] == "fork":
                        self.zygote(req, requests)
                    return  # "end", or a zygote's last variant ended
                rid = req["id"]
                if fn is None:
                    raise ValueError("no grader is loaded here")
                if type(rid) is not int or not ("batch" in req or ("sample" in req and "item" in req)):
                    raise ValueError("not a request")
            except Exception as exc:  # RecursionError and UnicodeDecodeError included
                write_response({"op": "bad_request", "message": clip("%s: %s" % (type(exc).__name__, exc), 500)})
                return
            self.cases += 1
            start = clock()
            periodic = self.cases % LEFTOVER_EVERY == 0 or start >= check_at
            # A request of three keys that is no batch is id, sample and
            # item (checked above): no trace or reads asked.
            if not (special or periodic or len(req) != 3 or "batch" in req):
                # The common case on its shortest path: a finite float,
                # nothing printed, no process started.
                if capture.parts or capture.kept or capture.cut:
                    capture.reset()
                self.violation = None
                self.spawned = False
                try:
                    ret = fn(hosted_sample(req["sample"]), req["item"])
                except BaseException as exc:
                    self.leave_if_stray()
                    resp = self.exception(exc)
                else:
                    if self.stray:
                        os._exit(0)
                    if type(ret) is float and ret - ret == 0.0 and not capture.parts and not capture.cut and not self.spawned:
                        took = (clock() - start) * 1000
                        write(2, END_MARKER % rid)
                        data = (fast % (rid, took, ret)).encode()
                        n = write(RESP_FD, data)
                        if n != len(data):
                            write_all(RESP_FD, data[n:])
                        continue
                    resp = self.classify(ret)
                if capture.parts or capture.cut:
                    resp["output"], resp["output_cut"] = capture.take()
                if self.spawned and leftover_children():
                    resp["leftover"] = True
            else:
                resp = self.call_forked(req, line) if self.fork else self.call(req, periodic)
                self.leave_if_stray()
            took = (clock() - start) * 1000
            if periodic and not self.fork:
                check_at = clock() + 1.0
                why = self.wants_replacement()
                if why:
                    resp["replace"] = why
            scores = resp.get("scores")
            if len(resp) == 2 and scores is not None and len(scores) == 1 and resp["class"] == "ok" and self.metric in scores:
                data = (fast % (rid, took, scores[self.metric])).encode()
            else:
                data = self.encode(resp, rid, took)
            # The end marker goes to fd 2 before the response goes to fd 4:
            # once Go has the response, everything written below Python for
            # this request is in the output pipe, up to the marker.
            write(2, END_MARKER % rid)
            write_all(RESP_FD, data)

    def zygote(self, req, requests):
        """Forks a child per grader variant (a mutant) and waits for it.

        The child loads the variant's source over this process's loaded
        interpreter and grader imports, answers "ready" or "load_error", and
        serves requests until {"op": "end"}. After each child this process
        answers {"op": "ended"} with how the child ended, and from then on
        takes nothing but another fork: anything else means requests meant
        for a child that died are still in the pipe, and it exits rather
        than answer them with the wrong grader.
        """
        if not self.fork:
            # Only the children run grader code from now on.
            faulthandler.unregister(signal.SIGUSR1)
            signal.signal(signal.SIGUSR1, signal.SIG_IGN)
        # A child forked ahead holds this process's grader, not a variant's.
        self.drop_spare_child()
        while True:
            try:
                source = binascii.a2b_base64(req["source"])
            except Exception:
                os._exit(1)
            pid = self.own(os.fork)
            if pid == 0:
                self.variant(source, requests)
            _, status, usage = os.wait4(pid, 0)
            died = {"maxrss_kb": usage.ru_maxrss}
            if os.WIFSIGNALED(status):
                died["signal"] = os.WTERMSIG(status)
            elif os.WIFEXITED(status):
                died["status"] = os.WEXITSTATUS(status)
            write_response({"op": "ended", "died": died})
            req = self.next_fork(requests)
            if req is None:
                return

    def next_fork(self, requests):
        """Reads up to the next fork request, after a child ended.

        Requests Go sent to a child that died before reading them are still
        in the pipe, maybe the last one cut short: they are skipped (this
        process never answers a request), and Go starts the fork request
        that follows them on a line of its own. Anything but a request or a
        fork ("end" included: the child it was for is gone) ends the
        process. None: the pipe closed.
        """
        while True:
            line = requests.readline()
            if not line:
                return None
            try:
                req = loads_json(line)
            except Exception:
                continue  # a request cut short, and the newline ending it
            if type(req) is not dict:
                os._exit(1)
            if req.get("op") == "fork":
                return req
            if "op" in req or "id" not in req:
                os._exit(1)

    def variant(self, source, requests):
        """The child of zygote: becomes the worker of source. Never returns."""
        try:
            self.exiting = []  # the zygote's children, not this process's
            if not self.fork:
                dump_stack_on(signal.SIGUSR1)
            self.capture.reset()
            err = self.load(source)
            self.leave_if_stray()
            out, cut = self.capture.take()
            if err is not None:
                err.update({"op": "load_error", "output": out, "output_cut": cut})
                write_response(err)
                return
            if self.fork:
                gc.freeze()
            self.cases = 0
            self.base_rss_kb = rss_kb()
            write_response(ready_message(self))
            self.serve(requests)
        finally:
            os._exit(0)

    def encode(self, resp, rid, took):
        resp["id"] = rid
        resp["t"] = round(took, 4)
        if not resp.get("output") and not resp.get("output_cut"):
            resp.pop("output", None)
            resp.pop("output_cut", None)
        data = (_encode_response(resp) + "\n").encode("utf-8")
        if len(data) - len(resp.get("output", "")) * 6 > RESULT_LIMIT * max(1, len(resp.get("results") or ())):
            # Only scores can make it this long (the judge and the message
            # are cut): Go would refuse the line.
            data = (_encode_response({
                "id": rid, "t": resp["t"], "output": resp.get("output", ""), "output_cut": resp.get("output_cut", 0),
                "class": "invalid_return",
                "message": "the grader's result is %d bytes of JSON, past gradegate's limit of %d" % (len(data), RESULT_LIMIT),
            }) + "\n").encode("utf-8")
        return data


def ready_message(worker):
    """The answer to init once the grader loaded; "ctx" says its grade
    takes ctx, so Go serves model calls for its requests."""
    msg = {"op": "ready", "pid": os.getpid()}
    if worker.ctx is not None:
        msg["ctx"] = True
    return msg


def preload(names):
    """Imports, in a zygote, the standard-library modules Go names (those of
    its list the grader imports), so that each variant's child finds them
    loaded instead of importing them again. A name is imported only when the
    interpreter's own library answers for it and every package above it: a
    file of the repository's that shadows one is never run here. A module
    that does not import is left to the variant, which meets the error."""
    import importlib.util
    stdlib = os.path.dirname(os.__file__) + os.sep
    for name in names:
        if type(name) is not str:
            continue
        parts = name.split(".")
        for k in range(1, len(parts) + 1):
            prefix = ".".join(parts[:k])
            if prefix in sys.modules:
                continue
            try:
                spec = importlib.util.find_spec(prefix)
                origin = getattr(spec, "origin", None) or ""
                own = origin in ("built-in", "frozen") or (
                    origin.startswith(stdlib) and not origin.startswith(os.path.join(stdlib, "site-packages"))
                    and not origin.startswith(os.path.join(stdlib, "dist-packages")))
                if not own:
                    break
                __import__(prefix)
            except Exception:
                break


def main():
    if not getattr(sys.flags, "safe_path", False) and sys.path[:1] == [""]:
        # Before Python 3.11 there is no -P: the working directory leaves
        # sys.path here, as -P would have kept it off.
        del sys.path[0]
    requests = open(REQ_FD, "rb", buffering=1 << 16)
    init = loads_json(requests.readline())
    worker = Worker(init)
    if worker.memory_mb and init.get("set_rlimit_as"):
        # Second belt: the sandbox launcher owns limits, but when it did not
        # apply RLIMIT_AS (--unsandboxed, or a host that refuses it) a grader
        # would otherwise grow until the host's OOM killer picks a victim.
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
    # The hook names sandbox refusals (network_denied) and notices processes
    # the grader starts, which is when leftover children are looked for.
    worker.network_denied = bool(init.get("network_denied"))
    worker.unix_denied = worker.network_denied and unix_sockets_refused()
    sys.addaudithook(worker.audit)
    try:
        worker.devnull = os.open(os.devnull, os.O_RDWR)
    except OSError:
        pass  # forked grader children then get the pipes closed instead
    os.register_at_fork(after_in_child=worker.forked)
    if init.get("pristine"):
        # A process to fork grader variants from (zygote): it loads none
        # itself, so each variant's child starts from this state.
        preload(init.get("preload") or ())
        if worker.fork:
            gc.freeze()
        write_response({"op": "ready", "pid": os.getpid()})
        worker.serve(requests)
        return
    err = worker.load(binascii.a2b_base64(init["source"]))
    worker.leave_if_stray()
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
        # Objects that exist now never move to a collected generation, so a
        # child's garbage collection does not touch (and copy) their pages.
        gc.freeze()
    worker.base_rss_kb = rss_kb()
    write_response(ready_message(worker))
    worker.serve(requests)


main()
