# Sourced by callgrind.sh and coll_callgrind.sh: the MPI to measure, the work folder, the
# benchmark's build and the wrapper that runs rank 0 (or every rank) under callgrind.
# The caller sets name (for messages), root, here and keep, defines usage, and calls
# `cg_setup PROG [MPICC MPIEXEC [MPIEXEC_ARGS...]]`; it gets mpicc, mpiexec, launcher_args,
# work (with wrap.sh and PROG built from bench/PROG.c in it).
# The wrapper reads CG_OUT (callgrind output prefix), CG_ALL_RANKS (1: every rank), CG_RANK
# (the one rank measured otherwise, default 0) and CG_EXTRA (more valgrind options,
# word-split, e.g. --toggle-collect=FN).
cg_setup() {
    local prog=$1
    shift
    if [ $# -ge 2 ]; then
        mpicc=$1
        mpiexec=$2
        shift 2
    elif [ $# -eq 0 ]; then
        mpicc=$root/build/bin/mpicc
        mpiexec=$root/build/bin/mpiexec
        if [ ! -x "$mpicc" ] || [ ! -x "$mpiexec" ]; then
            echo "$name: RailMPI is not built ($mpicc or $mpiexec missing); run make," \
                 "or name another MPI: bench/$name mpicc.mpich mpiexec.mpich" >&2
            exit 1
        fi
    else
        usage >&2
        exit 2
    fi
    launcher_args=("$@")
    command -v valgrind >/dev/null || { echo "$name: valgrind is not installed" >&2; exit 1; }
    command -v "$mpicc" >/dev/null || { echo "$name: compiler '$mpicc' not found" >&2; exit 1; }
    command -v "$mpiexec" >/dev/null || { echo "$name: launcher '$mpiexec' not found" >&2; exit 1; }

    if [ -n "$keep" ]; then
        mkdir -p "$keep"
        work=$(cd "$keep" && pwd)
    else
        work=$(mktemp -d "/tmp/${name%.sh}.XXXXXX")
        trap 'rm -rf "$work"' EXIT
    fi

    "$mpicc" -std=c11 -O2 -g -Wall -Wextra -o "$work/$prog" "$here/$prog.c"

    cg_wrapper "$work/wrap.sh"
}

# Writes the wrapper $1 that runs rank 0 (or every rank with CG_ALL_RANKS=1) under callgrind,
# its output in CG_OUT.PID (one file per thread).
cg_wrapper() {
    # Only rank 0 runs under valgrind: native peers answer at once, so rank 0 spends few
    # instructions spinning in its progress loop, and the count measures the path, not the wait.
    cat >"$1" <<'WRAP'
#!/bin/sh
rank=${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${SLURM_PROCID:-}}}}
if [ "$CG_ALL_RANKS" = 1 ] || [ "$rank" = "${CG_RANK:-0}" ]; then
    # shellcheck disable=SC2086  # CG_EXTRA holds options, meant to be word-split
    exec valgrind --tool=callgrind --separate-threads=yes $CG_EXTRA --callgrind-out-file="$CG_OUT.%p" "$@"
fi
if [ -z "$rank" ]; then
    echo "callgrind: the launcher sets no rank variable (bench/callgrind.sh has --all-ranks)" >&2
    exit 1
fi
exec "$@"
WRAP
    chmod +x "$1"
}
