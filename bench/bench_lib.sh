# Sourced by compare.sh, coll_compare.sh and osc_compare.sh: result files, messages, the --only filter,
# the CPU busy share, building and running one benchmark for every MPI. The caller sets
# bench_name, build, out (may be empty) and only (and here, reps, launch for the last two).

# ref/ for the reference MPIs' binaries; out (JSON lines, default
# BUILD/bench/results/PREFIX-DATE.jsonl), md and log beside it, emptied.
bench_setup() {
    # Open MPI refuses to start as root unless told both of these.
    if [ "$(id -u)" = 0 ]; then
        export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    fi
    ref=$build/bench/ref
    mkdir -p "$ref"
    stamp=$(date +%Y%m%d-%H%M%S)
    [ -n "$out" ] || out=$build/bench/results/$1-$stamp.jsonl
    mkdir -p "$(dirname "$out")"
    out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
    md=${out%.jsonl}.md
    log=${out%.jsonl}.log
    : >"$out"
    : >"$log"
}

say() { echo "$bench_name: $*" >&2; }

# Is MPI $1 in the --only list (all when it is empty)?
wanted() {
    [ -z "$only" ] && return 0
    case ",$only," in *",$1,"*) return 0 ;; esac
    return 1
}

# Busy CPU share over one second now; the load average would still count our own last run.
cpu_busy() {
    local a b
    a=$(awk '/^cpu /{print $2+$3+$4+$7+$8, $5+$6}' /proc/stat)
    sleep 1
    b=$(awk '/^cpu /{print $2+$3+$4+$7+$8, $5+$6}' /proc/stat)
    echo "$a $b" | awk '{ busy = $3 - $1; all = busy + $4 - $2; print (all > 0 ? int(100 * busy / all) : 0) }'
}

# The meta line of a run: $1 the benchmark's name, $2 more JSON members (",\"k\":v..."):
# date, host, cores, the CPU busy share and load before it, the MPIs' versions; warns
# when the machine is busy.
bench_meta() {
    local busy load
    busy=$(cpu_busy)
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    echo "{\"meta\":\"$1\",\"date\":\"$stamp\",\"host\":\"$(hostname)\",\"cores\":$(nproc),\"busy_pct\":$busy,\"loadavg\":\"$load\"$2$versions}" >>"$out"
    [ "$busy" -lt 20 ] || say "warning: the CPUs are $busy% busy with other work (load $load); numbers will be noisy"
}

# Options "--NAME VALUE" into shell variables: bench_opts SCRIPT "name=var ..." "$@" (the
# caller defines usage). -h/--help prints usage and exits 0; an unknown option or one
# without its value prints usage and exits 2, naming it.
bench_opts() {
    local script=$1 spec=" $2 " opt var
    shift 2
    while [ $# -gt 0 ]; do
        case "$1" in -h | --help) usage; exit 0 ;; esac
        opt=${1#--}
        case "$1" in
            --*) case "$spec" in *" $opt="*) ;; *) opt="" ;; esac ;;
            *) opt="" ;;
        esac
        [ -n "$opt" ] || { echo "$script: unknown argument '$1'" >&2; usage >&2; exit 2; }
        [ $# -ge 2 ] || { echo "$script: $1 needs a value" >&2; usage >&2; exit 2; }
        var=${spec#*" $opt="}
        printf -v "${var%% *}" '%s' "$2"
        shift 2
    done
}

# Build bench/$1.c with MPICH's and Open MPI's wrappers into ref/ and RailMPI's through
# the cmake target bench, for those wanted and present: sets mpis (names) and versions
# (JSON members for the meta line).
bench_build_all() {
    local src=$1
    mpis=()
    versions=""
    if wanted mpich && command -v mpicc.mpich >/dev/null && command -v mpiexec.mpich >/dev/null; then
        say "building $src with mpicc.mpich"
        mpicc.mpich -std=c11 -O2 -g -Wall -Wextra -o "$ref/$src.mpich" "$here/$src.c"
        mpis+=(mpich)
        versions+=",\"mpich\":\"$(mpichversion 2>/dev/null | awk '/^MPICH Version/{print $3}')\""
    fi
    if wanted openmpi && command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null; then
        say "building $src with mpicc.openmpi"
        mpicc.openmpi -std=c11 -O2 -g -Wall -Wextra -o "$ref/$src.openmpi" "$here/$src.c"
        mpis+=(openmpi)
        versions+=",\"openmpi\":\"$(ompi_info --version 2>/dev/null | awk '/Open MPI/{print $3; exit}')\""
    fi
    if wanted railmpi; then
        if [ -f "$build/CMakeCache.txt" ]; then
            say "building RailMPI's $src (cmake target bench)"
            cmake --build "$build" --target bench >>"$log" 2>&1 || { say "building bench failed (see $log)"; exit 1; }
            mpis+=(railmpi)
        else
            say "RailMPI is not configured in $build; skipping it"
        fi
    fi
    [ ${#mpis[@]} -gt 0 ] || { say "no MPI to run"; exit 1; }
}

# The machine's state while a benchmark runs (docs/results/coll.md, "two states"), when the
# caller sets state=1: `linert` sampled every quarter second beside the run (6 ms each),
# every output line stamped with its time, and each JSON line given the state of the
# samples taken since the line before it ("state": fast, slow or mixed at 150 ns;
# "rt_ns": their range), so one row that fell into the slow state shows as such.
bench_linert() {
    local lr=$build/bench/linert
    [ -x "$lr" ] || lr=linert
    "$lr" -n 9000 | sed 's/.*"rt_ns":\([0-9.]*\).*/\1/'
}
bench_stamp() {
    local l
    while IFS= read -r l; do printf '%s %s\n' "$EPOCHREALTIME" "$l"; done
}
# $1 the samples ("time rt" lines), stdin the stamped output: the output, JSON lines tagged.
bench_state_tag() {
    awk -v thr=150 'NR == FNR { st[++ns] = $1; sv[ns] = $2; next }
        {
            t = $1; sub(/^[^ ]* /, "")
            if (substr($0, 1, 1) == "{") {
                lo = hi = ""
                for (i = 1; i <= ns; i++)
                    if (st[i] > prev && st[i] <= t) { if (lo == "" || sv[i] < lo) lo = sv[i]; if (hi == "" || sv[i] > hi) hi = sv[i] }
                if (lo == "")
                    for (i = 1; i <= ns && st[i] <= t; i++) lo = hi = sv[i]
                s = lo == "" ? "unknown" : hi < thr ? "fast" : lo >= thr ? "slow" : "mixed"
                sub(/^\{/, "{\"state\":\"" s "\",\"rt_ns\":\"" lo "-" hi "\",")
                prev = t
            }
            print
        }' "$1" -
}

# --wait STATE[:SECONDS] of the compare scripts: wait_state (slow or fast) and wait_max
# (seconds, default 300) from it; checked here, and state=1 set (every row tagged).
bench_wait_opt() {
    wait_state=${1%%:*}
    wait_max=300
    case "$1" in *:*) wait_max=${1#*:} ;; esac
    case "$wait_state" in slow | fast) ;; *) say "--wait: slow or fast, not '$wait_state'"; exit 2 ;; esac
    case "$wait_max" in '' | *[!0-9]*) say "--wait: seconds, not '$wait_max'"; exit 2 ;; esac
    state=1
}
# With wait_state set: poll linert every half second until the machine is in that state
# (bench/waitstate.sh's test, 150 ns); false when it did not come within wait_max seconds.
# Each job then starts in the state asked for, though the state may still change inside it
# (the rows' tags say so).
bench_wait() {
    local start v
    [ -n "${wait_state:-}" ] || return 0
    start=$SECONDS
    while :; do
        v=$(bench_linert)
        if awk -v v="$v" -v w="$wait_state" 'BEGIN { exit !((w == "slow") == (v >= 150)) }'; then
            echo "# waited $((SECONDS - start)) s for the $wait_state state (linert $v ns)" >>"$log"
            return 0
        fi
        [ $((SECONDS - start)) -lt "$wait_max" ] || break
        sleep 0.5
    done
    return 1
}

# Run `launch MPI` followed by the arguments given, reps times round every MPI in turn
# (a burst of outside load hits them alike); JSON lines tagged with mpi and rep go to
# out, the rest to log. With wait_state (--wait), each job waits for that state first and
# is left out (said on stderr) when it does not come. Sets failed.
bench_run_all() {
    local tmo=$1 lines cmd rep mpi rc sampler samples
    shift
    failed=0
    samples=$(mktemp)
    local order i
    for rep in $(seq 1 "$reps"); do
        # with --wait each job waits alone, so nothing keeps one MPI's jobs from always
        # following the same others: the round's first MPI turns from one round to the next
        order=("${mpis[@]}")
        if [ -n "${wait_state:-}" ]; then
            i=$(((rep - 1) % ${#mpis[@]}))
            order=("${mpis[@]:i}" "${mpis[@]:0:i}")
        fi
        for mpi in "${order[@]}"; do
            cmd=$(launch "$mpi")
            if ! bench_wait; then
                say "run $rep/$reps: $mpi left out: no $wait_state state within ${wait_max}s"
                echo "### $mpi rep $rep: left out, no $wait_state state within ${wait_max}s" >>"$log"
                continue
            fi
            say "run $rep/$reps: $mpi"
            echo "### $mpi rep $rep: $cmd $*" >>"$log"
            if [ "${state:-0}" = 1 ]; then
                echo "# linert before: $(bench_linert) ns" >>"$log"
                : >"$samples"
                (while :; do echo "$EPOCHREALTIME $(bench_linert)"; sleep 0.25; done >>"$samples") &
                sampler=$!
                # shellcheck disable=SC2086  # the command line is meant to be word-split
                lines=$({ timeout "$tmo" $cmd "$@" 2>>"$log"; echo "rc $?"; } | bench_stamp)
                kill "$sampler"
                wait "$sampler" 2>/dev/null || true
                rc=${lines##* rc }
                lines=$(printf '%s\n' "$lines" | sed '$d' | bench_state_tag "$samples")
                echo "# linert after: $(bench_linert) ns" >>"$log"
            else
                rc=0
                # shellcheck disable=SC2086
                lines=$(timeout "$tmo" $cmd "$@" 2>>"$log") || rc=$?
            fi
            if [ "$rc" = 0 ]; then
                printf '%s\n' "$lines" | grep -v '^{' >>"$log" || true
                printf '%s\n' "$lines" | grep '^{' | sed "s/^{/{\"mpi\":\"$mpi\",\"rep\":$rep,/" >>"$out"
            else
                say "FAILED: $mpi (see $log)"
                failed=1
            fi
        done
    done
    rm -f "$samples"
}
