#!/bin/sh
# bench/scalesim's RailMPI over libfabric between nodes (the ofi-* designs: RMPI_CHANNELS adaptive,
# dedicated, shared, every peer's kind chosen by the library's selector) at 2^10 and 2^16
# processes on 16-core nodes. What must hold, with bounds computed from the model's own inputs
# (the sizes each line reports and the library's defaults):
# - adaptive grows with the busy peers, not with the job: on stencil3d (6 busy peers at any N)
#   it dedicates exactly the 6 and, past the per-rank state, stays between the shared buffers
#   plus 6 of the smaller ring and the same plus 6 of the larger ring, 7 connections and 6
#   statistics columns, at both sizes;
# - the per-rank state past the peer table (the selector's arrays) is linear in N (bytes per
#   rank plus a constant under 8 KiB), and the provider's peer table holds its index (8 B per
#   chunk of ranks) and at most a chunk per busy peer: on stencil3d its chunks do not grow
#   with N (a flat table, n x 208 B, fails this), on alltoall it holds every remote peer;
# - on alltoall at 2^16 adaptive holds at most 2h rings (h in use, as many being given back)
#   and stays within the bound of the shared buffers, 2h rings, 2h + 1 connections and the
#   statistics table's bounded columns (max(64, 8h), rmpi_chan_default_sources: a process
#   hearing from every peer held a column per peer, 89 MB, before the bound), its statistics
#   within those columns, at least 100x below dedicated, whose rings grow with the job (a
#   ring per remote peer);
# - per-node (xrc) connections never cost more than rc per peer plus the one connectionless
#   endpoint, and shared holds no ring and only that endpoint.
# Usage: scalesim_internode.sh BUILD_DIR SOURCE_DIR
set -u
B=$1/bench/scalesim
[ -x "$B" ] || { echo "no $B"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for N in 1024 65536; do
    for p in stencil3d alltoall; do
        "$B" --design all --pattern $p --procs $N --cores 16 > "$T/$p.$N" || { echo "FAIL: scalesim $p $N"; exit 1; }
    done
done
python3 - "$T" <<'PY'
import json, math, sys
T = sys.argv[1]
res = {}
for p in ("stencil3d", "alltoall"):
    for n in (1024, 65536):
        for line in open(f"{T}/{p}.{n}"):
            r = json.loads(line)
            res[r["design"], p, n] = r
bad = []
def check(ok, what):
    if not ok:
        bad.append(what)

def sigma(n):
    # rmpi_chan_default_sigma: Table 2's (2048 up to 2^10, 2048 / ((log2 n - 10) * 2) above),
    # at most 16 intervals of 1 s / 50 ms slots
    lg = math.ceil(math.log2(n))
    return min(2048 if n <= 1024 else 2048 // ((lg - 10) * 2), 16 * 20)

def columns(n, h):
    # rmpi_chan_default_sources: max(64, 8h), at most one per peer
    return min(max(64, 8 * h), n - 1)

for n in (1024, 65536):
    a = res["ofi-adaptive", "stencil3d", n]
    busy = 6
    rmin, rmax = min(a["ofi_ring_bytes"], a["shm_ring_bytes"]), max(a["ofi_ring_bytes"], a["shm_ring_bytes"])
    base = a["shm_queue_bytes"] + a["rx_bytes"]
    rest = a["mem_per_proc_bytes"] - a["per_rank_bytes"]
    lo = base + busy * rmin
    hi = base + busy * rmax + (busy + 1) * a["qp_bytes"] + (busy + 1) * sigma(n) * 8 + 4096
    check(a["rings_shm"] + a["rings_ofi"] == busy and a["dedicated_peak"] == busy,
          f"stencil3d {n}: adaptive dedicated {a['rings_shm']} shm + {a['rings_ofi']} ofi rings "
          f"(peak {a['dedicated_peak']}), not its {busy} busy neighbours")
    check(lo <= rest <= hi, f"stencil3d {n}: adaptive without per-rank state {rest:.0f} outside [{lo:.0f}, {hi:.0f}]")
    print(f"stencil3d N={n}: adaptive {a['mem_per_proc_bytes']:.0f} B, per-rank {a['per_rank_bytes']:.0f}, "
          f"rest {rest:.0f} in [{lo:.0f}, {hi:.0f}]")
# the provider's peer table: index plus a chunk per block of ranks holding a peer talked to
peer, chunk = res["railmpi", "stencil3d", 1024]["ofi_peer_bytes"], res["railmpi", "stencil3d", 1024]["ofi_peer_chunk"]
for n in (1024, 65536):
    index = (n + chunk - 1) // chunk * 8
    for p, most in (("stencil3d", 6), ("alltoall", n // chunk)):
        for dz in ("ofi-adaptive", "ofi-dedicated", "ofi-shared"):
            t = res[dz, p, n]["peer_table_bytes"]
            held = (t - index) / (chunk * peer)
            check(held == int(held) and 1 <= held <= most,
                  f"{dz} {p} {n}: peer table {t:.0f} B is not the index {index} plus 1..{most} chunks of {chunk * peer}")
            if p == "alltoall":  # every remote peer talks: every chunk but this node's
                check(held == n // chunk - 1, f"{dz} alltoall {n}: {held} chunks, not one per remote block")
    print(f"peer table N={n}: stencil3d {res['ofi-adaptive', 'stencil3d', n]['peer_table_bytes']:.0f} B, "
          f"alltoall {res['ofi-adaptive', 'alltoall', n]['peer_table_bytes']:.0f} B (flat: {n * peer})")
# a fixed number of bytes per rank plus a constant: the selector's struct, its two shared
# columns (sink and spill, 20 bytes a row: the cell of n, bytes and b and their two running
# counts) and the idle polls' ring, sigma x (2 x 20 + 8) bytes: 15 KiB at 2^10,
# beside 224 KiB of per-rank state
pr = [res["ofi-adaptive", "stencil3d", n]["per_rank_bytes"] - res["ofi-adaptive", "stencil3d", n]["peer_table_bytes"]
      for n in (1024, 65536)]
per = (pr[1] - pr[0]) / (65536 - 1024)
const = [pr[0] - per * 1024, pr[1] - per * 65536]
check(pr[0] > 0 and all(0 <= c <= 16384 for c in const),
      f"per-rank state {pr} not linear from 2^10 to 2^16: {per:.1f} B per rank plus {const}")
print(f"per-rank state: {per:.1f} B per rank plus {const[0]:.0f} / {const[1]:.0f} B")

n = 65536
a, d, s = (res[x, "alltoall", n] for x in ("ofi-adaptive", "ofi-dedicated", "ofi-shared"))
h = a["h"]
rmax = max(a["ofi_ring_bytes"], a["shm_ring_bytes"])
cols = columns(n, h)
table_hi = cols * (sigma(n) * 20 + 4)  # a row: the seed's 8-byte cell with b, and two running counts
hi = (a["per_rank_bytes"] + a["shm_queue_bytes"] + a["rx_bytes"] + 2 * h * rmax + (2 * h + 1) * a["qp_bytes"]
      + table_hi + 4096)
check(0 < a["table_bytes"] <= table_hi, f"alltoall {n}: adaptive statistics {a['table_bytes']:.0f} B outside "
      f"(0, {table_hi}] ({cols} columns of {sigma(n)} slots)")
check(a["dedicated_peak"] <= 2 * h, f"alltoall {n}: adaptive peak {a['dedicated_peak']} rings above 2h = {2 * h}")
check(a["mem_per_proc_bytes"] <= hi, f"alltoall {n}: adaptive {a['mem_per_proc_bytes']:.0f} above {hi:.0f}")
check(d["rings_ofi"] >= n - 16 and d["rings_bytes"] >= (n - 16) * d["ofi_ring_bytes"],
      f"alltoall {n}: dedicated has {d['rings_ofi']} libfabric rings, not one per remote peer")
check(d["mem_per_proc_bytes"] > 50 * res["ofi-dedicated", "alltoall", 1024]["mem_per_proc_bytes"],
      "alltoall: dedicated does not grow with the job")
check(a["mem_per_proc_bytes"] * 100 < d["mem_per_proc_bytes"],
      f"alltoall {n}: adaptive {a['mem_per_proc_bytes']:.0f} not 100x below dedicated {d['mem_per_proc_bytes']:.0f}")
print(f"alltoall N={n}: adaptive {a['mem_per_proc_bytes']:.0f} B (bound {hi:.0f}, statistics "
      f"{a['table_bytes']:.0f} of {table_hi}), dedicated "
      f"{d['mem_per_proc_bytes']:.0f}, shared {s['mem_per_proc_bytes']:.0f}")
for (dz, p, n), r in res.items():
    if not dz.startswith("ofi-"):
        continue
    check(r["conn_xrc_bytes"] <= r["conn_rc_bytes"] + r["qp_bytes"] * 1.0001,
          f"{dz} {p} {n}: xrc connections {r['conn_xrc_bytes']} above rc {r['conn_rc_bytes']} + one endpoint")
    check(r["mem_per_proc_bytes"] <= r["bound_bytes"] * 1.0001, f"{dz} {p} {n}: above its bound")
    if dz == "ofi-shared":
        check(r["rings_bytes"] == 0 and abs(r["conn_xrc_bytes"] - r["qp_bytes"]) < 1,
              f"shared {p} {n}: rings {r['rings_bytes']} or connections {r['conn_xrc_bytes']}")
for line in bad:
    print("FAIL:", line)
print("scalesim ofi: ok" if not bad else "scalesim ofi: failed")
sys.exit(1 if bad else 0)
PY
