"""One rank of an mpi4py test-suite run.

Runs mpi4py's own test/main.py (its discovery and its -x/-e/-i options) with a result
class that appends one JSON line per event to OUTDIR/rank<R>.jsonl as it happens, so a
rank that crashes or hangs still leaves everything it finished and the test it was in.
A test running longer than M4P_TEST_TIMEOUT seconds (default 60) has its Python stacks
written to OUTDIR/rank<R>.hang and ends the rank; a fatal signal writes
OUTDIR/rank<R>.crash. Must run with the unpacked sdist as working directory, so that
tracebacks show the src/mpi4py/MPI.src/*.pyx line that called MPI: the "why" of a
failure names that MPI function.

usage: python driver.py TESTDIR OUTDIR [--skip FILE] [main.py options...]
  FILE: test ids or fnmatch patterns (module.Class.method), one a line, not run.
"""
import fnmatch
import faulthandler
import json
import os
import re
import sys
import time
import traceback
import unittest

def setup():
    global testdir, outdir, srcroot, args, skip_ids, skip_pats, timeout, rank, m4p_main
    global log, crash_file, hang_file
    testdir, outdir = sys.argv[1], sys.argv[2]
    srcroot = os.path.dirname(os.path.abspath(testdir))
    args = sys.argv[3:]
    skip_ids, skip_pats = set(), []
    if args[:1] == ["--skip"]:
        with open(args[1], encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if line:
                    (skip_pats.append(line) if any(c in line for c in "*?[") else skip_ids.add(line))
        args = args[2:]
    timeout = float(os.environ.get("M4P_TEST_TIMEOUT", "60"))
    rank = int(os.environ.get("PMI_RANK", "0"))
    sys.path.insert(0, testdir)
    sys.dont_write_bytecode = True
    import main as m4p_main  # mpi4py's test/main.py

    os.makedirs(outdir, exist_ok=True)
    log = open(os.path.join(outdir, f"rank{rank}.jsonl"), "a", encoding="utf-8")
    crash_file = open(os.path.join(outdir, f"rank{rank}.crash"), "w", encoding="utf-8")
    hang_file = open(os.path.join(outdir, f"rank{rank}.hang"), "w", encoding="utf-8")
    faulthandler.enable(file=crash_file, all_threads=True)


def emit(**ev):
    log.write(json.dumps(ev) + "\n")
    log.flush()


def test_id(test):
    """module.Class.method, also for fixture errors and modules that failed to import."""
    tid = test.id()
    m = re.match(r"(\w+) \((.+)\)$", tid)  # "setUpClass (test_x.TestY)"
    if m:
        return f"{m.group(2)}.{m.group(1)}"
    if tid.startswith("unittest.loader._FailedTest."):
        return tid.rsplit(".", 1)[1] + ".<import>"
    return tid


_sources = {}


def pyx_line(filename, lineno):
    """A line of mpi4py's Cython sources in the sdist (tracebacks name them relative to
    its root; linecache would resolve that against whatever the working directory is)."""
    if filename not in _sources:
        try:
            with open(os.path.join(srcroot, filename), encoding="utf-8") as f:
                _sources[filename] = f.read().splitlines()
        except OSError:
            _sources[filename] = []
    lines = _sources[filename]
    # a call may span lines: take the line and the next two
    return " ".join(lines[lineno - 1:lineno + 2]) if 0 < lineno <= len(lines) else ""


def mpi_call(err):
    """The MPI function in the innermost mpi4py (.pyx/.pxi) source line of the traceback."""
    etype, value, tb = err
    frames = traceback.extract_tb(tb, limit=None)
    pyx = [(f.filename, f.lineno) for f in frames if f.filename.endswith((".pyx", ".pxi"))]
    if issubclass(etype, ImportError):  # a test module that failed to import: its text has the traceback
        pyx += [(m[0], int(m[1])) for m in re.findall(r'File "([^"]+\.p(?:yx|xi))", line (\d+)', str(value))]
    if not pyx:
        return ""
    call = re.compile(r"\b(P?MPI_[A-Z][A-Za-z0-9_]*)\s*\(")
    calls = call.findall(pyx_line(*pyx[-1]))
    if calls:
        return calls[0]
    # Cython caches traceback code objects by line number alone, so a frame may carry the
    # file and function name of another one at the same line: try every source file there,
    # preferring the one whose enclosing def the calling Python line names.
    lineno = pyx[-1][1]
    caller = next((f.line or "" for f in reversed(frames) if f.filename.endswith(".py")), "")
    found = []
    for name in sorted(os.listdir(os.path.join(srcroot, "src", "mpi4py", "MPI.src"))):
        rel = os.path.join("src", "mpi4py", "MPI.src", name)
        calls = call.findall(pyx_line(rel, lineno)) if name.endswith((".pyx", ".pxi")) else []
        if calls:
            lines = _sources[rel][:lineno]
            defs = [m.group(1) for ln in reversed(lines) for m in [re.match(r"\s*c?p?def\s+(?:\w+\s+)?(\w+)\s*\(", ln)] if m]
            found.append((defs[0] if defs else "", calls[0]))
    named = [c for d, c in found if d and re.search(rf"\b{re.escape(d)}\b", caller)]
    if len(named) == 1 or len(found) == 1:
        return (named or [found[0][1]])[0]
    return "|".join(sorted({c for _d, c in found}))


def reason(err):
    etype, value, _tb = err
    text = "".join(traceback.format_exception_only(etype, value)).strip()
    last = text.splitlines()[-1] if text else etype.__name__
    if issubclass(etype, ImportError) and "Failed to import test module" in text:
        last = "import: " + text.splitlines()[-1]
    call = mpi_call(err)
    return (f"{call}: {last}" if call else last)[:400]


class Result(unittest.TextTestResult):
    _final = None

    def startTest(self, test):
        self._t0 = time.monotonic()
        self._bad = None
        self._final = None
        emit(ev="start", id=test_id(test))
        hang_file.seek(0)
        faulthandler.dump_traceback_later(timeout, exit=True, file=hang_file)
        super().startTest(test)

    def _note(self, status, why=""):
        if status in ("fail", "error"):
            if self._bad is None:
                self._bad = (status, why)
        else:
            self._final = (status, why)

    def stopTest(self, test):
        faulthandler.cancel_dump_traceback_later()
        super().stopTest(test)
        status, why = self._bad or self._final or ("ok", "")
        emit(ev="stop", id=test_id(test), status=status, why=why,
             dur=round(time.monotonic() - self._t0, 3))

    def addSuccess(self, test):
        super().addSuccess(test)
        self._note("ok")

    def addError(self, test, err):
        super().addError(test, err)
        if not hasattr(test, "_testMethodName"):  # setUpClass/setUpModule error: no start/stop
            emit(ev="stop", id=test_id(test), status="error", why=reason(err), dur=0)
            return
        self._note("error", reason(err))

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._note("fail", reason(err))

    def addSkip(self, test, why):
        super().addSkip(test, why)
        self._note("skip", why)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._note("xfail")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._note("xpass")

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            failed = issubclass(err[0], test.failureException)
            self._note("fail" if failed else "error", f"{subtest._subDescription()} {reason(err)}")


class Runner(unittest.TextTestRunner):
    resultclass = Result


def run():
    if skip_ids or skip_pats:
        _names = m4p_main.TestLoader.getTestCaseNames

        def getTestCaseNames(self, cls):
            prefix = f"{cls.__module__}.{cls.__qualname__}."

            def keep(name):
                full = prefix + name
                return full not in skip_ids and not any(fnmatch.fnmatchcase(full, p) for p in skip_pats)

            return [n for n in _names(self, cls) if keep(n)]

        m4p_main.TestLoader.getTestCaseNames = getTestCaseNames

    emit(ev="begin", t=time.time())
    try:
        m4p_main.main(module=None, argv=["main.py", *args], testRunner=Runner)
    except SystemExit:
        pass
    emit(ev="end", t=time.time())
    log.close()
    # The verdict is the harness's, from the JSON lines; a non-zero exit here would make
    # mpiexec end ranks that are still finishing their last tests.
    sys.exit(0)


# mpi4py.futures workers (test_util_pool spawns them) run the parent's main module by path
# under another name to find its functions: the driver itself must not run again there.
# They find the test modules (the functions they run live there) in the sdist's test/
# directory, the working directory mpiexec gives them.
if __name__ == "__main__":
    setup()
    run()
elif os.path.isdir("test"):
    sys.path.insert(0, os.path.abspath("test"))
