#!/usr/bin/env bash
# Site-aware collectives across a long link (seed infiniband-wan, Fig. 7): Bcast and
# Allreduce latency against size, 2 sites x 2 hosts x PPN ranks (tools/netlab up --sites
# 2x2, a LAN per site and one delayed link between them), RailMPI site-aware (the default: the map
# is measured at MPI_Init) next to flat (RMPI_COLL_SITES=0, the same map, today's
# algorithms). Root only (namespaces). One JSON line per measurement (bench/coll.c's) with
# "delay", "config" and "rep"; the configurations alternate within a repetition so that
# outside load hits both alike. Then a table of flat / site-aware per size.
#   bench/wan_coll.sh [--delay 1ms] [--sizes 1:4194304 | 1,1024,131072] [--reps N] [--lan 1gbit] [--wan 1gbit]
#                     [--colls bcast,allreduce] [--map block|cyclic] [--ppn N] [--tree] [--oblivious]
#                     [--split SIZE] [--chain SIZE] [--only LIST] [--refs] [--build DIR] [--out FILE]
# --map: block puts hosts nsA1,nsA2 first and nsB1,nsB2 after (ranks 0-1 on site A, 2-3 on B
# with one rank per host: a flat binomial tree from rank 0 then already crosses once);
# cyclic puts nsA1,nsB1,nsA2,nsB2 (flat trees cross twice). --ppn: ranks per host (default
# 1), consecutive ranks on a host, like a cluster's block placement (the paper: 2 per node).
# --tree adds a third configuration, site_tree: site-aware with RMPI_COLL_SITE_SPLIT=1g (every
# size through the site leaders' tree, as before the split algorithms).
# --split SIZE adds site_split: site-aware with RMPI_COLL_SITE_SPLIT_BCAST=SIZE (the split
# Bcast from SIZE bytes; 1: every size). --chain SIZE adds site_chain: RMPI_COLL_SITE_CHAIN_BCAST=SIZE (0: the tree at every size).
# --only LIST runs only these configurations (comma list of the names above, openmpi, mpich).
# --oblivious adds binomial: RMPI_COLL_SITES=0 with RMPI_COLL_BCAST=binomial, a binomial tree
# over all ranks that knows neither sites nor nodes (the paper's flat Bcast, Fig. 7; `flat`
# is node-aware and in block placement already crosses the long link once), and a second
# table of binomial / site-aware for Bcast. Its Allreduce is flat's (auto).
# --refs adds Open MPI (ob1, btl tcp on rail0; vader inside a host) and MPICH (ch4:ucx, UCX
# tcp on rail0; tcp on lo inside a host) on the same namespaces, built from the same
# bench/coll.c when mpicc.openmpi / mpicc.mpich exist, and a table of the faster of the two
# against RailMPI site-aware (ratio > 1: RailMPI faster).
# On a shared 2-core machine the figures are noisy: compare the ratios within one run.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
delay=1ms sizes=1:4194304 reps=1 lan=1gbit wan=1gbit colls=bcast,allreduce map=block ppn=1 tree=0 oblivious=0 refs=0 build=$root/build out=
split= chain= only=
usage="usage: $0 [--delay D] [--sizes MIN:MAX] [--reps N] [--lan RATE] [--wan RATE] [--colls LIST] [--map block|cyclic] [--ppn N] [--tree] [--oblivious] [--split SIZE] [--chain SIZE] [--only LIST] [--refs] [--build DIR] [--out FILE]"
while [ $# -gt 0 ]; do
  case $1 in
    --delay | --sizes | --reps | --lan | --wan | --colls | --map | --ppn | --split | --chain | --only | --build | --out)
      [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
      printf -v "${1#--}" %s "$2"; shift 2 ;;
    --tree) tree=1; shift ;;
    --oblivious) oblivious=1; shift ;;
    --refs) refs=1; shift ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "bench/wan_coll.sh: needs root (network namespaces)" >&2; exit 77; }
sizearg=-m # MIN:MAX doubling, or a comma list of sizes
case $sizes in *,*) sizearg=-s ;; esac
[[ $ppn =~ ^[1-9][0-9]?$ ]] || { echo "$usage (--ppn: 1..99)" >&2; exit 2; }
[[ -z $split || $split =~ ^[1-9][0-9]*[kmg]?$ ]] || { echo "$usage (--split: bytes, k/m/g)" >&2; exit 2; }
[[ -z $chain || $chain =~ ^[0-9]+[kmg]?$ ]] || { echo "$usage (--chain: bytes, k/m/g)" >&2; exit 2; }
splitsize=$split chainsize=$chain
order="nsA1 nsA2 nsB1 nsB2"
[ "$map" = cyclic ] && order="nsA1 nsB1 nsA2 nsB2"
hosts=$(printf "%s:$ppn," $order) hosts=${hosts%,}
netlab=$root/tools/netlab coll=$build/bench/coll
[ -x "$coll" ] || cmake --build "$build" --target bench_coll >/dev/null || exit 1
out=${out:-$build/bench/results/wan_coll-$(date +%Y%m%d-%H%M%S).jsonl}
mkdir -p "$(dirname "$out")" && : >"$out" && : >"$out.log"
# Open MPI refuses to start as root unless told both of these.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ref=$build/bench/ref refcfg=
if [ $refs = 1 ]; then
  mkdir -p "$ref"
  for m in openmpi mpich; do
    command -v "mpicc.$m" >/dev/null && "mpicc.$m" -std=c11 -O2 -o "$ref/coll.$m" "$here/coll.c" && refcfg+=" $m"
  done
  [ -n "$refcfg" ] || echo "bench/wan_coll.sh: --refs: neither mpicc.openmpi nor mpicc.mpich found" >&2
fi
# the lab's names are this run's own (the agent, started by mpiexec, reads them too)
export NETLAB_DELAYLINE=$build/bin/rmpi_delayline NETLAB_PREFIX=wcb$$-
trap '"$netlab" down >/dev/null 2>&1' EXIT
trap 'exit 143' TERM INT # so that a timeout's TERM still takes the lab down
"$netlab" up --sites 2x2 "$lan" "$wan@$delay" >/dev/null || { echo "netlab up --sites failed" >&2; exit 1; }
for rep in $(seq 1 "$reps"); do
  configs="site_aware flat"; [ $tree = 1 ] && configs+=" site_tree"; [ $oblivious = 1 ] && configs+=" binomial"
  [ -n "$splitsize" ] && configs+=" site_split"
  [ -n "$chainsize" ] && configs+=" site_chain"
  for config in $configs$refcfg; do
    [ -z "$only" ] || [[ ,$only, == *,$config,* ]] || continue
    sites=1 split=
    case $config in
      flat) sites=0 ;;
      site_tree) split="-genv RMPI_COLL_SITE_SPLIT 1g" ;;
      site_split) split="-genv RMPI_COLL_SITE_SPLIT_BCAST $splitsize" ;;
      site_chain) split="-genv RMPI_COLL_SITE_CHAIN_BCAST $chainsize" ;;
      binomial) sites=0 split="-genv RMPI_COLL_BCAST binomial" ;;
    esac
    case $config in
      openmpi)
        "$netlab" exec nsA1 timeout 180 mpirun.openmpi -np $((4 * ppn)) --host $hosts --bind-to none \
          --mca plm_rsh_agent "$netlab agent" --mca plm_rsh_no_tree_spawn 1 --mca oob_tcp_if_include ctl \
          --mca pml ob1 --mca btl self,vader,tcp --mca btl_tcp_if_include rail0 \
          "$ref/coll.openmpi" -c "$colls" $sizearg "$sizes" ;;
      mpich) # UCX's shared memory (sm, cma) joins processes of one machine across namespaces,
        # past the lab's links (a 4 MiB Bcast in 15 ms, nothing on rail0): tcp only, on lo
        # inside a host
        "$netlab" exec nsA1 timeout 180 mpiexec.mpich -n $((4 * ppn)) -hosts $hosts -launcher rsh \
          -launcher-exec "$netlab" -iface ctl -genv UCX_TLS tcp,self -genv UCX_NET_DEVICES "rail0$([ "$ppn" = 1 ] || echo ,lo)" \
          "$ref/coll.mpich" -c "$colls" $sizearg "$sizes" ;;
      *)
        "$netlab" exec nsA1 timeout 1200 "$build/bin/mpiexec" -n $((4 * ppn)) --host $hosts --agent "$netlab agent" \
          --pmi-iface ctl -genv RMPI_TCP_IFACES rail0 -genv RMPI_COLL_SITES $sites $split -genv RMPI_DEBUG 1 \
          "$coll" -c "$colls" $sizearg "$sizes" ;;
    esac 2>>"$out.log" |
      grep '^{"coll"' | sed "s/}\$/,\"delay\":\"$delay\",\"map\":\"$map\",\"ppn\":$ppn,\"config\":\"$config\",\"rep\":$rep}/" >>"$out"
  done
done
grep -h "sites (" "$out.log" | sort -u
# flat / site-aware (and flat / site_tree) per collective and size, medians over the repetitions
python3 - "$out" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
lat = {}
for r in rows:
    if "lat_us" in r:
        lat.setdefault((r["coll"], r["size"], r["config"]), []).append(r["lat_us"])
colls = sorted({k[0] for k in lat})
sizes = sorted({k[1] for k in lat})
alts = [a for a in ("site_aware", "site_tree", "site_split", "site_chain") if any(k[2] == a for k in lat)]
name = {"site_aware": "site-aware", "site_tree": "site tree", "site_split": "site split", "site_chain": "site chain"}
head = []
for c in colls:
    head.append(f"{c} flat us")
    for a in alts:
        head += [f"{c} {name[a]} us", "ratio"]
print("| bytes | " + " | ".join(head) + " |")
print("|---:|" + "---:|" * len(head))
for s in sizes:
    cells = []
    for c in colls:
        f = lat.get((c, s, "flat"))
        f = statistics.median(f) if f else None
        cells.append(f"{f:.0f}" if f else "-")
        for a in alts:
            x = lat.get((c, s, a))
            x = statistics.median(x) if x else None
            cells += [f"{x:.0f}" if x else "-", f"{f / x:.2f}" if f and x else "-"]
    print(f"| {s} | " + " | ".join(cells) + " |")
if any(k[2] == "binomial" and k[0] == "bcast" for k in lat):
    print()
    print("| bytes | bcast binomial over all ranks us | bcast site-aware us | ratio |")
    print("|---:|---:|---:|---:|")
    for s in sizes:
        b, a = lat.get(("bcast", s, "binomial")), lat.get(("bcast", s, "site_aware"))
        b = statistics.median(b) if b else None
        a = statistics.median(a) if a else None
        print(f"| {s} | " + (f"{b:.0f}" if b else "-") + " | " + (f"{a:.0f}" if a else "-") + " | "
              + (f"{b / a:.2f}" if a and b else "-") + " |")
for alt in [a for a in ("site_split", "site_chain") if any(k[2] == a for k in lat)]:
    med = lambda c, s, m: statistics.median(lat[(c, s, m)]) if lat.get((c, s, m)) else None
    f = lambda x: f"{x:.0f}" if x else "-"
    q = lambda a, b: f"{a / b:.2f}" if a and b else "-"
    print()
    a = alt.replace("_", " ")[5:]
    print(f"| coll | bytes | site tree (default) us | site {a} us | tree / {a} | Open MPI us | Open MPI / {a} | Open MPI / tree |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for c in colls:
        for s in sizes:
            t, p, o = med(c, s, "site_aware"), med(c, s, alt), med(c, s, "openmpi")
            print(f"| {c} | {s} | {f(t)} | {f(p)} | {q(t, p)} | {f(o)} | {q(o, p)} | {q(o, t)} |")
refs = [m for m in ("openmpi", "mpich") if any(k[2] == m for k in lat)]
if refs:
    med = lambda c, s, m: statistics.median(lat[(c, s, m)]) if lat.get((c, s, m)) else None
    print()
    print("| coll | bytes | RailMPI site-aware us | RailMPI flat us | Open MPI us | MPICH us | best other / site-aware |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for c in colls:
        for s in sizes:
            v = {m: med(c, s, m) for m in ("site_aware", "flat", "openmpi", "mpich")}
            best = min([v[m] for m in refs if v[m]], default=None)
            print(f"| {c} | {s} | " + " | ".join(f"{v[m]:.0f}" if v[m] else "-" for m in v) + " | "
                  + (f"{best / v['site_aware']:.2f}" if best and v["site_aware"] else "-") + " |")
EOF
echo "results: $out" >&2
