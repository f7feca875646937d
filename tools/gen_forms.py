#!/usr/bin/env python3
"""The repeated forms of the MPI bindings, from one description (src/api/forms.txt).

Usage: gen_forms.py --desc src/api/forms.txt --out-dir build/gen/api [--header include/mpi.h]

A collective exists in six forms (MPI_X, MPI_Ix, MPI_X_init and the large-count _c of
each) and a pack/unpack or buffer call in two (int and _c) that differ only in wrapping.
The description states each operation once: its parameters with a kind (which gives
the C type of the int and of the _c form) and the call of the hand-written function
that checks the arguments and does the work. For each section `[api_x.c]` this writes
OUT_DIR/api_x.forms.h, included at the end of src/api/api_x.c, so the functions it calls
stay static there (and inline where the compiler likes).

What a generated form does:
  - it checks that the library is initialized and converts the communicator handle
    (MPI_ERR_COMM on a bad one), in every form;
  - MPI_Ix and MPI_X_init check the request pointer (MPI_ERR_REQUEST) and pass it on
    with the mode RMPI_API_START or RMPI_API_PERSIST; MPI_X passes NULL and RMPI_API_RUN;
  - an `out` or `inout` count of the int form is widened into an MPI_Count (NULL stays
    NULL), handed down, and narrowed back when the call succeeds; the call gets the
    largest value the form can hold as MAX(name), so an int form reports
    MPI_ERR_VALUE_TOO_LARGE where a _c form has room;
  - an array the worker wants as MPI_Count[] or MPI_Aint[] (AS_COUNTS(a, n),
    AS_AINTS(a, n) in the call) is passed as is where the form's type matches, else as
    a converted copy freed after the call; IS_C is 1 in a _c form, 0 in an int form;
  - every form passes its own name (__func__), so messages and PMPI names are its own.
"""

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_pmpi import write  # noqa: E402
from gen_unsupported import parse_header  # noqa: E402

# kind: (C type of the int form, C type of the _c form); "[]" puts the brackets after the name
KINDS = {
    "BUFFER": ("void *", "void *"),
    "CBUFFER": ("const void *", "const void *"),
    "STRING": ("const char *", "const char *"),
    "COUNT": ("int", "MPI_Count"),
    "AINT": ("MPI_Aint", "MPI_Count"),
    "COUNTS": ("const int []", "const MPI_Count []"),
    "DISPLS": ("const int []", "const MPI_Aint []"),
    "ADISPLS": ("const MPI_Aint []", "const MPI_Aint []"),
    "AINTS": ("const MPI_Aint []", "const MPI_Count []"),
    "INT": ("int", "int"),
    "INTS": ("const int []", "const int []"),
    "DATATYPE": ("MPI_Datatype", "MPI_Datatype"),
    "DATATYPES": ("const MPI_Datatype []", "const MPI_Datatype []"),
    "NEWTYPE": ("MPI_Datatype *", "MPI_Datatype *"),
    "OP": ("MPI_Op", "MPI_Op"),
    "RANK": ("int", "int"),
    "COMM": ("MPI_Comm", "MPI_Comm"),
    "SESSION": ("MPI_Session", "MPI_Session"),
}
# kinds whose int and _c forms differ: an operation with none of them has no _c form
LARGE = {"COUNT", "AINT", "COUNTS", "DISPLS", "AINTS"}
# AS_COUNTS(a, n) / AS_AINTS(a, n) in a call: the array a of n elements as MPI_Count[] or
# MPI_Aint[]; a form whose a has another element type passes a converted copy, made by
# the named static function of api_x.c (NULL for n <= 0) and freed after the call
CONVERT = {("AS_COUNTS", "int"): ("MPI_Count", "widen"),
           ("AS_AINTS", "MPI_Count"): ("MPI_Aint", "count_to_aint")}
# largest value of a count kind in each form (MAX(name) in a call)
LIMITS = {"COUNT": ("INT_MAX", "INT64_MAX"), "AINT": ("INTPTR_MAX", "INT64_MAX")}
FAMILIES = ("coll", "large")


class Param:
    def __init__(self, name, kind, direction, where):
        if kind not in KINDS:
            raise SystemExit("%s: unknown kind %s (one of %s)" % (where, kind, ", ".join(KINDS)))
        if direction not in ("in", "out", "inout"):
            raise SystemExit("%s: direction must be out or inout, not %s" % (where, direction))
        if direction != "in" and kind not in LIMITS:
            raise SystemExit("%s: only COUNT and AINT parameters can be out or inout" % where)
        self.name, self.kind, self.dir = name, kind, direction

    def decl(self, large):
        ctype = KINDS[self.kind][1 if large else 0]
        if self.dir != "in":
            ctype += " *"
        if ctype.endswith("[]"):
            return "%s%s[]" % (ctype[:-2], self.name)
        return ctype + ("" if ctype.endswith("*") else " ") + self.name


class Op:
    def __init__(self, name, family, where):
        if family not in FAMILIES:
            raise SystemExit("%s: family must be one of %s" % (where, ", ".join(FAMILIES)))
        self.name, self.family, self.where = name, family, where
        self.params, self.call = [], None

    def check(self):
        if not self.call:
            raise SystemExit("%s: %s has no `-> call(...)` line" % (self.where, self.name))
        comms = [p for p in self.params if p.kind == "COMM"]
        if self.family == "coll" and (len(comms) != 1 or self.params[-1].kind != "COMM"):
            raise SystemExit("%s: a collective takes one COMM, its last parameter" % self.where)


def parse(path):
    """Sections `[file.c]`; in each, `MPI_Name family`, then indented `name KIND [out|inout]`
    lines and one `-> worker(args)` line. `#` starts a comment."""
    sections, cur, op = {}, None, None
    with open(path, encoding="utf-8") as f:
        for no, raw in enumerate(f, 1):
            where = "%s:%d" % (path, no)
            line = raw.split("#", 1)[0].rstrip()
            if not line.strip():
                continue
            m = re.fullmatch(r"\[(api_\w+)\.c\]", line)
            if m:
                cur = sections.setdefault(m.group(1), [])
                op = None
                continue
            if cur is None:
                raise SystemExit("%s: a line before the first [api_x.c] section" % where)
            if not line[0].isspace():
                words = line.split()
                if len(words) != 2 or not words[0].startswith("MPI_"):
                    raise SystemExit("%s: expected `MPI_Name family`" % where)
                op = Op(words[0], words[1], where)
                cur.append(op)
                continue
            if op is None:
                raise SystemExit("%s: an indented line outside an operation" % where)
            body = line.strip()
            if body.startswith("->"):
                op.call = body[2:].strip()
                continue
            words = body.split()
            if len(words) not in (2, 3):
                raise SystemExit("%s: expected `name KIND [out|inout]`" % where)
            op.params.append(Param(words[0], words[1], words[2] if len(words) == 3 else "in", where))
    for ops in sections.values():
        for o in ops:
            o.check()
    return sections


def signature(name, params, large, extra):
    decls = [p.decl(large) for p in params] + extra
    return "int %s(%s)" % (name, ", ".join(decls) if decls else "void")


def emit(op, large, mode):
    """One form: mode is None (an int/_c pair only), "RUN", "START" or "PERSIST"."""
    suffix = "_c" if large else ""
    base = op.name[4:]
    if mode == "START":
        name = "MPI_I" + base[0].lower() + base[1:] + suffix
    elif mode == "PERSIST":
        name = op.name + "_init" + suffix
    else:
        name = op.name + suffix
    extra = []
    if mode == "PERSIST":
        extra.append("MPI_Info info")
    if mode in ("START", "PERSIST"):
        extra.append("MPI_Request *request")
    out = [signature(name, op.params, large, extra), "{",
           "    if (RMPI_UNLIKELY(rmpi_api_state != RMPI_STATE_INIT))",
           "        return rmpi_api_not_initialized(__func__);"]
    subst = {}
    for p in op.params:
        if p.kind == "COMM":
            obj = "c_" + p.name
            out += ["    rmpi_comm_t *%s = rmpi_comm_get(%s);" % (obj, p.name),
                    "    if (RMPI_UNLIKELY(!%s))" % obj,
                    "        return rmpi_api_error(NULL, MPI_ERR_COMM, __func__, \"invalid communicator %%p\", "
                    "(void *)%s);" % p.name]
            subst[p.name] = obj
    comm_obj = subst.get(next((p.name for p in op.params if p.kind == "COMM"), ""), "NULL")
    if mode in ("START", "PERSIST"):
        out += ["    if (RMPI_UNLIKELY(!request))",
                "        return rmpi_api_error(%s, MPI_ERR_REQUEST, __func__, \"request must not be NULL\");"
                % comm_obj]
    narrowed = [p for p in op.params if p.dir != "in" and not large]
    for p in narrowed:
        init = "%s ? *%s : 0" % (p.name, p.name) if p.dir == "inout" else "0"
        out.append("    MPI_Count %s_wide = %s;" % (p.name, init))
        subst[p.name] = "(%s ? &%s_wide : NULL)" % (p.name, p.name)

    def word(m):
        w = m.group(0)
        return subst.get(w, w)

    m = re.fullmatch(r"(\w+)\((.*)\)", op.call)
    if not m:
        raise SystemExit("%s: the call of %s must be `worker(args)`" % (op.where, op.name))
    freed = []

    def convert(a):
        want, name, length = a.group(1), a.group(2), a.group(3)
        elem = KINDS[kind_of(op, name)][1 if large else 0].replace("const ", "").replace(" []", "")
        if (want, elem) not in CONVERT:
            if elem != {"AS_COUNTS": "MPI_Count", "AS_AINTS": "MPI_Aint"}[want]:
                raise SystemExit("%s: %s cannot turn %s's %s into the array it asks for" % (op.where, want, name, elem))
            return name
        ctype, helper = CONVERT[(want, elem)]
        out.append("    %s *%s_conv = %s(%s, %s);" % (ctype, name, helper, name, length))
        freed.append(name + "_conv")
        return name + "_conv"

    text = re.sub(r"\b(AS_COUNTS|AS_AINTS)\((\w+), (\w+)\)", convert, m.group(2))
    text = re.sub(r"\bIS_C\b", "1" if large else "0", text)
    args = re.sub(r"\bMAX\((\w+)\)", lambda a: LIMITS[kind_of(op, a.group(1))][1 if large else 0], text)
    args = [re.sub(r"\b[A-Za-z_]\w*\b", word, a.strip()) for a in split_args(args)]
    if op.family == "coll":
        args = [comm_obj] + args + ["request" if mode != "RUN" else "NULL", "RMPI_API_" + mode]
    call = "%s(%s)" % (m.group(1), ", ".join(["__func__"] + args))
    if narrowed or freed:
        out.append("    int rc = %s;" % call)
        out += ["    free(%s);" % f for f in freed]
        for p in narrowed:
            out += ["    if (rc == MPI_SUCCESS && %s)" % p.name,
                    "        *%s = (%s)%s_wide;" % (p.name, KINDS[p.kind][0], p.name)]
        out.append("    return rc;")
    else:
        out.append("    return %s;" % call)
    out.append("}")
    return "\n".join(out)


def split_args(text):
    """The top-level comma-separated arguments of a call."""
    args, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            args.append(cur)
            cur = ""
            continue
        depth += 1 if ch == "(" else -1 if ch == ")" else 0
        cur += ch
    if cur.strip():
        args.append(cur)
    return args


def kind_of(op, name):
    for p in op.params:
        if p.name == name:
            return p.kind
    raise SystemExit("%s: MAX(%s) names no parameter of %s" % (op.where, name, op.name))


def form_names(op):
    large = (False, True) if any(p.kind in LARGE for p in op.params) else (False,)
    modes = ("RUN", "START", "PERSIST") if op.family == "coll" else (None,)
    return [(lg, mode) for lg in large for mode in modes]


def generate(section, ops, desc):
    parts = ["/* Generated by tools/gen_forms.py from %s: do not edit. Included at the end of\n"
             " * src/api/%s.c, whose static functions the forms call. */\n"
             "#include <limits.h>\n#include <stdint.h>" % (desc, section)]
    for op in ops:
        for large, mode in form_names(op):
            parts.append(emit(op, large, mode))
    return "\n\n".join(parts) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--desc", required=True)
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--header", help="include/mpi.h: every generated form must be declared there")
    ap.add_argument("--list", action="store_true", help="print the files it writes and stop")
    args = ap.parse_args()
    sections = parse(args.desc)
    if args.list:
        print(";".join(os.path.join(args.out_dir, s + ".forms.h") for s in sorted(sections)))
        return 0
    desc = os.path.join("src/api", os.path.basename(args.desc))
    declared = {name for _, name, _ in parse_header(args.header)} if args.header else None
    for section, ops in sections.items():
        text = generate(section, ops, desc)
        if declared is not None:
            missing = sorted(set(re.findall(r"^int (MPI_\w+)\(", text, re.M)) - declared)
            if missing:
                raise SystemExit("gen_forms.py: %s declares no %s" % (args.header, ", ".join(missing)))
        write(os.path.join(args.out_dir, section + ".forms.h"), text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
