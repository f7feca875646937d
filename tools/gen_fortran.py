#!/usr/bin/env python3
"""Fortran bindings (mpif.h, `use mpi`, `use mpi_f08`) generated from include/mpi.h.

Writes:
  --wrappers FILE  C wrappers: one `mpi_<name>_` per C function (gfortran's external
                   names), arguments by reference, handles as INTEGERs converted with the
                   standard ABI's MPI_<Kind>_fromint/toint, ierror last, strings with
                   gfortran's hidden lengths, MPI_BOTTOM / MPI_IN_PLACE / MPI_STATUS(ES)_IGNORE
                   and friends recognised by the address of their common blocks, and 1-based
                   indices for Waitany/Waitsome/Testany/Testsome. Callbacks (reductions,
                   error handlers, attribute copy/delete, generalized requests) go through
                   C trampolines (callbacks()); MPI_Comm_spawn(_multiple) reads CHARACTER
                   argument arrays. A function whose arguments this generator cannot
                   convert gets a wrapper that sets ierror to MPI_ERR_UNSUPPORTED_OPERATION
                   and says so, never a missing symbol.
                   Also the mpi_f08 entry points `rmpi_f08_<name>` of functions with
                   choice buffers (buffers as CFI descriptors: non-contiguous sections copied
                   by blocking calls, refused by those that keep the buffer) and of the
                   large-count forms.
  --consts FILE    a C program that prints mpif.h from the compiled values of every
                   constant of mpi.h (run at build time, so the values are never copied);
                   with the argument f08 it prints mpi_f08's constants instead.
  --interfaces FILE  the explicit interfaces of `use mpi` (included by mpi.f90).
  --procedures FILE  the module procedures of `use mpi` (MPI_Sizeof's specifics, included
                   after mpi.f90's CONTAINS).
  --f08 FILE       the mpi_f08 module: handle types, TYPE(MPI_Status), and per function a
                   procedure NAME_f08 (generic NAME, IERROR optional) calling the C entry
                   point through BIND(C); a large-count _c function is a second specific
                   procedure of the same generic name.
Large-count (_c) functions (mpi_f08 has them), MPI_T and the handle conversions are not in
mpif.h / `use mpi`, as in the standard.
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
    ("MPI_Comm_spawn_multiple", "array_of_info"): "count",
}
# The per-peer datatype arrays of the Alltoallw family: as long as the (remote) group, or
# the topology's in- and out-degree for the neighbor forms (C expressions of the wrapper).
for _f in ("MPI_Alltoallw", "MPI_Ialltoallw", "MPI_Alltoallw_init", "MPI_Alltoallw_c", "MPI_Ialltoallw_c",
           "MPI_Alltoallw_init_c"):
    # with MPI_IN_PLACE, sendtypes is ignored and may be shorter: none are read
    HANDLE_ARRAYS[(_f, "sendtypes")] = "@({sendbuf} == MPI_IN_PLACE ? 0 : rmpi_f_peers(*comm))"
    HANDLE_ARRAYS[(_f, "recvtypes")] = "@rmpi_f_peers(*comm)"
for _f in ("MPI_Neighbor_alltoallw", "MPI_Ineighbor_alltoallw", "MPI_Neighbor_alltoallw_init",
           "MPI_Neighbor_alltoallw_c", "MPI_Ineighbor_alltoallw_c", "MPI_Neighbor_alltoallw_init_c"):
    HANDLE_ARRAYS[(_f, "sendtypes")] = "@rmpi_f_degree(*comm, 1)"
    HANDLE_ARRAYS[(_f, "recvtypes")] = "@rmpi_f_degree(*comm, 0)"
# Output indices into a Fortran array: 1-based there (MPI_UNDEFINED stays).
INDEX_OUT = {("MPI_Waitany", "indx"): None, ("MPI_Testany", "indx"): None,
             ("MPI_Waitsome", "array_of_indices"): "outcount",
             ("MPI_Testsome", "array_of_indices"): "outcount",
             ("MPI_Request_get_status_any", "indx"): None,
             ("MPI_Request_get_status_some", "array_of_indices"): "outcount"}
# Buffers that may be MPI_BOTTOM or MPI_IN_PLACE; int arrays that may be the special ones.
SPECIAL_INT_ARRAYS = {"array_of_errcodes": "MPI_ERRCODES_IGNORE", "sourceweights": "MPI_UNWEIGHTED",
                      "destweights": "MPI_UNWEIGHTED", "weights": "MPI_UNWEIGHTED"}
SKIP = re.compile(r"^(MPI_T_|MPI_.*_(toint|fromint)$|MPI_.*_c$|MPI_Abi_|MPI_Pcontrol$|MPI_Status_(c2f08|f082c|f2f08|f082f)$)")
# Functions a Fortran program calls with other arguments than C's.
CUSTOM = {"MPI_Init", "MPI_Init_thread", "MPI_Wtime", "MPI_Wtick", "MPI_Aint_add", "MPI_Aint_diff",
          "MPI_Comm_set_attr", "MPI_Comm_get_attr", "MPI_Type_set_attr", "MPI_Type_get_attr",
          "MPI_Win_set_attr", "MPI_Win_get_attr", "MPI_Attr_put", "MPI_Attr_get", "MPI_Op_create",
          "MPI_Comm_create_errhandler", "MPI_Win_create_errhandler", "MPI_File_create_errhandler",
          "MPI_Session_create_errhandler", "MPI_Comm_create_keyval", "MPI_Type_create_keyval",
          "MPI_Win_create_keyval", "MPI_Grequest_start", "MPI_Info_create_env", "MPI_Comm_spawn",
          "MPI_Register_datarep",
          "MPI_Comm_spawn_multiple", "MPI_Keyval_create"}


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


def decode(p):
    """'const int array[]' -> ('int', True, 1, 'array', '[]'): type, const, pointer depth
    (brackets count as one), name, brackets; None if the parameter does not parse."""
    sp = split_param(p)
    if not sp:
        return None
    base, stars, pname, dims = sp
    const = base.startswith("const ")
    return base[6:] if const else base, const, len(stars) + (1 if dims else 0), pname, dims


# Output pointers written where Fortran keeps an address (INTEGER(MPI_ADDRESS_KIND) in
# `use mpi`, TYPE(C_PTR) in mpi_f08), not choice buffers.
PTR_OUT = {"baseptr", "buffer_addr"}
# int parameters that are LOGICAL in Fortran (MPI-4.1 section 19.1.2 lists them per routine;
# in this header they are always these names).
LOGICALS = {"flag", "commute", "reorder", "periods", "remain_dims", "high", "weighted"}
# int * parameters that are arrays although spelled as a pointer in mpi.h.
INT_PTR_ARRAYS = {"sourceweights", "destweights", "weights"}
FKIND = {"MPI_Aint": "MPI_ADDRESS_KIND", "MPI_Offset": "MPI_OFFSET_KIND", "MPI_Count": "MPI_COUNT_KIND"}
# Buffers the standard marks ASYNCHRONOUS: nonblocking, persistent and one-sided calls
# (MPI-4.1 section 19.1.17, "Asynchronous Modifier").
ASYNC = re.compile(r"^MPI_(I(?!nfo|ntercomm|nit|s_)\w+|\w+_init|R?(put|get|accumulate|get_accumulate)|"
                   r"Fetch_and_op|Compare_and_swap|Win_(create|attach|detach)|Buffer_attach|"
                   r"File_i\w+|File_\w+_(begin|end))$", re.I)
# The CUSTOM functions as Fortran sees them (C-like parameter lists for fview), so they get
# explicit interfaces too; the names are the standard's.
CUSTOM_VIEW = {
    "MPI_Init": [], "MPI_Init_thread": ["int required", "int *provided"],
    "MPI_Comm_set_attr": ["MPI_Comm comm", "int comm_keyval", "MPI_Aint attribute_val"],
    "MPI_Comm_get_attr": ["MPI_Comm comm", "int comm_keyval", "MPI_Aint *attribute_val", "int *flag"],
    "MPI_Type_set_attr": ["MPI_Datatype datatype", "int type_keyval", "MPI_Aint attribute_val"],
    "MPI_Type_get_attr": ["MPI_Datatype datatype", "int type_keyval", "MPI_Aint *attribute_val", "int *flag"],
    "MPI_Win_set_attr": ["MPI_Win win", "int win_keyval", "MPI_Aint attribute_val"],
    "MPI_Win_get_attr": ["MPI_Win win", "int win_keyval", "MPI_Aint *attribute_val", "int *flag"],
    "MPI_Op_create": ["MPI_User_function *user_fn", "int commute", "MPI_Op *op"],
    "MPI_Grequest_start": ["MPI_Grequest_query_function *query_fn", "MPI_Grequest_free_function *free_fn",
                           "MPI_Grequest_cancel_function *cancel_fn", "MPI_Aint extra_state",
                           "MPI_Request *request"],
    "MPI_Info_create_env": ["MPI_Info *info"],
    "MPI_Register_datarep": ["const char *datarep", "MPI_Datarep_conversion_function *read_conversion_fn",
                             "MPI_Datarep_conversion_function *write_conversion_fn",
                             "MPI_Datarep_extent_function *dtype_file_extent_fn", "MPI_Aint extra_state"],
    "MPI_Comm_spawn": ["const char *command", "char *argv[]", "int maxprocs", "MPI_Info info", "int root",
                       "MPI_Comm comm", "MPI_Comm *intercomm", "int array_of_errcodes[]"],
    "MPI_Comm_spawn_multiple": ["int count", "char *array_of_commands[]", "char **array_of_argv[]",
                                "const int array_of_maxprocs[]", "const MPI_Info array_of_info[]", "int root",
                                "MPI_Comm comm", "MPI_Comm *intercomm", "int array_of_errcodes[]"],
}
for _k in ("Comm", "Type", "Win"):
    CUSTOM_VIEW[f"MPI_{_k}_create_keyval"] = [
        f"MPI_{_k}_copy_attr_function *{_k.lower()}_copy_attr_fn",
        f"MPI_{_k}_delete_attr_function *{_k.lower()}_delete_attr_fn", f"int *{_k.lower()}_keyval",
        "MPI_Aint extra_state"]
for _k in ("Comm", "Win", "File", "Session"):
    CUSTOM_VIEW[f"MPI_{_k}_create_errhandler"] = [f"MPI_{_k}_errhandler_function *{_k.lower()}_errhandler_fn",
                                                  "MPI_Errhandler *errhandler"]
# MPI-1 attribute calls: in `use mpi` only (the standard removed them from mpi_f08).
CUSTOM_VIEW_F77 = {
    "MPI_Attr_put": ["MPI_Comm comm", "int keyval", "int attribute_val"],
    "MPI_Attr_get": ["MPI_Comm comm", "int keyval", "int *attribute_val", "int *flag"],
    "MPI_Keyval_create": ["MPI_Copy_function *copy_fn", "MPI_Delete_function *delete_fn", "int *keyval",
                          "int extra_state"],
}


def errh(params):
    """Arguments of rmpi_cfi_raise naming whose error handler a bad buffer raises:
    the call's communicator, window or file, else MPI_COMM_SELF's (MPI-4.1 section 9.3)."""
    for p in params:
        sp = split_param(p)
        if sp and not sp[1] and not sp[3]:
            t = sp[0].replace("const ", "")
            if t in ("MPI_Comm", "MPI_Win", "MPI_File"):
                return f"'{t[4].lower()}', *{sp[2]}"
    return "'s', 0"


def fview(name, params):
    """The parameters as Fortran sees them: (name, kind, array, C type) with kind one of
    int, logical, ranges, handle, wide, buffer, ptr, status, string, proc (a callback whose
    C type names its Fortran abstract interface); None if not expressible."""
    out, decoded = [], [decode(p) for p in params]
    if None in decoded:
        return None
    for t, _, ptr, pname, dims in decoded:
        arr = bool(dims)
        if dims.count("[") > 1 and t == "int":
            kind = "ranges"
        elif t in HANDLES:
            if ptr == 1 and dims and (name, pname) not in HANDLE_ARRAYS:
                return None
            kind = "handle"
        elif t in ("int", "MPI_Fint") and ptr <= 1:
            kind = "logical" if pname in LOGICALS else "int"
            arr = arr or pname in INT_PTR_ARRAYS
        elif t in WIDE and ptr <= 1:
            kind = "wide"
        elif t == "void" and ptr == 1:
            kind = "ptr" if pname in PTR_OUT else "buffer"
        elif t == "MPI_Status" and ptr == 1:
            kind, arr = "status", arr or pname == "array_of_statuses"
        elif t.endswith("_function") and ptr == 1:
            kind = "proc"
        elif t == "char" and ptr == 1:
            kind, arr = "string", False
        elif t == "char" and ptr == 2:   # argv, array_of_commands
            kind, arr = "string", True
        elif t == "char" and ptr == 3:   # array_of_argv: ARRAY_OF_ARGV(COUNT, *)
            kind, arr = "string", "count, *"
        else:
            return None
        out.append((pname, kind, arr, t))
    return out


def fwrap(head, items, indent, paren=True):
    """A Fortran statement `head(items)` (or `head items`) in free form, continued past 100 columns."""
    lines, cur = [], indent + head + ("(" if paren else " ")
    for i, it in enumerate(items):
        piece = it + (", " if i < len(items) - 1 else (")" if paren else ""))
        if len(cur) + len(piece) > 100:
            lines.append(cur.rstrip() + " &")
            cur = indent + "    "
        cur += piece
    if not items and paren:
        cur += ")"
    lines.append(cur)
    return "\n".join(lines)


def fdecl(pname, kind, arr, t, style, async_=False):
    """Declarations of one dummy: style f77 (`use mpi`), f08 (an mpi_f08 procedure) or bindc
    (the BIND(C) interface that procedure calls). arr: True, or the bounds of an array."""
    dim = f"({arr})" if isinstance(arr, str) else "(*)" if arr else ""
    f77 = style == "f77"
    if kind == "ranges":
        return [f"integer :: {pname}(3, *)"]
    if kind == "int" or (kind == "handle" and f77):
        return [f"integer :: {pname}{dim}"]
    if kind == "logical":
        return [f"logical :: {pname}{dim}"]
    if kind == "handle":
        return [f"type({t}) :: {pname}{dim}"]
    if kind == "wide":
        return [f"integer(kind={FKIND[t]}) :: {pname}{dim}"]
    if kind in ("buffer", "ptr") and f77:
        # gfortran's spelling of the standard's "ignore type, kind and rank" (MPI-4.1 19.1.3)
        return [f"!GCC$ ATTRIBUTES NO_ARG_CHECK :: {pname}", f"type(*), dimension(*) :: {pname}"]
    if kind == "buffer":
        return [f"type(*), dimension(..){', asynchronous' if async_ else ''} :: {pname}"]
    if kind == "ptr":
        return [f"type(c_ptr) :: {pname}"]
    if kind == "status" and f77:
        return [f"integer :: {pname}(MPI_STATUS_SIZE{', *' if arr else ''})"]
    if kind == "status":
        return [f"type(MPI_Status) :: {pname}{dim}"]
    if kind == "proc":
        return [{"f77": f"external :: {pname}", "f08": f"procedure({t}) :: {pname}",
                 "bindc": f"type(c_funptr), value :: {pname}"}[style]]
    if style == "bindc":
        return [f"character(kind=c_char) :: {pname}(*)"]
    return [f"character(len=*) :: {pname}{dim}"]


# MPI_Sizeof (MPI-4.0 sec. 19.1.9): one specific per intrinsic type and kind; assumed rank
# lets one specific take scalars and arrays of every rank.
SIZEOF_TYPES = [("integer(1)", "i1"), ("integer(2)", "i2"), ("integer(4)", "i4"), ("integer(8)", "i8"),
                ("real(4)", "r4"), ("real(8)", "r8"), ("complex(4)", "c4"), ("complex(8)", "c8"),
                ("logical", "l"), ("character(len=*)", "ch")]


def sizeof_spec():
    """The generic MPI_Sizeof of a module's specification part (its specifics private)."""
    names = [f"rmpi_sizeof_{s}" for _, s in SIZEOF_TYPES]
    return (["interface MPI_Sizeof"] + [f"    module procedure {n}" for n in names] + ["end interface MPI_Sizeof",
            fwrap("private ::", names, "", paren=False)])


def sizeof_procedures(optional):
    """MPI_Sizeof's specifics: the bytes of one element (of one character for CHARACTER).
    optional: IERROR is optional (mpi_f08) rather than required (`use mpi`)."""
    out = []
    for t, s in SIZEOF_TYPES:
        n = f"rmpi_sizeof_{s}"
        out += [f"subroutine {n}(x, size, ierror)",
                f"    {t}, dimension(..), intent(in) :: x",
                "    integer, intent(out) :: size",
                f"    integer{', optional' if optional else ''}, intent(out) :: ierror"]
        if s == "ch":
            out += ["    size = storage_size('a') / 8",
                    "    if (len(x) > 0) size = storage_size(x) / 8 / len(x)"]
        else:
            out.append("    size = storage_size(x) / 8")
        out += ["    if (present(ierror)) ierror = MPI_SUCCESS" if optional else "    ierror = MPI_SUCCESS",
                f"end subroutine {n}"]
    return out


def f77_procedures():
    """The module procedures of `use mpi` (included after its CONTAINS)."""
    return "\n".join(["! Generated by tools/gen_fortran.py: do not edit."] + sizeof_procedures(False)) + "\n"


def f77_interfaces(protos):
    """The explicit interfaces of `use mpi` (included by bindings/fortran/mpi.f90)."""
    out = ["! Generated by tools/gen_fortran.py from include/mpi.h: do not edit.",
           "! The explicit interfaces of `use mpi`: a wrong argument count or type is a compile",
           "! error. Choice buffers ignore type, kind and rank (gfortran's NO_ARG_CHECK).",
           "interface"]
    for name, view in protos:
        args = [v[0] for v in view] + ["ierror"]
        out.append(fwrap(f"subroutine {name}", args, "    "))
        out.append("        import")
        out.append("        implicit none")
        for v in view:
            out += ["        " + d for d in fdecl(*v, "f77")]
        out.append("        integer :: ierror")
        out.append(f"    end subroutine {name}")
    # The compiler must assume buf changed (MPI-4.0 sec. 19.1.17): an opaque no-op in C.
    out += ["    subroutine MPI_F_sync_reg(buf)", "        !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf",
            "        type(*), dimension(*) :: buf", "    end subroutine MPI_F_sync_reg", "end interface"]
    out += sizeof_spec()
    return "\n".join(out) + "\n"


def f08_procedure(name, sname, view, binding):
    """One mpi_f08 procedure sname (of generic name) with an optional ierror, calling the C
    entry point `binding` (the `use mpi` wrapper, or rmpi_f08_* for buffers and large counts)."""
    async_ = bool(ASYNC.match(name))
    args = [v[0] for v in view]
    strs = [v[0] for v in view if v[1] == "string"]
    out = [fwrap(f"subroutine {sname}", args + ["ierror"], "    ")]
    out += ["        " + d for v in view for d in fdecl(*v, "f08", async_)]
    out.append("        integer, optional, intent(out) :: ierror")
    out.append("        integer :: rmpi_ierr")
    out.append("        interface")
    out.append(fwrap("subroutine rmpi_c", args + ["ierror"] + [s + "_len" for s in strs], "            ")
               + f" &\n                bind(C, name=\"{binding}\")")
    out.append("                import")
    out.append("                implicit none")
    out += ["                " + d for v in view for d in fdecl(*v, "bindc", async_)]
    out.append("                integer :: ierror")
    out += [f"                integer(c_size_t), value :: {s}_len" for s in strs]
    out.append("            end subroutine rmpi_c")
    out.append("        end interface")
    actual = [f"c_funloc({v[0]})" if v[1] == "proc" else v[0] for v in view]
    out.append(fwrap("        call rmpi_c", actual + ["rmpi_ierr"] + [f"len({s}, kind=c_size_t)" for s in strs], ""))
    out.append("        if (present(ierror)) ierror = rmpi_ierr")
    out.append(f"    end subroutine {sname}")
    return "\n".join(out)


F08_KINDS = ["MPI_Comm", "MPI_Datatype", "MPI_Group", "MPI_Request", "MPI_Op", "MPI_Info", "MPI_Win",
             "MPI_File", "MPI_Errhandler", "MPI_Message", "MPI_Session"]


def f08_module(protos):
    """mpi_f08: the standard's handle types (one INTEGER MPI_VAL, the value of `use mpi`),
    TYPE(MPI_Status) laid out as C's, and a procedure per function calling a C entry point."""
    out = ["! Generated by tools/gen_fortran.py from include/mpi.h: do not edit.",
           "! mpi_f08 for gfortran (bindings/fortran/README.md): handles are the standard's derived",
           "! types whose MPI_VAL is the `use mpi` INTEGER handle, so each procedure calls the same",
           "! C entry point as `use mpi` through BIND(C) (buffers as TYPE(*), DIMENSION(..)",
           "! descriptors), with IERROR optional.",
           "module mpi_f08",
           "    use, intrinsic :: iso_c_binding, only: c_int, c_char, c_size_t, c_double, c_ptr, c_funptr, c_funloc",
           "    implicit none",
           "    private :: c_int, c_char, c_size_t, c_double, c_funptr, c_funloc"]
    for k in F08_KINDS:
        out += [f"    type, bind(C) :: {k}", "        integer(c_int) :: MPI_VAL", f"    end type {k}"]
    out += ["    type, bind(C) :: MPI_Status",
            "        integer(c_int) :: MPI_SOURCE, MPI_TAG, MPI_ERROR",
            "        integer(c_int), private :: MPI_internal(5)",
            "    end type MPI_Status",
            "    include 'mpi_f08_consts.h'",
            "    abstract interface",
            "        subroutine MPI_User_function(invec, inoutvec, len, datatype)",
            "            import",
            "            type(c_ptr), value :: invec, inoutvec",
            "            integer :: len",
            "            type(MPI_Datatype) :: datatype",
            "        end subroutine MPI_User_function"]
    # The callbacks receive what the trampolines of fortran_wrappers.c pass: the same
    # registers as the f77 forms (pointers to the vectors, everything else by reference).
    for k in ERRHANDLER_KINDS:
        out += [f"        subroutine MPI_{k}_errhandler_function({k.lower()}, error_code)",
                "            import",
                f"            type(MPI_{k}) :: {k.lower()}",
                "            integer :: error_code",
                f"        end subroutine MPI_{k}_errhandler_function"]
    out += ["        subroutine MPI_Grequest_query_function(extra_state, status, ierror)",
            "            import",
            "            integer(kind=MPI_ADDRESS_KIND) :: extra_state",
            "            type(MPI_Status) :: status",
            "            integer :: ierror",
            "        end subroutine MPI_Grequest_query_function",
            "        subroutine MPI_Grequest_free_function(extra_state, ierror)",
            "            import",
            "            integer(kind=MPI_ADDRESS_KIND) :: extra_state",
            "            integer :: ierror",
            "        end subroutine MPI_Grequest_free_function",
            "        subroutine MPI_Grequest_cancel_function(extra_state, complete, ierror)",
            "            import",
            "            integer(kind=MPI_ADDRESS_KIND) :: extra_state",
            "            logical :: complete",
            "            integer :: ierror",
            "        end subroutine MPI_Grequest_cancel_function",
            "        subroutine MPI_Datarep_conversion_function(userbuf, datatype, count, filebuf, position, &",
            "                extra_state, ierror)",
            "            import",
            "            type(c_ptr), value :: userbuf, filebuf",
            "            type(MPI_Datatype) :: datatype",
            "            integer :: count, ierror",
            "            integer(kind=MPI_OFFSET_KIND) :: position",
            "            integer(kind=MPI_ADDRESS_KIND) :: extra_state",
            "        end subroutine MPI_Datarep_conversion_function",
            "        subroutine MPI_Datarep_extent_function(datatype, extent, extra_state, ierror)",
            "            import",
            "            type(MPI_Datatype) :: datatype",
            "            integer(kind=MPI_ADDRESS_KIND) :: extent, extra_state",
            "            integer :: ierror",
            "        end subroutine MPI_Datarep_extent_function"]
    for kind, ck, old, obj in KEYVAL_KINDS:
        ft = "MPI_Datatype" if ck == "Type" else f"MPI_{ck}"
        key = f"{kind.lower()}_keyval"
        out += [f"        subroutine MPI_{kind}_copy_attr_function({old}, {key}, extra_state, &",
                "                attribute_val_in, attribute_val_out, flag, ierror)",
                "            import",
                f"            type({ft}) :: {old}",
                f"            integer :: {key}, ierror",
                "            integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out",
                "            logical :: flag",
                f"        end subroutine MPI_{kind}_copy_attr_function",
                f"        subroutine MPI_{kind}_delete_attr_function({obj}, {key}, attribute_val, extra_state, ierror)",
                "            import",
                f"            type({ft}) :: {obj}",
                f"            integer :: {key}, ierror",
                "            integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state",
                f"        end subroutine MPI_{kind}_delete_attr_function"]
    out += ["    end interface",
            "    ! the C symbol mpi_conversion_fn_null_, as mpif.h's EXTERNAL names it",
            "    procedure(MPI_Datarep_conversion_function) :: MPI_CONVERSION_FN_NULL",
            "    ! The special addresses are the common blocks of mpif.h, so the wrappers",
            "    ! recognise them the same way from both bindings.",
            "    integer(c_int), bind(C, name=\"mpi_fortran_bottom_\"), target :: MPI_BOTTOM",
            "    integer(c_int), bind(C, name=\"mpi_fortran_in_place_\"), target :: MPI_IN_PLACE",
            "    type(MPI_Status), bind(C, name=\"mpi_fortran_status_ignore_\"), target :: MPI_STATUS_IGNORE",
            "    type(MPI_Status), bind(C, name=\"mpi_fortran_statuses_ignore_\"), target :: MPI_STATUSES_IGNORE(1)",
            "    integer(c_int), bind(C, name=\"mpi_fortran_errcodes_ignore_\"), target :: MPI_ERRCODES_IGNORE(1)",
            "    integer(c_int), bind(C, name=\"mpi_fortran_unweighted_\"), target :: MPI_UNWEIGHTED(1)",
            "    integer(c_int), bind(C, name=\"mpi_fortran_weights_empty_\"), target :: MPI_WEIGHTS_EMPTY(1)",
            "    character(kind=c_char), bind(C, name=\"mpi_fortran_argv_null_\"), target :: MPI_ARGV_NULL(1)",
            "    character(kind=c_char), bind(C, name=\"mpi_fortran_argvs_null_\"), target :: MPI_ARGVS_NULL(1, 1)",
            "    interface operator(==)"]
    out += [f"        module procedure rmpi_eq_{k[4:].lower()}" for k in F08_KINDS]
    out += ["    end interface", "    interface operator(/=)"]
    out += [f"        module procedure rmpi_ne_{k[4:].lower()}" for k in F08_KINDS]
    out += ["    end interface",
            fwrap("private ::", [f"rmpi_eq_{k[4:].lower()}, rmpi_ne_{k[4:].lower()}" for k in F08_KINDS],
                  "    ", paren=False),
            "    interface",
            "        function MPI_Wtime() bind(C, name=\"mpi_wtime_\")",
            "            import",
            "            real(c_double) :: MPI_Wtime",
            "        end function MPI_Wtime",
            "        function MPI_Wtick() bind(C, name=\"mpi_wtick_\")",
            "            import",
            "            real(c_double) :: MPI_Wtick",
            "        end function MPI_Wtick",
            "        function MPI_Aint_add(base, disp) bind(C, name=\"mpi_aint_add_\")",
            "            import",
            "            integer(kind=MPI_ADDRESS_KIND) :: base, disp, MPI_Aint_add",
            "        end function MPI_Aint_add",
            "        function MPI_Aint_diff(addr1, addr2) bind(C, name=\"mpi_aint_diff_\")",
            "            import",
            "            integer(kind=MPI_ADDRESS_KIND) :: addr1, addr2, MPI_Aint_diff",
            "        end function MPI_Aint_diff",
            "    end interface",
            "    interface MPI_F_sync_reg",
            "        subroutine MPI_F_sync_reg_f08(buf) bind(C, name=\"mpi_f_sync_reg_\")",
            "            type(*), dimension(..) :: buf",
            "        end subroutine MPI_F_sync_reg_f08",
            "    end interface MPI_F_sync_reg"]
    out += ["    " + line for line in sizeof_spec()]
    for conv in ("f2f08", "f082f"):
        out += [f"    interface MPI_Status_{conv}", f"        module procedure MPI_Status_{conv}_f08",
                f"    end interface MPI_Status_{conv}"]
    for name, sname, view, binding in protos:
        out += [f"    interface {name}", f"        module procedure {sname}", f"    end interface {name}"]
    out.append("contains")
    for k in F08_KINDS:
        s = k[4:].lower()
        for op, sym in (("eq", "=="), ("ne", "/=")):
            out += [f"    elemental logical function rmpi_{op}_{s}(a, b)",
                    f"        type({k}), intent(in) :: a, b",
                    f"        rmpi_{op}_{s} = a%MPI_VAL {sym} b%MPI_VAL",
                    f"    end function rmpi_{op}_{s}"]
    for name, sname, view, binding in protos:
        out.append(f08_procedure(name, sname, view, binding))
    out += ["    " + line for line in sizeof_procedures(True)]
    # The status conversions call the C library's (MPI-4.0 sec. 19.3.5).
    for conv, fin, fout in (("f2f08", "integer(c_int), intent(in) :: f_status(MPI_STATUS_SIZE)",
                             "type(MPI_Status), intent(out) :: f08_status"),
                            ("f082f", "type(MPI_Status), intent(in) :: f08_status",
                             "integer(c_int), intent(out) :: f_status(MPI_STATUS_SIZE)")):
        a, b = ("f_status", "f08_status") if conv == "f2f08" else ("f08_status", "f_status")
        out += [f"    subroutine MPI_Status_{conv}_f08({a}, {b}, ierror)",
                f"        {fin}", f"        {fout}",
                "        integer, optional, intent(out) :: ierror",
                "        integer :: rmpi_ierr",
                "        interface",
                f"            integer(c_int) function rmpi_c({a}, {b}) bind(C, name=\"MPI_Status_{conv}\")",
                "                import",
                f"                {fin}", f"                {fout}",
                "            end function rmpi_c",
                "        end interface",
                f"        rmpi_ierr = rmpi_c({a}, {b})",
                "        if (present(ierror)) ierror = rmpi_ierr",
                f"    end subroutine MPI_Status_{conv}_f08"]
    # The predefined attribute callbacks, as the standard's mpi_f08 has them.
    for kind, ck, old, obj in KEYVAL_KINDS:
        ft = "MPI_Datatype" if ck == "Type" else f"MPI_{ck}"
        key = f"{kind.lower()}_keyval"
        for fn, body in (("NULL_COPY_FN", ["flag = .false."]),
                         ("DUP_FN", ["attribute_val_out = attribute_val_in", "flag = .true."])):
            out += [f"    subroutine MPI_{kind.upper()}_{fn}({old}, {key}, extra_state, attribute_val_in, &",
                    "            attribute_val_out, flag, ierror)",
                    f"        type({ft}) :: {old}",
                    f"        integer :: {key}, ierror",
                    "        integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out",
                    "        logical :: flag"]
            out += ["        " + b for b in body]
            out += ["        ierror = MPI_SUCCESS", f"    end subroutine MPI_{kind.upper()}_{fn}"]
        out += [f"    subroutine MPI_{kind.upper()}_NULL_DELETE_FN({obj}, {key}, attribute_val, extra_state, ierror)",
                f"        type({ft}) :: {obj}",
                f"        integer :: {key}, ierror",
                "        integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state",
                "        ierror = MPI_SUCCESS",
                f"    end subroutine MPI_{kind.upper()}_NULL_DELETE_FN"]
    out.append("end module mpi_f08")
    return "\n".join(out) + "\n"

def wrapper(name, params, f08=False):
    """C source of the Fortran wrapper, or None when an argument cannot be converted.
    f08: the entry point of mpi_f08 for a function with choice buffers (rmpi_f08_<name>):
    the same conversions, but each buffer arrives as a CFI descriptor (TYPE(*), DIMENSION(..)):
    a blocking call copies a non-contiguous section through a contiguous buffer, a call that
    keeps the buffer (ASYNC) refuses it."""
    fargs, pre, call, post = [], [], [], []
    checks, sections = [], []
    lens, decoded = [], [decode(p) for p in params]
    if None in decoded:
        return None
    for t, const, ptr, pname, dims in decoded:
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
                # an expression may name earlier parameters: {sendbuf} is what the call passes
                given = {decode(q)[3]: c for q, c in zip(params, call)}
                pre.append(f"int n_{pname} = {n[1:].format(**given)};" if n.startswith("@") else
                           f"int n_{pname} = *{n} > 0 ? *{n} : 0;")
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
        elif t == "void" and ptr == 1 and f08 and pname not in PTR_OUT:
            fargs.append(f"CFI_cdesc_t *{pname}")
            if name == "MPI_Get_address":   # the first element's address, section or not
                call.append(f"{pname}->base_addr")
            elif ASYNC.match(name):
                checks.append(f"if (!rmpi_cfi_contiguous({pname})) {{")
                checks.append(f"    *ierror = rmpi_cfi_raise(\"{name}\", \"{pname}\", rmpi_cfi_async_msg, "
                              f"MPI_ERR_BUFFER, {errh(params)});")
                checks.append("    return;")
                checks.append("}")
                call.append(f"rmpi_f_buf({pname}->base_addr)")
            else:
                checks.append(f"void *t_{pname} = NULL, *b_{pname} = rmpi_cfi_copy_in({pname}, &t_{pname});")
                sections.append(pname)
                call.append(f"b_{pname}")
                if not const:
                    post.append(f"if (t_{pname})")
                    post.append(f"    rmpi_cfi_copy_out({pname}, t_{pname});")
                post.append(f"free(t_{pname});")
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
    if sections:
        checks.append("if (" + " || ".join(f"b_{b} == RMPI_CFI_NOMEM" for b in sections) + ") {")
        checks += [f"    free(t_{b});" for b in sections]
        checks.append(f"    *ierror = rmpi_cfi_raise(\"{name}\", \"{'/'.join(sections)}\", rmpi_cfi_nomem_msg, "
                      f"MPI_ERR_NO_MEM, {errh(params)});")
        checks.append("    return;")
        checks.append("}")
    fname = "rmpi_f08_" + name[4:].lower() if f08 else name.lower() + "_"
    sig = ", ".join(fargs + ["MPI_Fint *ierror"] + lens)
    body = [f"void {fname}({sig})", "{"]
    body += ["    " + s for s in checks + pre]
    body.append(f"    int rc = {name}({', '.join(call)});")
    body += ["    " + s for s in post]
    body.append("    *ierror = rc;")
    body.append("}")
    return "\n".join(body)


# What every stub calls; written only when some function has a stub (none today).
UNSUPPORTED = """static int rmpi_f_unsupported(const char *name)
{
    fprintf(stderr, "[rmpi] %s is not available from Fortran in this version of RailMPI "
                    "(its callback or argument list has no Fortran conversion yet); it returns "
                    "MPI_ERR_UNSUPPORTED_OPERATION.\\n", name);
    return MPI_ERR_UNSUPPORTED_OPERATION;
}"""


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
 * a common block /X/ x_); a wrapper recognises them by address. Each has the size mpif.h and
 * the mpi module give it (one INTEGER, one CHARACTER, one status), so the linker merges the
 * definitions without a size warning. */
#define RMPI_F_COMMON(type, name, n) type name[n] __attribute__((aligned(64)))
RMPI_F_COMMON(int, mpi_fortran_bottom_, 1);
RMPI_F_COMMON(int, mpi_fortran_in_place_, 1);
RMPI_F_COMMON(int, mpi_fortran_status_ignore_, sizeof(MPI_Status) / sizeof(int));
RMPI_F_COMMON(int, mpi_fortran_statuses_ignore_, sizeof(MPI_Status) / sizeof(int));
RMPI_F_COMMON(int, mpi_fortran_errcodes_ignore_, 1);
RMPI_F_COMMON(int, mpi_fortran_unweighted_, 1);
RMPI_F_COMMON(int, mpi_fortran_weights_empty_, 1);
RMPI_F_COMMON(char, mpi_fortran_argv_null_, 1);
RMPI_F_COMMON(char, mpi_fortran_argvs_null_, 1);

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

/* How many datatypes a per-peer array of the Alltoallw family holds: the group's size, the
 * remote group's for an intercommunicator. An invalid communicator gives 0 (the error is
 * then raised by the query, naming it). */
static int rmpi_f_peers(MPI_Fint comm)
{
    MPI_Comm c = MPI_Comm_fromint(comm);
    int inter = 0, n = 0;
    if (MPI_Comm_test_inter(c, &inter) != MPI_SUCCESS)
        return 0;
    if ((inter ? MPI_Comm_remote_size(c, &n) : MPI_Comm_size(c, &n)) != MPI_SUCCESS)
        return 0;
    return n;
}

/* The same for the neighbor forms: the topology's out-degree (out = 1) or in-degree. */
static int rmpi_f_degree(MPI_Fint comm, int out)
{
    MPI_Comm c = MPI_Comm_fromint(comm);
    int topo = MPI_UNDEFINED, n = 0, indeg = 0, outdeg = 0, weighted = 0, rank = 0;
    if (MPI_Topo_test(c, &topo) != MPI_SUCCESS)
        return 0;
    if (topo == MPI_CART && MPI_Cartdim_get(c, &n) == MPI_SUCCESS)
        return 2 * n;
    if (topo == MPI_GRAPH && MPI_Comm_rank(c, &rank) == MPI_SUCCESS &&
        MPI_Graph_neighbors_count(c, rank, &n) == MPI_SUCCESS)
        return n;
    if (topo == MPI_DIST_GRAPH && MPI_Dist_graph_neighbors_count(c, &indeg, &outdeg, &weighted) == MPI_SUCCESS)
        return out ? outdeg : indeg;
    return 0;
}

void mpi_init_(MPI_Fint *ierror) { *ierror = MPI_Init(NULL, NULL); }

void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror)
{
    *ierror = MPI_Init_thread(NULL, NULL, *required, provided);
}

double mpi_wtime_(void) { return MPI_Wtime(); }

/* MPI_F_sync_reg: the call itself is the point (MPI-4.0 sec. 19.1.17). The compiler cannot
   see into it, so it must assume buf was read and changed. */
void mpi_f_sync_reg_(void *buf) { (void)buf; }
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


F08_PRELUDE = r'''
/* mpi_f08's entry points for functions with choice buffers: a TYPE(*), DIMENSION(..) dummy
 * arrives as a C descriptor (ISO_Fortran_binding.h, Fortran 2018 section 18.5). Contiguous
 * data passes its base address. A non-contiguous section means its elements in array element
 * order (sequence association, MPI-4.1 section 19.1.12): a blocking call copies them into a
 * contiguous buffer and, for an output buffer, back after the call; a nonblocking, persistent
 * or one-sided call keeps using the buffer after it returns, so there it is refused, never
 * sent as if it were contiguous. */
#include <ISO_Fortran_binding.h>

static const char rmpi_cfi_async_msg[] =
    "a non-contiguous array section passed through mpi_f08 to a call that keeps using its buffer "
    "after it returns (nonblocking, persistent or one-sided); RailMPI copies sections only for "
    "blocking calls (pass a contiguous array, or describe the layout with a derived datatype)";
static const char rmpi_cfi_nomem_msg[] = "no memory for a contiguous copy of a non-contiguous array section";
static const char rmpi_cfi_nomem_mark;
#define RMPI_CFI_NOMEM ((void *)&rmpi_cfi_nomem_mark)

static int rmpi_cfi_contiguous(const CFI_cdesc_t *d)
{
    return d->rank == 0 || d->base_addr == NULL || CFI_is_contiguous(d);
}

/* Walks the section in array element order, copying each element to (to_section = 0) or
 * from (1) the contiguous buffer flat. */
static void rmpi_cfi_walk(const CFI_cdesc_t *d, char *flat, int to_section)
{
    CFI_index_t idx[CFI_MAX_RANK] = {0};
    size_t n = 1;
    for (int r = 0; r < d->rank; r++)
        n *= (size_t)d->dim[r].extent;
    for (size_t k = 0; k < n; k++) {
        char *p = d->base_addr;
        for (int r = 0; r < d->rank; r++)
            p += idx[r] * d->dim[r].sm;
        if (to_section)
            memcpy(p, flat + k * d->elem_len, d->elem_len);
        else
            memcpy(flat + k * d->elem_len, p, d->elem_len);
        for (int r = 0; r < d->rank && ++idx[r] == d->dim[r].extent; r++)
            idx[r] = 0;
    }
}

/* The address a blocking call uses: the data itself, or a contiguous copy in *tmp. */
static void *rmpi_cfi_copy_in(CFI_cdesc_t *d, void **tmp)
{
    if (rmpi_cfi_contiguous(d))
        return rmpi_f_buf(d->base_addr);
    size_t n = 1;
    for (int r = 0; r < d->rank; r++)
        n *= (size_t)d->dim[r].extent;
    *tmp = malloc(n * d->elem_len + 1);
    if (*tmp == NULL)
        return RMPI_CFI_NOMEM;
    rmpi_cfi_walk(d, *tmp, 0);
    return *tmp;
}

static void rmpi_cfi_copy_out(CFI_cdesc_t *d, void *tmp) { rmpi_cfi_walk(d, tmp, 1); }

/* An error found here, raised like the library's own: on the call's communicator, window or
 * file, else on MPI_COMM_SELF (MPI-4.1 section 9.3). */
static int rmpi_cfi_raise(const char *fn, const char *arg, const char *msg, int code, char kind, MPI_Fint handle)
{
    fprintf(stderr, "[rmpi] %s (argument %s): %s.\n", fn, arg, msg);
    if (kind == 'c')
        MPI_Comm_call_errhandler(MPI_Comm_fromint(handle), code);
    else if (kind == 'w')
        MPI_Win_call_errhandler(MPI_Win_fromint(handle), code);
    else if (kind == 'f')
        MPI_File_call_errhandler(MPI_File_fromint(handle), code);
    else
        MPI_Comm_call_errhandler(MPI_COMM_SELF, code);
    return code;
}
'''


N_FORTRAN_PROCS = 32
ERRHANDLER_KINDS = ("Comm", "Win", "File", "Session")


def callbacks():
    """mpi_op_create_ and mpi_<kind>_create_errhandler_: a C callback has no context argument,
    so each Fortran procedure gets one of N_FORTRAN_PROCS trampolines per family, which hands
    it its handle as an INTEGER (the same registers as an mpi_f08 TYPE(MPI_<Kind>))."""
    out = ["/* Fortran procedures given to the library as callbacks. A C callback carries no",
           " * context, so each Fortran procedure is bound to one trampoline of a fixed set. */",
           "typedef void (*rmpi_f_proc)(void);",
           "typedef void (*rmpi_f_op_fn)(void *, void *, MPI_Fint *, MPI_Fint *);",
           "typedef void (*rmpi_f_eh_fn)(MPI_Fint *, MPI_Fint *);",
           f"#define RMPI_F_PROCS {N_FORTRAN_PROCS}",
           """/* The trampoline slot of fn in table (taking a free one), or -1 when all are bound. */
static int rmpi_f_slot(rmpi_f_proc *table, int *n, rmpi_f_proc fn, const char *what)
{
    int slot = 0;
    while (slot < *n && table[slot] != fn)
        slot++;
    if (slot == RMPI_F_PROCS) {
        fprintf(stderr, "[rmpi] %s: more than %d different Fortran procedures; RailMPI's Fortran "
                        "bindings bind at most that many (MPI_ERR_INTERN).\\n", what, RMPI_F_PROCS);
        return -1;
    }
    if (slot == *n)
        table[(*n)++] = fn;
    return slot;
}"""]
    # family: (table, trampoline parameters, conversion and call, C callback type)
    fams = [("f_op", "void *in, void *io, int *len, MPI_Datatype *dt",
             "MPI_Fint d = MPI_Type_toint(*dt);\n    ((rmpi_f_op_fn)f_op[{i}])(in, io, len, &d);",
             "MPI_User_function")]
    for k in ERRHANDLER_KINDS:
        fams.append((f"f_eh_{k.lower()}", f"MPI_{k} *h, int *code, ...",
                     f"MPI_Fint f = MPI_{k}_toint(*h);\n    ((rmpi_f_eh_fn)f_eh_{k.lower()}[{{i}}])(&f, code);",
                     f"MPI_{k}_errhandler_function"))
    for table, params, body, ctype in fams:
        out.append(f"static rmpi_f_proc {table}[RMPI_F_PROCS];\nstatic int n_{table};")
        for i in range(N_FORTRAN_PROCS):
            out.append(f"static void {table}_{i}({params})\n{{\n    {body.format(i=i)}\n}}")
        out.append(f"static {ctype} *const {table}_tramps[RMPI_F_PROCS] = {{" +
                   ", ".join(f"{table}_{i}" for i in range(N_FORTRAN_PROCS)) + "};")
    out.append("""void mpi_op_create_(rmpi_f_proc fn, MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierror)
{
    int slot = rmpi_f_slot(f_op, &n_f_op, fn, "MPI_Op_create");
    MPI_Op o = MPI_OP_NULL;
    *ierror = slot < 0 ? MPI_ERR_INTERN : MPI_Op_create(f_op_tramps[slot], *commute, &o);
    if (*ierror == MPI_SUCCESS)
        *op = MPI_Op_toint(o);
}""")
    for k in ERRHANDLER_KINDS:
        t = f"f_eh_{k.lower()}"
        out.append(f"""void mpi_{k.lower()}_create_errhandler_(rmpi_f_proc fn, MPI_Fint *errhandler, MPI_Fint *ierror)
{{
    int slot = rmpi_f_slot({t}, &n_{t}, fn, "MPI_{k}_create_errhandler");
    MPI_Errhandler e = MPI_ERRHANDLER_NULL;
    *ierror = slot < 0 ? MPI_ERR_INTERN : MPI_{k}_create_errhandler({t}_tramps[slot], &e);
    if (*ierror == MPI_SUCCESS)
        *errhandler = MPI_Errhandler_toint(e);
}}""")
    return "\n\n".join(out + keyvals() + [GREQUEST, DATAREP])


# MPI_Register_datarep: the C library registers names whose conversions are both null (views
# then keep the native layout and no callback is ever called), so a Fortran conversion
# function, which would need a trampoline taking choice buffers, is refused instead.
DATAREP = """/* MPI_CONVERSION_FN_NULL as Fortran passes it: a procedure known by its address only. */
void mpi_conversion_fn_null_(void) {}

void mpi_register_datarep_(const char *datarep, rmpi_f_proc read_fn, rmpi_f_proc write_fn, rmpi_f_proc extent_fn,
                           MPI_Aint *extra_state, MPI_Fint *ierror, size_t datarep_len)
{
    char *name = rmpi_f_cstr(datarep, datarep_len);
    (void)extent_fn;
    if (read_fn != mpi_conversion_fn_null_ || write_fn != mpi_conversion_fn_null_) {
        fprintf(stderr, "[rmpi] MPI_Register_datarep('%s'): RailMPI takes no conversion functions from Fortran; "
                        "pass MPI_CONVERSION_FN_NULL for both (the data then keeps the native layout): "
                        "MPI_ERR_UNSUPPORTED_OPERATION.\\n", name ? name : "");
        *ierror = MPI_ERR_UNSUPPORTED_OPERATION;
    } else {
        *ierror = name ? MPI_Register_datarep(name, MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, NULL,
                                              (void *)(intptr_t)*extra_state)
                       : MPI_ERR_NO_MEM;
    }
    free(name);
}"""


# Generalized requests: the C callbacks get extra_state, a record of the Fortran procedures
# and the user's extra_state, freed after the free callback (the library's last call).
GREQUEST = """typedef void (*rmpi_f_query_fn)(MPI_Aint *, MPI_Fint *, MPI_Fint *);
typedef void (*rmpi_f_free_fn)(MPI_Aint *, MPI_Fint *);
typedef void (*rmpi_f_cancel_fn)(MPI_Aint *, MPI_Fint *, MPI_Fint *);
typedef struct {
    rmpi_f_proc query, free, cancel;
    MPI_Aint extra;
} rmpi_f_greq_t;

static int f_greq_query(void *extra, MPI_Status *status)
{
    rmpi_f_greq_t *g = extra;
    MPI_Fint err = MPI_SUCCESS;
    ((rmpi_f_query_fn)g->query)(&g->extra, (MPI_Fint *)(void *)status, &err);
    return err;
}

static int f_greq_free(void *extra)
{
    rmpi_f_greq_t *g = extra;
    MPI_Fint err = MPI_SUCCESS;
    ((rmpi_f_free_fn)g->free)(&g->extra, &err);
    free(g);
    return err;
}

static int f_greq_cancel(void *extra, int complete)
{
    rmpi_f_greq_t *g = extra;
    MPI_Fint err = MPI_SUCCESS, done = complete != 0;
    ((rmpi_f_cancel_fn)g->cancel)(&g->extra, &done, &err);
    return err;
}

void mpi_grequest_start_(rmpi_f_proc query, rmpi_f_proc free_fn, rmpi_f_proc cancel, MPI_Aint *extra,
                         MPI_Fint *request, MPI_Fint *ierror)
{
    rmpi_f_greq_t *g = malloc(sizeof *g);
    if (g == NULL) {
        *ierror = MPI_ERR_NO_MEM;
        return;
    }
    *g = (rmpi_f_greq_t){query, free_fn, cancel, *extra};
    MPI_Request r = MPI_REQUEST_NULL;
    *ierror = MPI_Grequest_start(f_greq_query, f_greq_free, f_greq_cancel, g, &r);
    if (*ierror == MPI_SUCCESS)
        *request = MPI_Request_toint(r);
    else
        free(g);
}

/* MPI_Comm_spawn from Fortran: ARGV is CHARACTER(LEN=argv_len) ARGV(*) ended by a blank
 * entry, or MPI_ARGV_NULL; it is read at the root only, where it is significant. */
static char **rmpi_f_argv(const char *a, size_t len, size_t step)
{
    size_t n = 0;
    for (;; n++) {
        size_t k = 0;
        while (k < len && a[n * step + k] == ' ')
            k++;
        if (k == len)
            break;
    }
    char **v = calloc(n + 1, sizeof *v);
    for (size_t i = 0; v != NULL && i < n; i++)
        v[i] = rmpi_f_cstr(a + i * step, len);
    return v;
}

static void rmpi_f_argv_free(char **v)
{
    for (size_t i = 0; v != NULL && v[i] != NULL; i++)
        free(v[i]);
    free(v);
}

void mpi_comm_spawn_(char *command, char *argv, MPI_Fint *maxprocs, MPI_Fint *info, MPI_Fint *root, MPI_Fint *comm,
                     MPI_Fint *intercomm, MPI_Fint *array_of_errcodes, MPI_Fint *ierror, size_t command_len,
                     size_t argv_len)
{
    int rank = -1;
    MPI_Comm c = MPI_Comm_fromint(*comm), inter = MPI_COMM_NULL;
    char **av = NULL;
    if (MPI_Comm_rank(c, &rank) == MPI_SUCCESS && rank == *root && (void *)argv != (void *)mpi_fortran_argv_null_)
        av = rmpi_f_argv(argv, argv_len, argv_len);
    char *cmd = rmpi_f_cstr(command, command_len);
    *ierror = MPI_Comm_spawn(cmd, av, *maxprocs, MPI_Info_fromint(*info), *root, c, &inter,
                             (void *)array_of_errcodes == (void *)mpi_fortran_errcodes_ignore_ ? MPI_ERRCODES_IGNORE
                                                                                             : array_of_errcodes);
    *intercomm = MPI_Comm_toint(inter);
    rmpi_f_argv_free(av);
    free(cmd);
}

/* ARRAY_OF_ARGV(COUNT, *): the arguments of command i are column entries (i, 1), (i, 2)...
 * Like the commands, they are read at the root only. */
void mpi_comm_spawn_multiple_(MPI_Fint *count, char *array_of_commands, char *array_of_argv,
                              MPI_Fint *array_of_maxprocs, MPI_Fint *array_of_info, MPI_Fint *root, MPI_Fint *comm,
                              MPI_Fint *intercomm, MPI_Fint *array_of_errcodes, MPI_Fint *ierror,
                              size_t commands_len, size_t argv_len)
{
    int rank = -1, n = 0;
    MPI_Comm c = MPI_Comm_fromint(*comm), inter = MPI_COMM_NULL;
    char **cmds = NULL, ***avs = NULL;
    MPI_Info *infos = NULL;
    if (MPI_Comm_rank(c, &rank) == MPI_SUCCESS && rank == *root && *count > 0) {
        n = *count;
        cmds = calloc((size_t)n + 1, sizeof *cmds);
        infos = calloc((size_t)n + 1, sizeof *infos);
        if ((void *)array_of_argv != (void *)mpi_fortran_argvs_null_)
            avs = calloc((size_t)n + 1, sizeof *avs);
        for (int i = 0; cmds != NULL && infos != NULL && i < n; i++) {
            cmds[i] = rmpi_f_cstr(array_of_commands + (size_t)i * commands_len, commands_len);
            infos[i] = MPI_Info_fromint(array_of_info[i]);
            if (avs != NULL)
                avs[i] = rmpi_f_argv(array_of_argv + (size_t)i * argv_len, argv_len, (size_t)n * argv_len);
        }
    }
    *ierror = MPI_Comm_spawn_multiple(*count, cmds, avs, array_of_maxprocs, infos, *root, c, &inter,
                                      (void *)array_of_errcodes == (void *)mpi_fortran_errcodes_ignore_
                                          ? MPI_ERRCODES_IGNORE
                                          : array_of_errcodes);
    *intercomm = MPI_Comm_toint(inter);
    for (int i = 0; i < n; i++) {
        free(cmds ? cmds[i] : NULL);
        rmpi_f_argv_free(avs ? avs[i] : NULL);
    }
    free(cmds);
    free(avs);
    free(infos);
}

/* From Fortran, MPI_Info_create_env takes no argument list (MPI-4.1 section 11.4). */
void mpi_info_create_env_(MPI_Fint *info, MPI_Fint *ierror)
{
    MPI_Info i = MPI_INFO_NULL;
    *ierror = MPI_Info_create_env(0, NULL, &i);
    if (*ierror == MPI_SUCCESS)
        *info = MPI_Info_toint(i);
}"""


# Objects with attributes and keyvals from Fortran: (Kind in MPI_<Kind>_create_keyval, the
# handle's C kind, the handle argument names of the copy and delete callbacks).
KEYVAL_KINDS = (("Comm", "Comm", "oldcomm", "comm"), ("Type", "Type", "oldtype", "datatype"),
                ("Win", "Win", "oldwin", "win"))


def keyvals():
    """mpi_<kind>_create_keyval_: the C callbacks get extra_state, so one trampoline per kind
    finds the Fortran procedures (and the user's extra_state) in a record that extra_state
    points to. Attribute values from Fortran are INTEGER(MPI_ADDRESS_KIND) values stored as
    the pointer itself (mpi_<kind>_set_attr_). The record is kept for the life of the process:
    delete callbacks may run after MPI_<Kind>_free_keyval, for attributes still set.
    MPI_<KIND>_NULL_COPY_FN, _DUP_FN and _NULL_DELETE_FN are Fortran-callable procedures."""
    out = ["typedef void (*rmpi_f_copy_fn)(MPI_Fint *, MPI_Fint *, MPI_Aint *, MPI_Aint *, MPI_Aint *, MPI_Fint *, "
           "MPI_Fint *);",
           "typedef void (*rmpi_f_delete_fn)(MPI_Fint *, MPI_Fint *, MPI_Aint *, MPI_Aint *, MPI_Fint *);",
           "typedef struct {\n    rmpi_f_proc copy, del;\n    MPI_Aint extra;\n} rmpi_f_keyval_t;"]
    for kind, ck, _, _ in KEYVAL_KINDS:
        k, ct = kind.lower(), "MPI_Datatype" if ck == "Type" else f"MPI_{ck}"
        out.append(f"""static int f_copy_{k}({ct} old, int keyval, void *extra, void *in, void *out, int *flag)
{{
    rmpi_f_keyval_t *kv = extra;
    MPI_Fint h = MPI_{ck}_toint(old), key = keyval, fl = 0, err = MPI_SUCCESS;
    MPI_Aint vin = (MPI_Aint)(intptr_t)in, vout = 0;
    ((rmpi_f_copy_fn)kv->copy)(&h, &key, &kv->extra, &vin, &vout, &fl, &err);
    *flag = fl != 0;
    if (fl)
        *(void **)out = (void *)(intptr_t)vout;
    return err;
}}

static int f_delete_{k}({ct} obj, int keyval, void *val, void *extra)
{{
    rmpi_f_keyval_t *kv = extra;
    MPI_Fint h = MPI_{ck}_toint(obj), key = keyval, err = MPI_SUCCESS;
    MPI_Aint v = (MPI_Aint)(intptr_t)val;
    ((rmpi_f_delete_fn)kv->del)(&h, &key, &v, &kv->extra, &err);
    return err;
}}

void mpi_{k}_create_keyval_(rmpi_f_proc copy, rmpi_f_proc del, MPI_Fint *keyval, MPI_Aint *extra, MPI_Fint *ierror)
{{
    rmpi_f_keyval_t *kv = malloc(sizeof *kv);
    if (kv == NULL) {{
        *ierror = MPI_ERR_NO_MEM;
        return;
    }}
    *kv = (rmpi_f_keyval_t){{copy, del, *extra}};
    *ierror = MPI_{kind}_create_keyval(f_copy_{k}, f_delete_{k}, keyval, kv);
    if (*ierror != MPI_SUCCESS)
        free(kv);
}}

void mpi_{k}_null_copy_fn_(MPI_Fint *h, MPI_Fint *key, MPI_Aint *extra, MPI_Aint *in, MPI_Aint *out, MPI_Fint *flag,
                           MPI_Fint *ierror)
{{
    *flag = 0;
    *ierror = MPI_SUCCESS;
}}

void mpi_{k}_dup_fn_(MPI_Fint *h, MPI_Fint *key, MPI_Aint *extra, MPI_Aint *in, MPI_Aint *out, MPI_Fint *flag,
                     MPI_Fint *ierror)
{{
    *out = *in;
    *flag = 1;
    *ierror = MPI_SUCCESS;
}}

void mpi_{k}_null_delete_fn_(MPI_Fint *h, MPI_Fint *key, MPI_Aint *val, MPI_Aint *extra, MPI_Fint *ierror)
{{
    *ierror = MPI_SUCCESS;
}}""")
    # MPI-1's MPI_Keyval_create: the same with INTEGER extra_state and attribute values
    out.append("""typedef void (*rmpi_f_copy1_fn)(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                                MPI_Fint *);
typedef void (*rmpi_f_delete1_fn)(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);

static int f_copy1(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    rmpi_f_keyval_t *kv = extra;
    MPI_Fint h = MPI_Comm_toint(old), key = keyval, ex = (MPI_Fint)kv->extra, fl = 0, err = MPI_SUCCESS;
    MPI_Fint vin = (MPI_Fint)(intptr_t)in, vout = 0;
    ((rmpi_f_copy1_fn)kv->copy)(&h, &key, &ex, &vin, &vout, &fl, &err);
    *flag = fl != 0;
    if (fl)
        *(void **)out = (void *)(intptr_t)vout;
    return err;
}

static int f_delete1(MPI_Comm comm, int keyval, void *val, void *extra)
{
    rmpi_f_keyval_t *kv = extra;
    MPI_Fint h = MPI_Comm_toint(comm), key = keyval, ex = (MPI_Fint)kv->extra, v = (MPI_Fint)(intptr_t)val;
    MPI_Fint err = MPI_SUCCESS;
    ((rmpi_f_delete1_fn)kv->del)(&h, &key, &v, &ex, &err);
    return err;
}

void mpi_keyval_create_(rmpi_f_proc copy, rmpi_f_proc del, MPI_Fint *keyval, MPI_Fint *extra, MPI_Fint *ierror)
{
    rmpi_f_keyval_t *kv = malloc(sizeof *kv);
    if (kv == NULL) {
        *ierror = MPI_ERR_NO_MEM;
        return;
    }
    *kv = (rmpi_f_keyval_t){copy, del, *extra};
    *ierror = MPI_Keyval_create(f_copy1, f_delete1, keyval, kv);
    if (*ierror != MPI_SUCCESS)
        free(kv);
}

void mpi_null_copy_fn_(MPI_Fint *h, MPI_Fint *key, MPI_Fint *extra, MPI_Fint *in, MPI_Fint *out, MPI_Fint *flag,
                       MPI_Fint *ierror)
{
    *flag = 0;
    *ierror = MPI_SUCCESS;
}

void mpi_dup_fn_(MPI_Fint *h, MPI_Fint *key, MPI_Fint *extra, MPI_Fint *in, MPI_Fint *out, MPI_Fint *flag,
                 MPI_Fint *ierror)
{
    *out = *in;
    *flag = 1;
    *ierror = MPI_SUCCESS;
}

void mpi_null_delete_fn_(MPI_Fint *h, MPI_Fint *key, MPI_Fint *val, MPI_Fint *extra, MPI_Fint *ierror)
{
    *ierror = MPI_SUCCESS;
}""")
    return out


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
    f08 = []
    for n in uniq:
        m = re.search(r"^#define " + n + r"\s+\(\((MPI_\w+)\)0x", text, re.M)
        kind = m.group(1) if m and m.group(1) in F08_KINDS else None
        if kind:
            f08.append(f'        printf("    type({kind}), parameter :: {n} = {kind}(%lld)\\n", '
                       f'(long long)MPI_{HANDLES[kind]}_toint({n}));')
        elif n not in ("MPI_SOURCE", "MPI_TAG", "MPI_ERROR"):
            f08.append(f'        printf("    integer, parameter :: {n} = %lld\\n", (long long)(intptr_t)({n}));')
    out = ['/* Generated by tools/gen_fortran.py: prints mpif.h, or with argument f08 the',
           ' * constants of mpi_f08 (handles as the standard\'s derived types). */',
           '#include <mpi.h>', '#include <stdint.h>', '#include <stdio.h>',
           'static void p(const char *n, long long v)',
           '{', '    printf("      INTEGER %s\\n      PARAMETER (%s=%lld)\\n", n, n, v);', '}',
           'int main(int argc, char **argv)', '{',
           '    if (argc > 1 && argv[1][0] == \'f\') {',
           '        printf("! mpi_f08 constants of RailMPI, generated at build time from mpi.h.\\n");',
           '        printf("    integer, parameter :: MPI_STATUS_SIZE = %d\\n", MPI_F_STATUS_SIZE);',
           '        printf("    integer, parameter :: MPI_ADDRESS_KIND = %d\\n", (int)sizeof(MPI_Aint));',
           '        printf("    integer, parameter :: MPI_OFFSET_KIND = %d\\n", (int)sizeof(MPI_Offset));',
           '        printf("    integer, parameter :: MPI_COUNT_KIND = %d\\n", (int)sizeof(MPI_Count));',
           '        printf("    integer, parameter :: MPI_INTEGER_KIND = %d\\n", (int)sizeof(int));'] + f08 + [
           '        return 0;', '    }',
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
        '                                   "WEIGHTS_EMPTY"};',
        '    for (unsigned i = 0; i < sizeof common / sizeof *common; i++)',
        '        printf("      INTEGER MPI_%s\\n      COMMON /MPI_FORTRAN_%s/ MPI_%s\\n", common[i], common[i],',
        '               common[i]);',
        '    printf("      CHARACTER*1 MPI_ARGV_NULL(1)\\n      COMMON /MPI_FORTRAN_ARGV_NULL/ MPI_ARGV_NULL\\n");',
        '    printf("      CHARACTER*1 MPI_ARGVS_NULL(1, 1)\\n      COMMON /MPI_FORTRAN_ARGVS_NULL/ MPI_ARGVS_NULL\\n");',
        '    printf("      INTEGER MPI_STATUS_IGNORE(MPI_STATUS_SIZE)\\n"',
        '           "      COMMON /MPI_FORTRAN_STATUS_IGNORE/ MPI_STATUS_IGNORE\\n");',
        '    printf("      INTEGER MPI_STATUSES_IGNORE(MPI_STATUS_SIZE, 1)\\n"',
        '           "      COMMON /MPI_FORTRAN_STATUSES_IGNORE/ MPI_STATUSES_IGNORE\\n");',
        '    printf("      DOUBLE PRECISION MPI_WTIME, MPI_WTICK\\n      EXTERNAL MPI_WTIME, MPI_WTICK\\n");',
        '    printf("      EXTERNAL MPI_COMM_NULL_COPY_FN, MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN\\n"',
        '           "      EXTERNAL MPI_TYPE_NULL_COPY_FN, MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN\\n"',
        '           "      EXTERNAL MPI_WIN_NULL_COPY_FN, MPI_WIN_DUP_FN, MPI_WIN_NULL_DELETE_FN\\n"',
        '           "      EXTERNAL MPI_NULL_COPY_FN, MPI_DUP_FN, MPI_NULL_DELETE_FN\\n"',
        '           "      EXTERNAL MPI_CONVERSION_FN_NULL\\n");',
        '    printf("      INTEGER(KIND=MPI_ADDRESS_KIND) MPI_AINT_ADD, MPI_AINT_DIFF\\n"',
        '           "      EXTERNAL MPI_AINT_ADD, MPI_AINT_DIFF\\n");',
        '    return 0;', '}']
    return "\n".join(out) + "\n"


def fsig(view):
    """What tells two mpi_f08 procedures of one generic name apart: type and rank per position
    (MPI_Aint and MPI_Count are the same INTEGER kind here)."""
    return tuple(("wide" if k == "wide" else k if k != "handle" else t, arr) for _, k, arr, t in view)


def large_count(protos, f08, parts):
    """The _c forms join their operation's generic name in mpi_f08 (MPI-4.1 section 19.2),
    each with its C entry point rmpi_f08_<name>_c; where they differ from the int form only
    in MPI_Aint versus MPI_Count, the int form serves both and no _c procedure is made."""
    plain = {g: v for g, _, v, _ in f08}
    n = 0
    for ret, name, params in protos:
        base = name[:-2]
        if not name.endswith("_c") or base not in plain or name.startswith("MPI_T_"):
            continue
        view, w = fview(name, params), wrapper(name, params, f08=True)
        if view is None or w is None or fsig(view) == fsig(plain[base]):
            continue
        parts.append(w)
        f08.append((base, f"{base}_c_f08", view, "rmpi_f08_" + name[4:].lower()))
        n += 1
    return f"{n} _c procedures"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--header", required=True)
    ap.add_argument("--wrappers")
    ap.add_argument("--consts")
    ap.add_argument("--interfaces", help="the explicit interfaces of `use mpi` (Fortran include file)")
    ap.add_argument("--f08", help="the mpi_f08 module (Fortran source)")
    ap.add_argument("--procedures", help="the module procedures of `use mpi` (Fortran include file)")
    a = ap.parse_args()
    protos = parse(a.header)
    parts, nok, nstub = [PRELUDE, callbacks(), F08_PRELUDE], 0, 0
    f77, f08 = [], []
    for name, params in list(CUSTOM_VIEW.items()) + list(CUSTOM_VIEW_F77.items()):
        view = fview(name, params)
        f77.append((name, view))
        if name in CUSTOM_VIEW:
            f08.append((name, f"{name}_f08", view, name.lower() + "_"))
    for ret, name, params in protos:
        if SKIP.match(name) or name in CUSTOM or ret != "int":
            continue
        w = wrapper(name, params)
        if w is None:
            if nstub == 0:
                parts.append(UNSUPPORTED)
            parts.append(stub(name, params))
            nstub += 1
            continue
        nok += 1
        parts.append(w)
        view = fview(name, params)
        if view is None:
            continue
        f77.append((name, view))
        binding = name.lower() + "_"
        if any(v[1] == "buffer" for v in view):
            parts.append(wrapper(name, params, f08=True))
            binding = "rmpi_f08_" + name[4:].lower()
        f08.append((name, f"{name}_f08", view, binding))
    parts.append(f"/* mpi_f08's large-count forms: {large_count(protos, f08, parts)}. */")
    parts.append(f"/* {nok} functions converted, {nstub} answered MPI_ERR_UNSUPPORTED_OPERATION. */")
    if a.wrappers:
        open(a.wrappers, "w").write("\n\n".join(parts) + "\n")
    if a.interfaces:
        open(a.interfaces, "w").write(f77_interfaces(f77))
    if a.procedures:
        open(a.procedures, "w").write(f77_procedures())
    if a.f08:
        open(a.f08, "w").write(f08_module(f08))
    if a.consts:
        open(a.consts, "w").write(consts_program(a.header))


if __name__ == "__main__":
    main()
