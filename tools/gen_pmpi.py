#!/usr/bin/env python3
"""The MPI profiling interface (PMPI_*) for every function include/mpi.h declares.

Usage: gen_pmpi.py --header include/mpi.h --header-out build/include/mpi.h --syms-out build/gen/pmpi.rsp

--header-out: mpi.h with a PMPI_ prototype after the MPI_ ones (same signature).
--syms-out:   linker options `--defsym=PMPI_Name=MPI_Name`: each PMPI_ name is an alias of
              the library's own MPI_ definition (or its unsupported-function stub), so a
              tool that defines MPI_Send and calls PMPI_Send reaches RailMPI's code.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_unsupported import parse_header  # noqa: E402

MARK = "#if defined(__cplusplus)\n}\n#endif"


def write(path, text):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    old = None
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            old = f.read()
    if old != text:  # keep the timestamp when nothing changed (no needless rebuilds)
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--header", required=True)
    ap.add_argument("--header-out", required=True)
    ap.add_argument("--syms-out", required=True)
    args = ap.parse_args()
    protos = parse_header(args.header)
    if not protos:
        raise SystemExit("gen_pmpi.py: no MPI_ prototypes in %s" % args.header)
    with open(args.header, encoding="utf-8") as f:
        text = f.read()
    at = text.rfind(MARK)
    if at < 0:
        raise SystemExit("gen_pmpi.py: %s has no closing extern \"C\" block" % args.header)
    decls = ["/* The profiling interface: PMPI_ names of the functions above (tools/gen_pmpi.py). */"]
    decls += ["%s P%s(%s);" % (ret, name, params) for ret, name, params in protos]
    write(args.header_out, text[:at] + "\n".join(decls) + "\n\n" + text[at:])
    write(args.syms_out, "".join("--defsym=P%s=%s\n" % (name, name) for _, name, _ in protos))
    return 0


if __name__ == "__main__":
    sys.exit(main())
