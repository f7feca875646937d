#!/usr/bin/env python3
"""Write a stub for every MPI function that include/mpi.h declares and src/api/ does not define.

Usage: gen_unsupported.py --header include/mpi.h --out build/gen/unsupported.c src/api/*.c

Each stub reports MPI_ERR_UNSUPPORTED_OPERATION through rmpi_api_unsupported(), so an
application calling a function RailMPI lacks gets a clear error instead of a link failure.

A function counts as defined when a source file has, at file scope, `MPI_Name(...)` or
`PMPI_Name(...)` followed by a body `{` (the return type may sit on the line before and
the parameter list may span lines), or a `#pragma weak MPI_Name` / alias attribute.
Preprocessor conditionals are not evaluated: a definition inside `#if 0` still counts.
"""

import argparse
import os
import re
import sys

# Stub return values for non-int functions; anything else is an error so a new
# return type in the header cannot silently get a wrong stub.
RETURN_VALUES = {
    "double": "0.0",
    "MPI_Aint": "0",
    "MPI_Count": "0",
    "MPI_Offset": "0",
    "MPI_Fint": "0",
    "MPI_Comm": "MPI_COMM_NULL",
    "MPI_Datatype": "MPI_DATATYPE_NULL",
    "MPI_Errhandler": "MPI_ERRHANDLER_NULL",
    "MPI_File": "MPI_FILE_NULL",
    "MPI_Group": "MPI_GROUP_NULL",
    "MPI_Info": "MPI_INFO_NULL",
    "MPI_Message": "MPI_MESSAGE_NULL",
    "MPI_Op": "MPI_OP_NULL",
    "MPI_Request": "MPI_REQUEST_NULL",
    "MPI_Session": "MPI_SESSION_NULL",
    "MPI_Win": "MPI_WIN_NULL",
}

C_TYPE_WORDS = {
    "void", "char", "short", "int", "long", "float", "double", "signed", "unsigned",
    "const", "volatile", "restrict", "struct", "enum", "union", "_Bool",
}


def strip_comments(text):
    """Blank out comments and string/char literals, keeping offsets and newlines."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * max(0, j - i - 2) + (c if j - i >= 2 else ""))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def strip_preprocessor(text):
    """Blank out directive lines, including backslash continuations."""
    lines = text.split("\n")
    in_directive = False
    for k, line in enumerate(lines):
        if in_directive or line.lstrip().startswith("#"):
            in_directive = line.rstrip().endswith("\\")
            lines[k] = ""
    return "\n".join(lines)


def parse_header(path):
    """Return [(ret, name, params)] for every MPI_* prototype, in header order."""
    with open(path, encoding="utf-8") as f:
        text = strip_preprocessor(strip_comments(f.read()))
    protos = []
    seen = set()
    # A statement boundary, a plain return type, the name, a parameter list, ';'.
    pattern = re.compile(
        r"(?:\A|(?<=[;{}]))\s*([A-Za-z_][\w\s\*]*?)\b(MPI_\w+)\s*\(([^;{}]*)\)\s*;")
    for m in pattern.finditer(text):
        ret, name, params = m.groups()
        ret = " ".join(ret.split())
        if ret.split()[0] in ("typedef", "extern", "return"):
            continue
        if name in seen:
            continue
        seen.add(name)
        protos.append((ret, name, " ".join(params.split())))
    return protos


def find_close_paren(text, open_idx):
    depth = 0
    for k in range(open_idx, len(text)):
        if text[k] == "(":
            depth += 1
        elif text[k] == ")":
            depth -= 1
            if depth == 0:
                return k
    return -1


def has_body_or_alias(text, k):
    """After a declarator's ')': skip attribute-like words and (...) groups, then
    report whether a body '{' or an alias attribute follows."""
    alias = False
    n = len(text)
    while k < n:
        c = text[k]
        if c.isspace():
            k += 1
        elif c.isalpha() or c == "_":
            m = re.compile(r"\w+").match(text, k)
            alias = alias or m.group(0) == "alias"
            k = m.end()
        elif c == "(":
            close = find_close_paren(text, k)
            if close < 0:
                return False
            alias = alias or re.search(r"\balias\b", text[k:close]) is not None
            k = close + 1
        else:
            return c == "{" or (c == ";" and alias)
    return False


def defined_names(paths):
    """Names (without a P prefix) of MPI functions defined or aliased in the sources."""
    names = set()
    ident = re.compile(r"\bP?MPI_\w+")
    for path in paths:
        with open(path, encoding="utf-8") as f:
            raw = strip_comments(f.read())
        for m in re.finditer(r"^\s*#\s*pragma\s+weak\s+(MPI_\w+)", raw, re.M):
            names.add(m.group(1))
        text = strip_preprocessor(raw)
        depth = 0
        i = 0
        while i < len(text):
            c = text[i]
            if c == "{":
                depth += 1
            elif c == "}":
                depth = max(0, depth - 1)
            elif depth == 0 and (c == "M" or c == "P"):
                m = ident.match(text, i)
                if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
                    j = m.end()
                    while j < len(text) and text[j].isspace():
                        j += 1
                    if j < len(text) and text[j] == "(":
                        close = find_close_paren(text, j)
                        if close < 0:
                            break
                        if has_body_or_alias(text, close + 1):
                            names.add(m.group(0).lstrip("P"))
                        i = close + 1
                        continue
                    i = m.end()
                    continue
            i += 1
    return names


def split_params(params):
    """Split a parameter list on top-level commas."""
    parts, depth, cur = [], 0, []
    for c in params:
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def param_name(param, known_types):
    """The declared name of a parameter, or None if it has none."""
    if param in ("void", "..."):
        return None
    m = re.match(r"^[^(]*\(\s*\*\s*(\w+)\s*\)", param)  # function pointer
    if m:
        return m.group(1)
    core = re.sub(r"(\s*\[[^\]]*\])+\s*$", "", param)
    words = re.findall(r"\w+", core)
    if len(words) < 2 or words[-1] in C_TYPE_WORDS or words[-1] in known_types:
        return None
    return words[-1]


def make_stub(ret, name, params, known_types):
    parts = split_params(params)
    named = []
    used = []
    for k, p in enumerate(parts):
        pname = param_name(p, known_types)
        if pname is None and p not in ("void", "..."):
            # C11 definitions need a name for every parameter.
            pname = "unnamed_arg%d" % k
            p = re.sub(r"^(.*?)((\s*\[[^\]]*\])*)$",
                       lambda mm: "%s %s%s" % (mm.group(1), pname, mm.group(2)), p)
        named.append(p)
        if pname:
            used.append(pname)
    # weak: a real definition anywhere in the library (even one made by a macro the
    # scanner cannot see) wins over the stub at link time
    lines = ["__attribute__((weak)) %s %s(%s)" % (ret, name, ", ".join(named) or "void"), "{"]
    lines += ["    (void)%s;" % u for u in used]
    if ret == "int":
        lines.append('    return rmpi_api_unsupported("%s");' % name)
    elif ret == "void":
        lines.append('    (void)rmpi_api_unsupported("%s");' % name)
    else:
        if ret not in RETURN_VALUES:
            raise SystemExit("gen_unsupported.py: no stub return value for type '%s' (%s)"
                             % (ret, name))
        lines.append('    (void)rmpi_api_unsupported("%s");' % name)
        lines.append("    return %s;" % RETURN_VALUES[ret])
    lines.append("}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--header", required=True, help="public mpi.h to read prototypes from")
    ap.add_argument("--out", required=True, help="C file to write")
    ap.add_argument("-v", "--verbose", action="store_true", help="list the stubbed functions")
    ap.add_argument("sources", nargs="*", help="C files whose MPI_ definitions count")
    args = ap.parse_args()

    protos = parse_header(args.header)
    if not protos:
        raise SystemExit("gen_unsupported.py: no MPI_ prototypes found in %s" % args.header)
    with open(args.header, encoding="utf-8") as f:
        known_types = set(re.findall(r"\b(MPI_\w+)\s*;", strip_comments(f.read())))
        known_types |= set(RETURN_VALUES)
    defined = defined_names(args.sources)
    missing = [p for p in protos if p[1] not in defined]

    body = [
        "/* Generated by tools/gen_unsupported.py from %s; do not edit. */"
        % os.path.basename(args.header),
        "/* %d functions declared, %d defined in the sources given, %d stubbed here. */"
        % (len(protos), len(protos) - len(missing), len(missing)),
        "#include <mpi.h>",
        '#include "api/api_impl.h"',
        "",
    ]
    for ret, name, params in missing:
        body.append(make_stub(ret, name, params, known_types))
        body.append("")
    out = "\n".join(body)

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(out)
    os.replace(tmp, args.out)
    if args.verbose:
        for _, name, _ in missing:
            print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
