#!/usr/bin/env python3
"""Run mpi4py's test suite under RailMPI's mpiexec with several rank counts and compare
the failures with tests/mpi4py/known_failures.txt.

For each rank count the suite runs as one job (driver.py on every rank). When the job
ends early (a test crashed a rank, or hung past the per-test timeout), the test it was
in is recorded as "crash" or "hang" and the job is started again without it and without
every test already finished, so one bad test hides nothing after it.

Verdict: exit 0 when every failing test (fail, error, crash, hang) is listed for that
rank count in the known-failures file, 1 otherwise. Listed tests that no longer fail
are printed so the list shrinks. --update rewrites the file from this run.
"""
import argparse
import collections
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import time

BAD = ("fail", "error", "crash", "hang")
HEADER = """\
# mpi4py tests that fail on RailMPI, written by tests/mpi4py/run.sh --update-known and
# then edited by hand (reasons; skip lines). One test a line:
#     fail|skip  TEST_ID  RANKS  REASON
# TEST_ID is module.Class.method (fnmatch patterns allowed; module.<import> is a test
# module that failed to import, module.Class.setUpClass a fixture); RANKS is "*" or a
# comma list of the rank counts (1,2,4) it fails with. "fail" tests still run and must
# fail in a listed way or pass; "skip" tests are not run at all: they hang or crash the
# process, which would cost a timeout or a restart of the job each time.
# The reason names the missing MPI function (from the mpi4py .pyx line that called it)
# or the bug. The goal is an empty list.
"""


class Entry:
    def __init__(self, kind, pattern, ranks, reason):
        self.kind, self.pattern, self.ranks, self.reason = kind, pattern, ranks, reason

    def applies(self, test_id, n):
        return (self.ranks is None or n in self.ranks) and fnmatch.fnmatchcase(test_id, self.pattern)


def read_known(path):
    entries = []
    if not os.path.exists(path):
        return entries
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 3)
            if len(parts) < 3 or parts[0] not in ("fail", "skip"):
                sys.exit(f"{path}:{lineno}: expected 'fail|skip TEST_ID RANKS REASON', got: {line}")
            ranks = None if parts[2] == "*" else {int(x) for x in parts[2].split(",")}
            entries.append(Entry(parts[0], parts[1], ranks, parts[3] if len(parts) > 3 else ""))
    return entries


def read_rank_logs(outdir):
    """{rank: (finished {id: event}, unfinished id or None, reached end)}"""
    ranks = {}
    for name in os.listdir(outdir):
        m = re.match(r"rank(\d+)\.jsonl$", name)
        if not m:
            continue
        done, current, end = {}, None, False
        with open(os.path.join(outdir, name), encoding="utf-8") as f:
            for line in f:
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue  # a line cut by a crash
                if ev["ev"] == "start":
                    current = ev["id"]
                elif ev["ev"] == "stop":
                    done[ev["id"]] = ev
                    if ev["id"] == current:
                        current = None
                elif ev["ev"] == "end":
                    end = True
        ranks[int(m.group(1))] = (done, current, end)
    return ranks


def first_line(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.strip():
                    return line.strip()
    except OSError:
        pass
    return ""


def run_ranks(args, n, skips, outroot):
    """All attempts for one rank count. Returns ({id: {rank: event}}, seconds, attempts)."""
    results = collections.defaultdict(dict)
    skip_always = [e.pattern for e in skips if e.ranks is None or n in e.ranks]
    resume = set()
    t0 = time.monotonic()
    attempt = 0
    for attempt in range(1, args.max_attempts + 1):
        adir = os.path.join(outroot, f"n{n}", f"attempt{attempt}")
        shutil.rmtree(adir, ignore_errors=True)
        os.makedirs(adir)
        skipfile = os.path.join(adir, "skip.txt")
        with open(skipfile, "w", encoding="utf-8") as f:
            f.write("\n".join(skip_always + sorted(resume)) + "\n")
        cmd = [args.mpiexec, "--timeout", str(args.job_timeout), "-n", str(n), args.python,
               args.driver, args.testdir, adir, "--skip", skipfile, *args.main_args]
        env = dict(os.environ, M4P_TEST_TIMEOUT=str(args.test_timeout), PYTHONUNBUFFERED="1")
        with open(os.path.join(adir, "job.log"), "w", encoding="utf-8") as log:
            log.write(" ".join(cmd) + "\n")
            log.flush()
            rc = subprocess.call(cmd, cwd=args.srcdir, stdout=log, stderr=subprocess.STDOUT, env=env)
        logs = read_rank_logs(adir)
        progress = False
        for rank, (done, _cur, _end) in logs.items():
            for tid, ev in done.items():
                results[tid][rank] = ev
                if tid not in resume:
                    resume.add(tid)
                    progress = True
        if rc == 0 and len(logs) == n and all(end for _d, _c, end in logs.values()):
            break
        # The job ended early: blame the test(s) a rank was in when it hung or died.
        culprits = {}
        for rank, (_done, cur, _end) in sorted(logs.items()):
            hang = first_line(os.path.join(adir, f"rank{rank}.hang"))
            crash = first_line(os.path.join(adir, f"rank{rank}.crash"))
            if cur and (hang or crash):
                culprits.setdefault(cur, []).append((rank, "hang" if hang else "crash", hang or crash))
        if not culprits:  # no rank says why (killed, mpiexec timeout): every unfinished test
            for rank, (_done, cur, _end) in sorted(logs.items()):
                if cur:
                    culprits.setdefault(cur, []).append((rank, "crash", f"job ended (mpiexec exit {rc})"))
        for tid, who in culprits.items():
            for rank, kind, text in who:
                results[tid][rank] = {"id": tid, "status": kind, "why": f"rank {rank}: {text}", "dur": 0}
            resume.add(tid)
            progress = True
        where = ", ".join(f"{tid} ({who[0][1]} on rank {who[0][0]})" for tid, who in culprits.items())
        print(f"  n={n} attempt {attempt}: job ended early (exit {rc}) in {where or 'no test'}; "
              f"see {os.path.join(adir, 'job.log')}", flush=True)
        if not progress:
            print(f"  n={n}: no progress, giving up on the remaining tests", flush=True)
            break
    return results, time.monotonic() - t0, attempt


def overall(per_rank):
    """Worst status over the ranks, and the reason of the lowest rank that has it."""
    order = {"crash": 5, "hang": 4, "error": 3, "fail": 2, "xpass": 1}
    rank, ev = max(sorted(per_rank.items()), key=lambda kv: order.get(kv[1]["status"], 0))
    return ev["status"], ev.get("why", "")


def short_reason(status, why):
    m = re.match(r"(?:\(.*?\) )?(P?MPI_[\w|]+): (import: )?mpi4py\.MPI\.Exception: MPI_ERR_UNSUPPORTED_OPERATION", why)
    if m:
        return f"{m.group(1)} unsupported" + (" (the test module fails to import)" if m.group(2) else "")
    if status in ("crash", "hang"):
        return f"{status}: {why}"
    return why


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--python", required=True)
    ap.add_argument("--srcdir", required=True, help="unpacked mpi4py sdist (its test/ is run)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--known", required=True)
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--test-timeout", type=int, default=60)
    ap.add_argument("--job-timeout", type=int, default=420)
    ap.add_argument("--max-attempts", type=int, default=12)
    ap.add_argument("--show", type=int, default=40, help="new failures printed per rank count")
    ap.add_argument("--update", action="store_true", help="rewrite the known-failures file")
    ap.add_argument("main_args", nargs="*", help="extra options for mpi4py's test/main.py")
    args = ap.parse_args()
    args.driver = os.path.join(os.path.dirname(os.path.abspath(__file__)), "driver.py")
    args.testdir = os.path.join(os.path.abspath(args.srcdir), "test")
    args.out = os.path.abspath(args.out)
    # the ranks run in the sdist: relative paths given here must not move with them
    for name in ("mpiexec", "python"):
        path = getattr(args, name)
        if os.sep in path:
            setattr(args, name, os.path.abspath(path))

    known = read_known(args.known)
    skips = [e for e in known if e.kind == "skip"]
    rank_counts = [int(x) for x in args.ranks.split(",")]
    failing = collections.defaultdict(dict)  # id -> {n: (status, reason)}
    bad_total, fixed_total, rows = 0, 0, []
    for n in rank_counts:
        results, secs, attempts = run_ranks(args, n, skips, args.out)
        counts = collections.Counter()
        new, fixed = [], []
        for tid in sorted(results):
            status, why = overall(results[tid])
            counts[status] += 1
            rows.append(f"{n}\t{tid}\t{status}\t{why}")
            listed = [e for e in known if e.applies(tid, n)]
            if status in BAD:
                failing[tid][n] = (status, short_reason(status, why))
                if not listed:
                    new.append(f"{tid}: {status}: {why}")
            elif any(e.kind == "fail" for e in listed):
                fixed.append(tid)
        print(f"mpi4py n={n}: {len(results)} tests in {secs:.1f} s ({attempts} job(s)): "
              + ", ".join(f"{counts[s]} {s}" for s in ("ok", "skip", "fail", "error", "crash", "hang",
                                                        "xfail", "xpass") if counts[s]), flush=True)
        for line in ([] if args.update else new[:args.show]):
            print(f"  NEW FAILURE n={n}: {line}")
        if len(new) > args.show and not args.update:
            print(f"  ... and {len(new) - args.show} more new failures (all in results.tsv)")
        for tid in fixed[:args.show]:
            print(f"  now passes (remove from {os.path.basename(args.known)} for n={n}): {tid}")
        if len(fixed) > args.show:
            print(f"  ... and {len(fixed) - args.show} more listed tests that now pass")
        bad_total += len(new)
        fixed_total += len(fixed)
    with open(os.path.join(args.out, "results.tsv"), "w", encoding="utf-8") as f:
        f.write("ranks\ttest\tstatus\twhy\n" + "\n".join(rows) + "\n")
    # The map of what is missing: failing tests (any rank count) per reason.
    by_reason = collections.Counter()
    for tid, per_n in failing.items():
        by_reason[per_n[min(per_n)][1]] += 1
    with open(os.path.join(args.out, "by_reason.txt"), "w", encoding="utf-8") as f:
        for why, k in by_reason.most_common():
            f.write(f"{k:5d}  {why}\n")
    print(f"failing tests by reason (first reason seen; {len(by_reason)} reasons, all in by_reason.txt):")
    for why, k in by_reason.most_common(args.show):
        print(f"  {k:5d}  {why[:160]}")

    if args.update:
        old = {e.pattern: e for e in known if e.kind == "fail"}
        lines = [HEADER]
        for e in skips:
            lines.append(f"skip {e.pattern} {'*' if e.ranks is None else ','.join(map(str, sorted(e.ranks)))} {e.reason}")
        for tid in sorted(failing):
            if any(e.applies(tid, n) for e in skips for n in failing[tid]):
                continue
            ns = sorted(failing[tid])
            rk = "*" if ns == sorted(rank_counts) else ",".join(map(str, ns))
            reason = old[tid].reason if tid in old and old[tid].reason else failing[tid][ns[0]][1]
            # a test that hung or crashed costs a timeout or a restart every run: skip it
            kind = "skip" if any(failing[tid][n][0] in ("hang", "crash") for n in ns) else "fail"
            lines.append(f"{kind} {tid} {rk} {reason}")
        with open(args.known, "w", encoding="utf-8") as f:
            f.write("\n".join(lines).rstrip("\n") + "\n")
        print(f"rewrote {args.known}: {len(failing)} failing tests")
        return 0
    print(f"mpi4py: {bad_total} new failure(s), {fixed_total} listed failure(s) now pass; "
          f"details in {os.path.join(args.out, 'results.tsv')}")
    return 1 if bad_total else 0


if __name__ == "__main__":
    sys.exit(main())
