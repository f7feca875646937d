#!/usr/bin/env python3
"""Fortran bindings (mpif.h and `use mpi`) generated from include/mpi.h.

Writes:
  --wrappers FILE  C wrappers: one `mpi_<name>_` per C function (gfortran's external
                   names), arguments by reference, handles as INTEGERs converted with the
                   standard ABI's MPI_<Kind>_fromint/toint, ierror last, strings with
                   gfortran's hidden lengths, MPI_BOTTOM / MPI_IN_PLACE / MPI_STATUS(ES)_IGNORE
                   and friends recognised by the address of their common blocks, and 1-based
                   indices for Waitany/Waitsome/Testany/Testsome. A function whose arguments
                   this generator cannot convert (callbacks, argv lists, arrays of handles
                   sized by a communicator) gets a wrapper that sets ierror to
                   MPI_ERR_UNSUPPORTED_OPERATION and says so, never a missing symbol.
  --consts FILE    a C program that prints mpif.h from the compiled values of every
                   constant of mpi.h (run at build time, so the values are never copied).
Large-count (_c) functions, MPI_T and the handle conversions are C-only, as in the
standard's mpif.h / `use mpi`.
"""
import argparse
import re

HANDLES = {
    "MPI_Comm": "Comm", "MPI_Datatype": "Type", "MPI_Group": "Group", "MPI_Request": "Request",
    "MPI_Op": "Op", "MPI_Info": "Info", "MPI_Win": "Win", "MPI_File": "File",
    "MPI_Errhandler": "Errhandler", "MPI_Message": "Message", "MPI_Session": "Session",
}
WIDE = {"MPI_Aint", "MPI_Count", "MPI_Offset"}
# Arrays of handles with the argument that gives their length.
HANDLE_ARRAYS = {
    ("MPI_Waitall", "array_of_requests"): "count", ("MPI_Testall", "array_of_requests"): "count",
    ("MPI_Waitany", "array_of_requests"): "count", ("MPI_Testany", "array_of_requests"): "count",
    ("MPI_Waitsome", "array_of_requests"): "incount", ("MPI_Testsome", "array_of_requests"): "incount",
    ("MPI_Startall", "array_of_requests"): "count",
    ("MPI_Request_get_status_all", "array_of_requests"): "count",
    ("MPI_Request_get_status_any", "array_of_requests"): "count",
    ("MPI_Request_get_status_some", "array_of_requests"): "incount",
    ("MPI_Type_create_struct", "array_of_types"): "count",
    ("MPI_Type_get_contents", "array_of_datatypes"): "max_datatypes",
}
# Output indices into a Fortran array: 1-based there (MPI_UNDEFINED stays).
INDEX_OUT = {("MPI_Waitany", "indx"): None, ("MPI_Testany", "indx"): None,
             ("MPI_Waitsome", "array_of_indices"): "outcount",
             ("MPI_Testsome", "array_of_indices"): "outcount",
             ("MPI_Request_get_status_any", "indx"): None,
             ("MPI_Request_get_status_some", "array_of_indices"): "outcount"}
# Buffers that may be MPI_BOTTOM or MPI_IN_PLACE; int arrays that may be the special ones.
SPECIAL_INT_ARRAYS = {"array_of_errcodes": "MPI_ERRCODES_IGNORE", "sourceweights": "MPI_UNWEIGHTED",
                      "destweights": "MPI_UNWEIGHTED", "weights": "MPI_UNWEIGHTED"}
SKIP = re.compile(r"^(MPI_T_|MPI_.*_(toint|fromint)$|MPI_.*_c$|MPI_Abi_|MPI_Pcontrol$)")
# Functions a Fortran program calls with other arguments than C's.
CUSTOM = {"MPI_Init", "MPI_Init_thread", "MPI_Wtime", "MPI_Wtick", "MPI_Aint_add", "MPI_Aint_diff",
          "MPI_Comm_set_attr", "MPI_Comm_get_attr", "MPI_Type_set_attr", "MPI_Type_get_attr",
          "MPI_Win_set_attr", "MPI_Win_get_attr", "MPI_Attr_put", "MPI_Attr_get", "MPI_Op_create"}


def parse(header):
    protos = []
    for line in open(header):
        m = re.match(r"^(int|double|MPI_Aint) (MPI_\w+)\((.*)\);\s*$", line)
        if not m:
            continue
        ret, name, params = m.groups()
        plist = [] if params.strip() in ("", "void") else [p.strip() for p in params.split(",")]
        protos.append((ret, name, plist))
    return protos


def split_param(p):
    """'const int array[]' -> ('const int', 'array', '[]')."""
    m = re.match(r"^(.*?)\s*(\**)\s*(\w+)\s*((?:\[\w*\])*)$", p)
    if not m:
        return None
    base, stars, name, dims = m.groups()
    return base.strip(), stars, name, dims


def wrapper(name, params):
    """C source of the Fortran wrapper, or None when an argument cannot be converted."""
    fargs, pre, call, post = [], [], [], []
    lens = []
    for p in params:
        sp = split_param(p)
        if not sp:
            return None
        base, stars, pname, dims = sp
        const = base.startswith("const ")
        t = base[6:] if const else base
        ptr = len(stars) + (1 if dims else 0)
        if dims.count("[") > 1 and t == "int":   # int ranges[][3]
            fargs.append(f"MPI_Fint *{pname}")
            call.append(f"(int (*)[3]){pname}")
            continue
        if t in HANDLES:
            kind = HANDLES[t]
            if ptr == 0:
                fargs.append(f"MPI_Fint *{pname}")
                call.append(f"MPI_{kind}_fromint(*{pname})")
            elif ptr == 1 and not dims:
                fargs.append(f"MPI_Fint *{pname}")
                pre.append(f"{t} h_{pname} = MPI_{kind}_fromint(*{pname});")
                call.append(f"&h_{pname}")
                if not const:
                    post.append(f"*{pname} = MPI_{kind}_toint(h_{pname});")
            elif (name, pname) in HANDLE_ARRAYS:
                n = HANDLE_ARRAYS[(name, pname)]
                fargs.append(f"MPI_Fint *{pname}")
                pre.append(f"int n_{pname} = *{n} > 0 ? *{n} : 0;")
                pre.append(f"{t} *h_{pname} = malloc(((size_t)n_{pname} + 1) * sizeof *h_{pname});")
                pre.append(f"for (int i = 0; i < n_{pname}; i++) h_{pname}[i] = MPI_{kind}_fromint({pname}[i]);")
                call.append(f"h_{pname}")
                if not const:
                    post.append(f"for (int i = 0; i < n_{pname}; i++) {pname}[i] = MPI_{kind}_toint(h_{pname}[i]);")
                post.append(f"free(h_{pname});")
            else:
                return None
        elif t in ("int", "MPI_Fint"):
            if ptr == 0:
                fargs.append(f"MPI_Fint *{pname}")
                call.append(f"*{pname}")
            elif ptr == 1:
                fargs.append(f"MPI_Fint *{pname}")
                if pname in SPECIAL_INT_ARRAYS:
                    cval = SPECIAL_INT_ARRAYS[pname]
                    fsym = "mpi_fortran_" + cval[4:].lower() + "_"
                    call.append(f"((void *){pname} == (void *)&{fsym} ? {cval} : {pname})")
                else:
                    call.append(pname)
                if (name, pname) in INDEX_OUT:
                    n = INDEX_OUT[(name, pname)]
                    if n is None:
                        post.append(f"if (rc == MPI_SUCCESS && *{pname} != MPI_UNDEFINED) (*{pname})++;")
                    else:
                        post.append(f"if (rc == MPI_SUCCESS && *{n} != MPI_UNDEFINED) "
                                    f"for (int i = 0; i < *{n}; i++) {pname}[i]++;")
            else:
                return None
        elif t in WIDE:
            if ptr == 0:
                fargs.append(f"{t} *{pname}")
                call.append(f"*{pname}")
            elif ptr == 1:
                fargs.append(f"{t} *{pname}")
                call.append(pname)
            else:
                return None
        elif t == "void" and ptr == 1:
            fargs.append(f"void *{pname}")
            call.append(f"rmpi_f_buf({pname})")
        elif t == "void" and ptr == 2:   # attribute values, baseptr: addresses as INTEGER(MPI_ADDRESS_KIND)
            fargs.append(f"void *{pname}")
            call.append(pname)
        elif t == "MPI_Status" and ptr == 1:
            fargs.append(f"MPI_Fint *{pname}")
            call.append(f"rmpi_f_status({pname})")
        elif t == "char" and ptr == 1:
            fargs.append(f"char *{pname}")
            lens.append(f"size_t {pname}_len")
            if const:
                pre.append(f"char *s_{pname} = rmpi_f_cstr({pname}, {pname}_len);")
                call.append(f"s_{pname}")
                post.append(f"free(s_{pname});")
            else:
                pre.append(f"char *s_{pname} = rmpi_f_outbuf({pname}_len);")
                call.append(f"s_{pname}")
                post.append(f"rmpi_f_fstr(s_{pname}, {pname}, {pname}_len);")
                post.append(f"free(s_{pname});")
        else:
            return None
    fname = name.lower() + "_"
    sig = ", ".join(fargs + ["MPI_Fint *ierror"] + lens)
    body = [f"void {fname}({sig})", "{"]
    body += ["    " + s for s in pre]
    body.append(f"    int rc = {name}({', '.join(call)});")
    body += ["    " + s for s in post]
    body.append("    *ierror = rc;")
    body.append("}")
    return "\n".join(body)


def stub(name, params):
    fname = name.lower() + "_"
    args = ", ".join([f"void *a{i}" for i in range(len(params))] + ["MPI_Fint *ierror"])
    return (f"void {fname}({args})\n{{\n"
            f"    *ierror = rmpi_f_unsupported(\"{name}\");\n}}")


PRELUDE = r'''/* Generated by tools/gen_fortran.py from include/mpi.h: do not edit. */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int MPI_Fint;

/* The Fortran names of MPI's special addresses are common blocks of mpif.h (gfortran names
 * a common block /X/ x_); a wrapper recognises them by address. */
#define RMPI_F_COMMON(name) int name[8] __attribute__((aligned(64)))
RMPI_F_COMMON(mpi_fortran_bottom_);
RMPI_F_COMMON(mpi_fortran_in_place_);
RMPI_F_COMMON(mpi_fortran_status_ignore_);
RMPI_F_COMMON(mpi_fortran_statuses_ignore_);
RMPI_F_COMMON(mpi_fortran_errcodes_ignore_);
RMPI_F_COMMON(mpi_fortran_unweighted_);
RMPI_F_COMMON(mpi_fortran_weights_empty_);
RMPI_F_COMMON(mpi_fortran_argv_null_);
RMPI_F_COMMON(mpi_fortran_argvs_null_);

static void *rmpi_f_buf(void *p)
{
    if (p == (void *)mpi_fortran_bottom_)
        return MPI_BOTTOM;
    if (p == (void *)mpi_fortran_in_place_)
        return MPI_IN_PLACE;
    return p;
}

static MPI_Status *rmpi_f_status(MPI_Fint *s)
{
    if ((void *)s == (void *)mpi_fortran_status_ignore_ || (void *)s == (void *)mpi_fortran_statuses_ignore_)
        return MPI_STATUS_IGNORE;
    return (MPI_Status *)(void *)s;
}

/* A Fortran string argument (blank padded, len bytes) as a C string without the blanks. */
static char *rmpi_f_cstr(const char *s, size_t len)
{
    while (len > 0 && s[len - 1] == ' ')
        len--;
    char *c = malloc(len + 1);
    if (c) {
        memcpy(c, s, len);
        c[len] = 0;
    }
    return c;
}

static char *rmpi_f_outbuf(size_t len)
{
    /* MPI's output strings are at most MPI_MAX_* long; the C side writes a NUL too. */
    return calloc(len + MPI_MAX_INFO_VAL + 2, 1);
}

static void rmpi_f_fstr(const char *c, char *f, size_t len)
{
    size_t n = strlen(c);
    if (n > len)
        n = len;
    memcpy(f, c, n);
    memset(f + n, ' ', len - n);
}

static int rmpi_f_unsupported(const char *name)
{
    fprintf(stderr, "[rmpi] %s is not available from Fortran in this version of RailMPI "
                    "(its callback or argument list has no Fortran conversion yet); it returns "
                    "MPI_ERR_UNSUPPORTED_OPERATION.\n", name);
    return MPI_ERR_UNSUPPORTED_OPERATION;
}

void mpi_init_(MPI_Fint *ierror) { *ierror = MPI_Init(NULL, NULL); }

void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror)
{
    *ierror = MPI_Init_thread(NULL, NULL, *required, provided);
}

double mpi_wtime_(void) { return MPI_Wtime(); }
double mpi_wtick_(void) { return MPI_Wtick(); }
MPI_Aint mpi_aint_add_(MPI_Aint *base, MPI_Aint *disp) { return MPI_Aint_add(*base, *disp); }
MPI_Aint mpi_aint_diff_(MPI_Aint *a, MPI_Aint *b) { return MPI_Aint_diff(*a, *b); }

/* Attributes: Fortran passes the value (INTEGER(KIND=MPI_ADDRESS_KIND), or INTEGER for the
 * MPI-1 Attr_put/Attr_get) where C takes and gives a void *; a predefined attribute of a
 * communicator is, in C, a pointer to its integer value, and in Fortran that value. */
static void attr_out(int keyval, void *cval, int flag, MPI_Aint *out)
{
    if (!flag)
        return;
    int predefined = keyval == MPI_TAG_UB || keyval == MPI_HOST || keyval == MPI_IO ||
                     keyval == MPI_WTIME_IS_GLOBAL || keyval == MPI_UNIVERSE_SIZE || keyval == MPI_LASTUSEDCODE ||
                     keyval == MPI_APPNUM;
    *out = predefined ? (MPI_Aint) * (int *)cval : (MPI_Aint)(intptr_t)cval;
}

#define RMPI_F_ATTR(kind, Kind)                                                                         \
    void mpi_##kind##_set_attr_(MPI_Fint *h, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *ierror)          \
    {                                                                                                    \
        *ierror = MPI_##Kind##_set_attr(MPI_##Kind##_fromint(*h), *keyval, (void *)(intptr_t)*val);       \
    }                                                                                                    \
    void mpi_##kind##_get_attr_(MPI_Fint *h, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag,            \
                                MPI_Fint *ierror)                                                        \
    {                                                                                                    \
        void *v = NULL;                                                                                  \
        *ierror = MPI_##Kind##_get_attr(MPI_##Kind##_fromint(*h), *keyval, &v, flag);                    \
        if (*ierror == MPI_SUCCESS)                                                                      \
            attr_out(*keyval, v, *flag, val);                                                            \
    }
RMPI_F_ATTR(comm, Comm)
RMPI_F_ATTR(win, Win)
RMPI_F_ATTR(type, Type)
void mpi_attr_put_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *ierror)
{
    *ierror = MPI_Comm_set_attr(MPI_Comm_fromint(*comm), *keyval, (void *)(intptr_t)*val);
}
void mpi_attr_get_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *flag, MPI_Fint *ierror)
{
    void *v = NULL;
    MPI_Aint wide = 0;
    *ierror = MPI_Comm_get_attr(MPI_Comm_fromint(*comm), *keyval, &v, flag);
    if (*ierror == MPI_SUCCESS && *flag) {
        attr_out(*keyval, v, *flag, &wide);
        *val = (MPI_Fint)wide;
    }
}
'''


N_FORTRAN_OPS = 32


def op_create():
    """mpi_op_create_: a C callback has no context argument, so each Fortran reduction
    function gets one of N_FORTRAN_OPS trampolines that hands it its datatype as an INTEGER."""
    out = ["/* MPI_Op_create from Fortran: the library calls fn(in, inout, len, MPI_Datatype *); a",
           " * Fortran user function takes the datatype as an INTEGER. A C callback carries no",
           " * context, so each Fortran function is bound to one trampoline of a fixed set. */",
           "typedef void (*rmpi_f_user_fn)(void *, void *, MPI_Fint *, MPI_Fint *);",
           f"#define RMPI_F_OPS {N_FORTRAN_OPS}",
           "static rmpi_f_user_fn f_ops[RMPI_F_OPS];",
           "static int n_f_ops;"]
    for i in range(N_FORTRAN_OPS):
        out.append(f"static void f_tramp_{i}(void *in, void *io, int *len, MPI_Datatype *dt)\n{{\n"
                   f"    MPI_Fint d = MPI_Type_toint(*dt);\n    f_ops[{i}](in, io, len, &d);\n}}")
    out.append("static MPI_User_function *const f_tramps[RMPI_F_OPS] = {" +
               ", ".join(f"f_tramp_{i}" for i in range(N_FORTRAN_OPS)) + "};")
    out.append("""void mpi_op_create_(rmpi_f_user_fn fn, MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierror)
{
    int slot = 0;
    while (slot < n_f_ops && f_ops[slot] != fn)
        slot++;
    if (slot == RMPI_F_OPS) {
        fprintf(stderr, "[rmpi] MPI_Op_create: more than %d different Fortran reduction functions; "
                        "RailMPI's Fortran bindings bind at most that many.\\n", RMPI_F_OPS);
        *ierror = MPI_ERR_INTERN;
        return;
    }
    if (slot == n_f_ops)
        f_ops[n_f_ops++] = fn;
    MPI_Op o = MPI_OP_NULL;
    *ierror = MPI_Op_create(f_tramps[slot], *commute, &o);
    if (*ierror == MPI_SUCCESS)
        *op = MPI_Op_toint(o);
}""")
    return "\n\n".join(out)


def consts_program(header):
    """C program printing mpif.h: every integer constant of mpi.h with its compiled value."""
    names = []
    text = open(header).read()
    for m in re.finditer(r"^#define (MPI_\w+)\s+(.+)$", text, re.M):
        name, val = m.groups()
        if "(void *)" in val or "(char" in val or "(int *)" in val or "(MPI_Status *)" in val:
            continue
        if "_function" in val or "_FN" in name or "_fn" in val or "MPI_T_" in name:
            continue
        if re.search(r"\(\w*(copy|delete|conversion|fn)\w*\s*\*?\)", val, re.I):
            continue
        if name in ("MPI_VERSION", "MPI_SUBVERSION") or re.match(r"^\(\(MPI_\w+\)0x[0-9a-f]+\)$", val) \
                or re.match(r"^-?\d+$", val.strip()) or re.match(r"^\(-?\d+\)$", val.strip()):
            names.append(name)
    body = re.findall(r"enum\s*\{(.*?)\}", text, re.S)
    for b in body:
        for m in re.finditer(r"^\s*(MPI_\w+)\s*=", b, re.M):
            if not m.group(1).startswith("MPI_T_") and not m.group(1).startswith("MPI_F_"):
                names.append(m.group(1))
    seen, uniq = set(), []
    for n in names:
        if n not in seen:
            seen.add(n)
            uniq.append(n)
    out = ['/* Generated by tools/gen_fortran.py: prints mpif.h. */',
           '#include <mpi.h>', '#include <stdint.h>', '#include <stdio.h>',
           'static void p(const char *n, long long v)',
           '{', '    printf("      INTEGER %s\\n      PARAMETER (%s=%lld)\\n", n, n, v);', '}',
           'int main(void)', '{',
           '    printf("! mpif.h of RailMPI, generated at build time from mpi.h (tools/gen_fortran.py).\\n");',
           '    printf("! Valid as fixed and as free source form.\\n");']
    for n in uniq:
        out.append(f'    p("{n}", (long long)(intptr_t)({n}));')
    out += [
        '    p("MPI_STATUS_SIZE", MPI_F_STATUS_SIZE);',
        '    p("MPI_SOURCE", MPI_F_SOURCE + 1);',
        '    p("MPI_TAG", MPI_F_TAG + 1);',
        '    p("MPI_ERROR", MPI_F_ERROR + 1);',
        '    p("MPI_ADDRESS_KIND", (long long)sizeof(MPI_Aint));',
        '    p("MPI_OFFSET_KIND", (long long)sizeof(MPI_Offset));',
        '    p("MPI_COUNT_KIND", (long long)sizeof(MPI_Count));',
        '    p("MPI_INTEGER_KIND", (long long)sizeof(int));',
        '    static const char *common[] = {"BOTTOM", "IN_PLACE", "ERRCODES_IGNORE", "UNWEIGHTED",',
        '                                   "WEIGHTS_EMPTY", "ARGV_NULL", "ARGVS_NULL"};',
        '    for (unsigned i = 0; i < sizeof common / sizeof *common; i++)',
        '        printf("      INTEGER MPI_%s\\n      COMMON /MPI_FORTRAN_%s/ MPI_%s\\n", common[i], common[i],',
        '               common[i]);',
        '    printf("      INTEGER MPI_STATUS_IGNORE(MPI_STATUS_SIZE)\\n"',
        '           "      COMMON /MPI_FORTRAN_STATUS_IGNORE/ MPI_STATUS_IGNORE\\n");',
        '    printf("      INTEGER MPI_STATUSES_IGNORE(MPI_STATUS_SIZE, 1)\\n"',
        '           "      COMMON /MPI_FORTRAN_STATUSES_IGNORE/ MPI_STATUSES_IGNORE\\n");',
        '    printf("      DOUBLE PRECISION MPI_WTIME, MPI_WTICK\\n      EXTERNAL MPI_WTIME, MPI_WTICK\\n");',
        '    printf("      INTEGER(KIND=MPI_ADDRESS_KIND) MPI_AINT_ADD, MPI_AINT_DIFF\\n"',
        '           "      EXTERNAL MPI_AINT_ADD, MPI_AINT_DIFF\\n");',
        '    return 0;', '}']
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--header", required=True)
    ap.add_argument("--wrappers")
    ap.add_argument("--consts")
    a = ap.parse_args()
    protos = parse(a.header)
    if a.wrappers:
        parts, nok, nstub = [PRELUDE, op_create()], 0, 0
        for ret, name, params in protos:
            if SKIP.match(name) or name in CUSTOM or ret != "int":
                continue
            w = wrapper(name, params)
            if w is None:
                w = stub(name, params)
                nstub += 1
            else:
                nok += 1
            parts.append(w)
        parts.append(f"/* {nok} functions converted, {nstub} answered MPI_ERR_UNSUPPORTED_OPERATION. */")
        open(a.wrappers, "w").write("\n\n".join(parts) + "\n")
    if a.consts:
        open(a.consts, "w").write(consts_program(a.header))


if __name__ == "__main__":
    main()
