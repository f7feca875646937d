#!/bin/sh
# Format the C sources with the repository's .clang-format.
# usage: tools/format.sh            rewrite every file that differs
#        tools/format.sh --check    list the files that differ (and how many lines); exit 1 if any
#        tools/format.sh [--check] FILE...   only those files
# CLANG_FORMAT names the binary (default: clang-format-14, else clang-format). Without one
# it says so and exits 77, which ctest reports as skipped (tools/deps.sh installs it as an
# optional package). The configuration was tuned with clang-format 14: another major
# version may lay out a few constructs differently.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

check=0
if [ "${1:-}" = "--check" ]; then
  check=1
  shift
fi

cf=${CLANG_FORMAT:-}
if [ -z "$cf" ]; then
  for c in clang-format-14 clang-format; do
    if command -v "$c" >/dev/null 2>&1; then cf=$c; break; fi
  done
fi
if [ -z "$cf" ] || ! command -v "$cf" >/dev/null 2>&1; then
  echo "format.sh: SKIPPED: clang-format is not installed (Debian: apt-get install clang-format, or tools/deps.sh check as root)" >&2
  exit 77
fi

# The C sources of src/ include/ tools/ tests/, except include/mpi.h, whose constant and
# handle tables are aligned in columns by hand like the MPI standard's ABI tables.
list_files() {
  if [ $# -gt 0 ]; then
    printf '%s\n' "$@"
  elif git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -- 'src/*.[ch]' 'include/*.[ch]' 'tools/*.[ch]' 'tests/*.[ch]'
  else
    find src include tools tests -name '*.[ch]' | sort
  fi | grep -v '^include/mpi\.h$'
}

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
nfiles=0 nlines=0 bad=0
for f in $(list_files "$@"); do
  nfiles=$((nfiles + 1))
  "$cf" --style=file "$f" > "$tmp"
  if cmp -s "$f" "$tmp"; then
    continue
  fi
  bad=$((bad + 1))
  n=$(diff "$f" "$tmp" | grep -c '^[<>]' || true)
  nlines=$((nlines + n))
  if [ $check = 1 ]; then
    echo "$f: $n line(s) differ"
  else
    cp "$tmp" "$f"
    echo "formatted $f"
  fi
done
if [ $check = 1 ]; then
  if [ $bad -gt 0 ]; then
    echo "format.sh: $bad of $nfiles files are not formatted ($nlines diff lines); run tools/format.sh (with $("$cf" --version | head -1))" >&2
    exit 1
  fi
  echo "format.sh: all $nfiles files formatted ($("$cf" --version | head -1))"
fi
