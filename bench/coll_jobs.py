#!/usr/bin/env python3
"""Per-job figures of bench/coll.c for RailMPI, Open MPI and MPICH, alternating, with what
each job ran on (docs/results/coll.md run 36).

Every job runs coll with -P (one "# probe" line per rank: the buffers' transparent huge
pages and physical frames, CPUs, migrations, switches, the job's own memcpy and
process_vm_readv speed over the same buffers); linert before and after each job. One JSON
line per job (mpi, rep, linert, latencies, probes) to --out, and a table per row.

  bench/coll_jobs.py --np 2 --reps 10 --sizes 1048576,4194304 --colls allgather,alltoall \\
      [--only railmpi,openmpi] [--coll-args '-H huge'] [--out FILE]

Reference binaries: BUILD/bench/ref/coll.{openmpi,mpich} (bench/coll_compare.sh builds
them; built here when missing). Run it under rmpi-timed.
"""
import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)


def linert(build):
    lr = os.path.join(build, "bench", "linert")
    try:
        out = subprocess.run([lr if os.access(lr, os.X_OK) else "linert", "-n", "9000"], capture_output=True,
                             text=True, timeout=20).stdout
        return float(re.findall(r'"rt_ns":([0-9.]+)', out)[-1])
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--sizes", default="1048576,4194304")
    ap.add_argument("--colls", default="allgather,alltoall")
    ap.add_argument("--only", default="railmpi,openmpi,mpich")
    ap.add_argument("--build", default=os.path.join(root, "build"))
    ap.add_argument("--coll-args", default="",
                    help="more arguments for coll (every MPI); several sets split by '|' each run as a "
                         "column of its own in every round, e.g. '|-H huge'")
    ap.add_argument("--rmpi-env", default="", help="VAR=VAL ... for RailMPI's ranks")
    ap.add_argument("--ompi-env", default="",
                    help="VAR=VAL ... for the ranks of the column openmpi+env (--only ...,openmpi+env)")
    ap.add_argument("--out")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    ref = os.path.join(build, "bench", "ref")
    os.makedirs(ref, exist_ok=True)
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    src = os.path.join(here, "coll.c")
    mpis = a.only.split(",")
    for m, cc in (("openmpi", "mpicc.openmpi"), ("mpich", "mpicc.mpich")):
        exe = os.path.join(ref, "coll." + m)
        if any(x.split("+")[0] == m for x in mpis) and (not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src)):
            subprocess.run([cc, "-std=c11", "-O2", "-g", "-Wall", "-Wextra", "-o", exe, src], check=True)
    base = ["-s", a.sizes, "-c", a.colls, "-P"]
    variants = [shlex.split(v) for v in a.coll_args.split("|")]
    cols = [(m, v) for m in mpis for v in range(len(variants))]
    tag = lambda m, v: m + ("" if len(variants) == 1 else "[" + " ".join(variants[v]) + "]")
    env_r, env_o = shlex.split(a.rmpi_env), shlex.split(a.ompi_env)
    launch = {
        "railmpi": [os.path.join(build, "bin", "mpiexec"), "-n", str(a.np)] +
                   (["env"] + env_r if env_r else []) + [os.path.join(build, "bench", "coll")],
        "openmpi": ["mpirun.openmpi", "-n", str(a.np), "--mca", "pml", "ob1", "--mca", "btl", "self,vader",
                    os.path.join(ref, "coll.openmpi")],
        "openmpi+env": ["mpirun.openmpi", "-n", str(a.np), "--mca", "pml", "ob1", "--mca", "btl", "self,vader", "env"] +
                       env_o + [os.path.join(ref, "coll.openmpi")],
        "mpich": ["mpiexec.mpich", "-n", str(a.np), os.path.join(ref, "coll.mpich")],
    }
    out = a.out or os.path.join(build, "bench", "results", time.strftime("colljobs-%Y%m%d-%H%M%S.jsonl"))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    thp = {k: open("/sys/kernel/mm/transparent_hugepage/" + k).read().strip() for k in ("enabled", "defrag")}
    jobs = []
    with open(out, "w") as f:
        f.write(json.dumps({"meta": "coll_jobs", "date": time.strftime("%Y-%m-%d %H:%M:%S"),
                            "load": open("/proc/loadavg").read().split()[:3], "thp": thp, "args": base,
                            "variants": variants,
                            "rmpi_env": env_r, "ompi_env": env_o}) + "\n")
        for rep in range(a.reps):
            # alternate the order every round so neither MPI always follows the other
            order = cols if rep % 2 == 0 else cols[::-1]
            for mpi, v in order:
                m = tag(mpi, v)
                lb = linert(build)
                t0 = time.strftime("%H:%M:%S")
                p = subprocess.run(launch[mpi] + base + variants[v], capture_output=True, text=True, timeout=300)
                la = linert(build)
                lat, probes, sets = {}, [], {}
                for line in p.stdout.splitlines():
                    if line.startswith("{"):
                        d = json.loads(line)
                        if "lat_us" in d:
                            lat[f'{d["coll"]} {d["size"]}'] = d["lat_us"]
                        elif "sets" in d:  # coll -S: two buffer sets, medians of set A and B
                            sets[f'{d["coll"]} {d["size"]}'] = d
                    elif line.startswith("# probe "):
                        probes.append(json.loads(line[8:]))
                probes.sort(key=lambda d: d["rank"])
                j = {"mpi": m, "rep": rep, "time": t0, "linert": [lb, la], "rc": p.returncode, "lat": lat,
                     "sets": sets, "probes": probes}
                if p.returncode:
                    j["stderr"] = p.stderr[-2000:]
                f.write(json.dumps(j) + "\n")
                f.flush()
                jobs.append(j)
                print(f"{t0} {m:8s} rep {rep} linert {lb}/{la} " +
                      " ".join(f'{k.split()[0][:6]}{int(k.split()[1]) >> 20}M A/B={d["median_us"][0]:.0f}/'
                               f'{d["median_us"][1]:.0f} ({d["b_below"]}/{d["rounds"]})' for k, d in sets.items()) +
                      " ".join(f"{k.split()[0][:6]}{int(k.split()[1]) >> 20}M={v:.0f}" for k, v in lat.items()) +
                      " | " + " ".join(f'r{q["rank"]}: cpy {q["memcpy_us"][0]:.0f}/{q["memcpy_us"][1]:.0f} '
                                       f'rdv {q["readv_us"][0]:.0f}/{q["readv_us"][1]:.0f} thp {q["thp_kb"]} '
                                       f'runs {q["frame_runs"]} cpus {q["cpus_seen"]} mig {q["migrations"]}'
                                       for q in probes), flush=True)
    rows = sorted({k for j in jobs for k in j["lat"]}, key=lambda k: (k.split()[0], int(k.split()[1])))
    print(f"\nus per job, rounds in order; medians ({out})\n")
    for k in rows:
        meds = {m: statistics.median([j["lat"][k] for j in jobs if j["mpi"] == m and k in j["lat"]])
                for m in [tag(*c) for c in cols] if any(j["mpi"] == m and k in j["lat"] for j in jobs)}
        print(f"{k}: " + "; ".join(f"{m} {meds[m]:.0f} [" + " ".join(f'{j["lat"][k]:.0f}' for j in jobs
                                                                   if j["mpi"] == m and k in j["lat"]) + "]"
                                   for m in meds))


if __name__ == "__main__":
    sys.exit(main())
