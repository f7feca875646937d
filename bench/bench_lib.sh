# Sourced by compare.sh and coll_compare.sh: result files, messages, the --only filter and
# the CPU busy share. The caller sets bench_name, build, out (may be empty) and only.

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
