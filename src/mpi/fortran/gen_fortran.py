#!/usr/bin/env python3
"""Generates Sluice's Fortran bindings from mpi.h (run by CMake at configure time).

Usage: gen_fortran.py MPI_H OUTDIR

Writes into OUTDIR:
  mpif.h                    the constants (fixed- and free-form compatible)
  mpi.f90                   the `mpi` module: the same constants, interfaces of every routine
  fortran_glue.cpp          pmpi_x_ for every MPI_X of mpi.h whose arguments it knows, with
                            weak aliases mpi_x_, mpi_x__, mpi_x and MPI_X (libmpifort)
  fortran_predefined.inc    the predefined handles of each kind, in the order of their
                            Fortran integers (libmpi's handle tables, handles.cpp)
  fortran_coverage.txt      the routines provided, and each one left out with the reason

Everything follows from mpi.h: a function the C binding gains gets its Fortran binding at
the next configure, if its argument types are known here; otherwise it is listed as left
out. Rules of the Fortran binding (MPI-3.1 chapter 17):
  - handles are INTEGERs (handles.hpp); every routine ends with INTEGER ierror;
  - status is INTEGER status(MPI_STATUS_SIZE), the bytes of the C MPI_Status;
  - MPI_STATUS(ES)_IGNORE, MPI_BOTTOM, MPI_IN_PLACE, MPI_UNWEIGHTED and
    MPI_WEIGHTS_EMPTY are variables in common blocks, recognized by address;
  - LOGICAL arguments are passed as C ints (gfortran: .TRUE. is 1, .FALSE. 0);
  - indices returned by Waitany/Testany/Waitsome/Testsome are 1-based;
  - strings carry gfortran's hidden length (size_t, after all arguments); input strings lose
    their trailing blanks, output strings are blank-padded.
"""
import re
import sys

# Handle kinds: C type -> (kind enumerator, struct name in mpi.h).
HANDLE_TYPES = {
    "MPI_Comm": "SLUICE_FH_COMM",
    "MPI_Group": "SLUICE_FH_GROUP",
    "MPI_Datatype": "SLUICE_FH_DATATYPE",
    "MPI_Op": "SLUICE_FH_OP",
    "MPI_Request": "SLUICE_FH_REQUEST",
    "MPI_Errhandler": "SLUICE_FH_ERRHANDLER",
    "MPI_Info": "SLUICE_FH_INFO",
    "MPI_Message": "SLUICE_FH_MESSAGE",
    "MPI_Win": "SLUICE_FH_WIN",
    "MPI_Session": "SLUICE_FH_SESSION",
}
STRUCT_KIND = {
    "sluice_comm_s": "MPI_Comm",
    "sluice_group_s": "MPI_Group",
    "sluice_datatype_s": "MPI_Datatype",
    "sluice_op_s": "MPI_Op",
    "sluice_request_s": "MPI_Request",
    "sluice_errhandler_s": "MPI_Errhandler",
    "sluice_info_s": "MPI_Info",
    "sluice_message_s": "MPI_Message",
    "sluice_win_s": "MPI_Win",
    "sluice_session_s": "MPI_Session",
}
TABLE_NAME = {
    "MPI_Comm": "kPredefinedComm",
    "MPI_Group": "kPredefinedGroup",
    "MPI_Datatype": "kPredefinedDatatype",
    "MPI_Op": "kPredefinedOp",
    "MPI_Request": "kPredefinedRequest",
    "MPI_Errhandler": "kPredefinedErrhandler",
    "MPI_Info": "kPredefinedInfo",
    "MPI_Message": "kPredefinedMessage",
    "MPI_Win": "kPredefinedWin",
    "MPI_Session": "kPredefinedSession",
}

# Arguments that are LOGICAL in Fortran (int or int* / int[] in C).
LOGICAL_NAMES = {"flag", "weighted", "commute", "high", "reorder", "periods", "remain_dims"}
# Handle pointers that the call reads and may change (null after a free or a completion).
INOUT_HANDLES = {
    "MPI_Wait": {"request"},
    "MPI_Test": {"request"},
    "MPI_Start": {"request"},
    "MPI_Cancel": {"request"},
    "MPI_Request_free": {"request"},
    "MPI_Mrecv": {"message"},
    "MPI_Imrecv": {"message"},
    "MPI_Type_commit": {"datatype"},
    "MPI_Win_free": {"win"},
    "MPI_Session_finalize": {"session"},
}
# Routines whose Fortran form is written by hand (fortran_manual.cpp): callbacks, strings
# of arguments, functions returning a value, attribute values of address size.
MANUAL = {
    "MPI_Init": """
      subroutine MPI_INIT(ierror)
        integer :: ierror
      end subroutine""",
    "MPI_Init_thread": """
      subroutine MPI_INIT_THREAD(required, provided, ierror)
        integer :: required, provided, ierror
      end subroutine""",
    "MPI_Wtime": """
      double precision function MPI_WTIME()
      end function""",
    "MPI_Wtick": """
      double precision function MPI_WTICK()
      end function""",
    "MPI_Aint_add": """
      function MPI_AINT_ADD(base, disp)
        import :: MPI_ADDRESS_KIND
        integer(kind=MPI_ADDRESS_KIND) :: MPI_AINT_ADD, base, disp
      end function""",
    "MPI_Aint_diff": """
      function MPI_AINT_DIFF(addr1, addr2)
        import :: MPI_ADDRESS_KIND
        integer(kind=MPI_ADDRESS_KIND) :: MPI_AINT_DIFF, addr1, addr2
      end function""",
    "MPI_Op_create": """
      subroutine MPI_OP_CREATE(user_fn, commute, op, ierror)
        external :: user_fn
        logical :: commute
        integer :: op, ierror
      end subroutine""",
    "MPI_Comm_create_errhandler": """
      subroutine MPI_COMM_CREATE_ERRHANDLER(comm_errhandler_fn, errhandler, ierror)
        external :: comm_errhandler_fn
        integer :: errhandler, ierror
      end subroutine""",
    "MPI_Win_create_errhandler": """
      subroutine MPI_WIN_CREATE_ERRHANDLER(win_errhandler_fn, errhandler, ierror)
        external :: win_errhandler_fn
        integer :: errhandler, ierror
      end subroutine""",
    "MPI_Grequest_start": """
      subroutine MPI_GREQUEST_START(query_fn, free_fn, cancel_fn, extra_state, request, ierror)
        import :: MPI_ADDRESS_KIND
        external :: query_fn, free_fn, cancel_fn
        integer(kind=MPI_ADDRESS_KIND) :: extra_state
        integer :: request, ierror
      end subroutine""",
    "MPI_Info_get_string": """
      subroutine MPI_INFO_GET_STRING(info, key, buflen, value, flag, ierror)
        integer :: info, buflen, ierror
        character(len=*) :: key, value
        logical :: flag
      end subroutine""",
    "MPI_Comm_get_attr": """
      subroutine MPI_COMM_GET_ATTR(comm, comm_keyval, attribute_val, flag, ierror)
        import :: MPI_ADDRESS_KIND
        integer :: comm, comm_keyval, ierror
        integer(kind=MPI_ADDRESS_KIND) :: attribute_val
        logical :: flag
      end subroutine""",
    "MPI_Attr_get": """
      subroutine MPI_ATTR_GET(comm, keyval, attribute_val, flag, ierror)
        integer :: comm, keyval, attribute_val, ierror
        logical :: flag
      end subroutine""",
    "MPI_Buffer_detach": """
      subroutine MPI_BUFFER_DETACH(buffer_addr, size, ierror)
        !GCC$ ATTRIBUTES NO_ARG_CHECK :: buffer_addr
        type(*), dimension(*) :: buffer_addr
        integer :: size, ierror
      end subroutine""",
    "MPI_Comm_create_keyval": """
      subroutine MPI_COMM_CREATE_KEYVAL(comm_copy_attr_fn, comm_delete_attr_fn, comm_keyval, &
                                        extra_state, ierror)
        import :: MPI_ADDRESS_KIND
        external :: comm_copy_attr_fn, comm_delete_attr_fn
        integer :: comm_keyval, ierror
        integer(kind=MPI_ADDRESS_KIND) :: extra_state
      end subroutine""",
    "MPI_Comm_set_attr": """
      subroutine MPI_COMM_SET_ATTR(comm, comm_keyval, attribute_val, ierror)
        import :: MPI_ADDRESS_KIND
        integer :: comm, comm_keyval, ierror
        integer(kind=MPI_ADDRESS_KIND) :: attribute_val
      end subroutine""",
    "MPI_Session_create_errhandler": """
      subroutine MPI_SESSION_CREATE_ERRHANDLER(session_errhandler_fn, errhandler, ierror)
        external :: session_errhandler_fn
        integer :: errhandler, ierror
      end subroutine""",
    "MPI_Type_create_keyval": """
      subroutine MPI_TYPE_CREATE_KEYVAL(type_copy_attr_fn, type_delete_attr_fn, type_keyval, &
                                        extra_state, ierror)
        import :: MPI_ADDRESS_KIND
        external :: type_copy_attr_fn, type_delete_attr_fn
        integer :: type_keyval, ierror
        integer(kind=MPI_ADDRESS_KIND) :: extra_state
      end subroutine""",
    "MPI_Type_set_attr": """
      subroutine MPI_TYPE_SET_ATTR(datatype, type_keyval, attribute_val, ierror)
        import :: MPI_ADDRESS_KIND
        integer :: datatype, type_keyval, ierror
        integer(kind=MPI_ADDRESS_KIND) :: attribute_val
      end subroutine""",
    "MPI_Type_get_attr": """
      subroutine MPI_TYPE_GET_ATTR(datatype, type_keyval, attribute_val, flag, ierror)
        import :: MPI_ADDRESS_KIND
        integer :: datatype, type_keyval, ierror
        integer(kind=MPI_ADDRESS_KIND) :: attribute_val
        logical :: flag
      end subroutine""",
    "MPI_Win_create_keyval": """
      subroutine MPI_WIN_CREATE_KEYVAL(win_copy_attr_fn, win_delete_attr_fn, win_keyval, &
                                       extra_state, ierror)
        import :: MPI_ADDRESS_KIND
        external :: win_copy_attr_fn, win_delete_attr_fn
        integer :: win_keyval, ierror
        integer(kind=MPI_ADDRESS_KIND) :: extra_state
      end subroutine""",
    "MPI_Win_set_attr": """
      subroutine MPI_WIN_SET_ATTR(win, win_keyval, attribute_val, ierror)
        import :: MPI_ADDRESS_KIND
        integer :: win, win_keyval, ierror
        integer(kind=MPI_ADDRESS_KIND) :: attribute_val
      end subroutine""",
    "MPI_Win_get_attr": """
      subroutine MPI_WIN_GET_ATTR(win, win_keyval, attribute_val, flag, ierror)
        import :: MPI_ADDRESS_KIND
        integer :: win, win_keyval, ierror
        integer(kind=MPI_ADDRESS_KIND) :: attribute_val
        logical :: flag
      end subroutine""",
    "MPI_Keyval_create": """
      subroutine MPI_KEYVAL_CREATE(copy_fn, delete_fn, keyval, extra_state, ierror)
        external :: copy_fn, delete_fn
        integer :: keyval, extra_state, ierror
      end subroutine""",
    "MPI_Attr_put": """
      subroutine MPI_ATTR_PUT(comm, keyval, attribute_val, ierror)
        integer :: comm, keyval, attribute_val, ierror
      end subroutine""",
    "MPI_Info_create_env": """
      subroutine MPI_INFO_CREATE_ENV(info, ierror)
        integer :: info, ierror
      end subroutine""",
    "MPI_Pcontrol": """
      subroutine MPI_PCONTROL(level)
        integer :: level
      end subroutine""",
}
# The predefined attribute callbacks, Fortran procedures (fortran_manual.cpp).
ATTR_CALLBACKS = """
      subroutine MPI_COMM_NULL_COPY_FN(oldcomm, comm_keyval, extra_state, attribute_val_in, &
                                       attribute_val_out, flag, ierror)
        import :: MPI_ADDRESS_KIND
        integer :: oldcomm, comm_keyval, ierror
        integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
        logical :: flag
      end subroutine
      subroutine MPI_COMM_DUP_FN(oldcomm, comm_keyval, extra_state, attribute_val_in, &
                                 attribute_val_out, flag, ierror)
        import :: MPI_ADDRESS_KIND
        integer :: oldcomm, comm_keyval, ierror
        integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
        logical :: flag
      end subroutine
      subroutine MPI_COMM_NULL_DELETE_FN(comm, comm_keyval, attribute_val, extra_state, ierror)
        import :: MPI_ADDRESS_KIND
        integer :: comm, comm_keyval, ierror
        integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state
      end subroutine
      subroutine MPI_TYPE_NULL_COPY_FN(old, keyval, extra_state, attribute_val_in, &
                                       attribute_val_out, flag, ierror)
        import :: MPI_ADDRESS_KIND
        integer :: old, keyval, ierror
        integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
        logical :: flag
      end subroutine
      subroutine MPI_TYPE_DUP_FN(old, keyval, extra_state, attribute_val_in, &
                                 attribute_val_out, flag, ierror)
        import :: MPI_ADDRESS_KIND
        integer :: old, keyval, ierror
        integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
        logical :: flag
      end subroutine
      subroutine MPI_TYPE_NULL_DELETE_FN(h, keyval, attribute_val, extra_state, ierror)
        import :: MPI_ADDRESS_KIND
        integer :: h, keyval, ierror
        integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state
      end subroutine
      subroutine MPI_WIN_NULL_COPY_FN(old, keyval, extra_state, attribute_val_in, &
                                       attribute_val_out, flag, ierror)
        import :: MPI_ADDRESS_KIND
        integer :: old, keyval, ierror
        integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
        logical :: flag
      end subroutine
      subroutine MPI_WIN_DUP_FN(old, keyval, extra_state, attribute_val_in, &
                                 attribute_val_out, flag, ierror)
        import :: MPI_ADDRESS_KIND
        integer :: old, keyval, ierror
        integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
        logical :: flag
      end subroutine
      subroutine MPI_WIN_NULL_DELETE_FN(h, keyval, attribute_val, extra_state, ierror)
        import :: MPI_ADDRESS_KIND
        integer :: h, keyval, ierror
        integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state
      end subroutine
      subroutine MPI_NULL_COPY_FN(oldcomm, keyval, extra_state, attribute_val_in, &
                                  attribute_val_out, flag, ierror)
        integer :: oldcomm, keyval, extra_state, attribute_val_in, attribute_val_out, ierror
        logical :: flag
      end subroutine
      subroutine MPI_DUP_FN(oldcomm, keyval, extra_state, attribute_val_in, &
                            attribute_val_out, flag, ierror)
        integer :: oldcomm, keyval, extra_state, attribute_val_in, attribute_val_out, ierror
        logical :: flag
      end subroutine
      subroutine MPI_NULL_DELETE_FN(comm, keyval, attribute_val, extra_state, ierror)
        integer :: comm, keyval, attribute_val, extra_state, ierror
      end subroutine"""

# C functions with no Fortran binding of this form, and why.
NOT_FORTRAN = {
    "MPI_Comm_idup": "completes later into the C handle: needs a Fortran-side completion hook",
    "MPI_Comm_idup_with_info": "completes later into the C handle (as MPI_Comm_idup)",
    "MPI_Address": "an MPI-1 function MPI-3.0 removed: C only",
    "MPI_Type_hvector": "an MPI-1 function MPI-3.0 removed: C only",
    "MPI_Type_hindexed": "an MPI-1 function MPI-3.0 removed: C only",
    "MPI_Type_struct": "an MPI-1 function MPI-3.0 removed: C only",
    "MPI_Type_extent": "an MPI-1 function MPI-3.0 removed: C only",
    "MPI_Type_lb": "an MPI-1 function MPI-3.0 removed: C only",
    "MPI_Type_ub": "an MPI-1 function MPI-3.0 removed: C only",
    "MPI_Errhandler_create": "an MPI-1 function MPI-3.0 removed: C only",
    "MPI_Errhandler_set": "an MPI-1 function MPI-3.0 removed: C only",
    "MPI_Errhandler_get": "an MPI-1 function MPI-3.0 removed: C only",
}


def fail(msg):
    sys.stderr.write("gen_fortran.py: %s\n" % msg)
    sys.exit(1)


class Param:
    def __init__(self, text):
        text = " ".join(text.split())
        self.text = text
        self.dims = ""
        m = re.match(r"^(.*?)(\w+)\s*((?:\[[^\]]*\])*)$", text)
        if not m:
            fail("cannot parse parameter '%s'" % text)
        self.ctype = m.group(1).strip()
        self.name = m.group(2)
        self.dims = m.group(3)
        self.const = self.ctype.startswith("const ")
        self.base = self.ctype.replace("const ", "").replace(" ", "")


def parse_header(path):
    text = open(path).read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    int_consts = []
    seen = set()
    for m in re.finditer(r"^#define\s+(MPIX?_\w+)\s+\(?(-?\d+)\)?\s*$", text, re.M):
        if m.group(1) not in seen:
            seen.add(m.group(1))
            int_consts.append((m.group(1), int(m.group(2))))
    objects = {}  # sluice_x -> C handle type
    for m in re.finditer(r"SLUICE_PREDEFINED\s+struct\s+(\w+)\s+(\w+);", text):
        if m.group(1) in STRUCT_KIND:
            objects[m.group(2)] = STRUCT_KIND[m.group(1)]
    handles = []  # (name, C type, object or None for null)
    for m in re.finditer(r"^#define\s+(MPIX?_\w+)\s+\(&(sluice_\w+)\)\s*$", text, re.M):
        if m.group(2) in objects:
            handles.append((m.group(1), objects[m.group(2)], m.group(2)))
    for m in re.finditer(r"^#define\s+(MPIX?_\w+)\s+\(\((MPI_\w+)\)0\)\s*$", text, re.M):
        if m.group(2) in HANDLE_TYPES:
            handles.append((m.group(1), m.group(2), None))
    funcs = []
    for m in re.finditer(r"^(int|double|MPI_Aint)\s+(MPIX?_\w+)\s*\(([^;]*?)\)\s*;", text, re.M | re.S):
        args = m.group(3).strip()
        if "..." in args:
            params = None  # variadic (MPI_Pcontrol): written by hand
        else:
            params = [] if args in ("", "void") else [Param(a) for a in args.split(",")]
        funcs.append((m.group(1), m.group(2), params))
    return int_consts, handles, funcs


# ---- constants -------------------------------------------------------------------------------

def handle_numbers(handles):
    """Fortran integer of each predefined handle; the tables in slot order."""
    tables = {t: [None] for t in HANDLE_TYPES}
    index_of_object = {}
    numbers = []
    for name, ctype, obj in handles:
        if obj is None:
            numbers.append((name, 0))
            continue
        if obj not in index_of_object:
            index_of_object[obj] = len(tables[ctype])
            tables[ctype].append(obj)
        numbers.append((name, index_of_object[obj]))
    return numbers, tables


def fixed_form(lines):
    for line in lines:
        if len(line) > 72:
            fail("mpif.h line longer than 72 columns: " + line)
    return "\n".join(lines) + "\n"


def constant_lines(int_consts, numbers):
    """Declarations valid in fixed and free form, in mpif.h and in the module."""
    out = []

    def param(name, value, ftype="INTEGER"):
        out.append("      %s %s" % (ftype, name))
        out.append("      PARAMETER (%s=%s)" % (name, value))

    out.append("! Sizes and kinds")
    param("MPI_STATUS_SIZE", 6)
    param("MPI_SOURCE", 1)
    param("MPI_TAG", 2)
    param("MPI_ERROR", 3)
    param("MPI_ADDRESS_KIND", 8)
    param("MPI_OFFSET_KIND", 8)
    param("MPI_COUNT_KIND", 8)
    param("MPI_INTEGER_KIND", 4)
    out.append("! Integer constants of mpi.h")
    for name, value in int_consts:
        param(name, value)
    out.append("! Predefined handles (handle tables of libmpi)")
    for name, value in numbers:
        param(name, value)
    out.append("! Sentinels, recognized by address (defined in libmpifort)")
    for var, dims, block in SENTINELS:
        out.append("      INTEGER %s%s" % (var, dims))
        out.append("      COMMON /%s/ %s" % (block, var))
    out.append("      SAVE /sluice_mpif_bottom/, /sluice_mpif_in_place/")
    out.append("      SAVE /sluice_mpif_status_ign/, /sluice_mpif_statuses_ign/")
    out.append("      SAVE /sluice_mpif_unweighted/, /sluice_mpif_weights_empty/")
    return out


SENTINELS = [
    ("MPI_BOTTOM", "", "sluice_mpif_bottom"),
    ("MPI_IN_PLACE", "", "sluice_mpif_in_place"),
    ("MPI_STATUS_IGNORE", "(MPI_STATUS_SIZE)", "sluice_mpif_status_ign"),
    ("MPI_STATUSES_IGNORE", "(MPI_STATUS_SIZE,1)", "sluice_mpif_statuses_ign"),
    ("MPI_UNWEIGHTED", "(1)", "sluice_mpif_unweighted"),
    ("MPI_WEIGHTS_EMPTY", "(1)", "sluice_mpif_weights_empty"),
]


# ---- routines --------------------------------------------------------------------------------

class Arg:
    """One argument of a Fortran-callable routine: its C parameter(s), the code around the
    call, the expression passed to the C function, and its declaration in the interface."""

    def __init__(self):
        self.cparam = ""
        self.hidden = None  # hidden string length parameter
        self.pre = []
        self.call = ""
        self.post = []
        self.fdecl = ""
        self.fattr = None
        self.late = False  # its conversion needs the other arguments' (a count from comm)


def count_expr(fname, p, params):
    names = [q.name for q in params]
    if fname in ("MPI_Alltoallw", "MPI_Ialltoallw"):
        return "sluice_fortran_peer_count(c_comm)"
    if fname in ("MPI_Neighbor_alltoallw", "MPI_Ineighbor_alltoallw"):
        return ("sluice_fortran_neighbor_count(c_comm, %d)" % (1 if p.name == "recvtypes" else 0))
    if p.name == "array_of_datatypes" and "max_datatypes" in names:
        return "*max_datatypes"
    for n in ("count", "incount"):
        if n in names:
            return "*" + n
    return None


def classify(fname, p, params):
    a = Arg()
    n = p.name
    logical = n in LOGICAL_NAMES
    ftype = "logical" if logical else "integer"
    base, dims = p.base, p.dims
    cconst = "const " if p.const else ""
    if base == "int" and not dims:
        a.cparam = "const MPI_Fint* %s" % n
        a.call = "*%s" % n
        a.fdecl = "%s :: %s" % (ftype, n)
        if fname == "MPI_Info_get" and n == "valuelen":  # no more than the Fortran string holds
            a.call = "s_value.clamp(*valuelen)"
    elif base == "int*" and not dims:
        a.cparam = "MPI_Fint* %s" % n
        a.call = n
        a.fdecl = "%s :: %s" % (ftype, n)
        if fname in ("MPI_Waitany", "MPI_Testany") and n == "index":
            a.post.append("if ((rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && *index >= 0) ++*index;")
    elif base == "int" and dims == "[]":
        a.cparam = "%sMPI_Fint* %s" % (cconst, n)
        a.call = n
        a.fdecl = "%s :: %s(*)" % (ftype, n)
        if n in ("weights", "sourceweights", "destweights"):
            a.call = "sluice_fortran_weights(%s)" % n
        if n == "array_of_indices":
            a.post.append("if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS)")
            a.post.append("  for (int i = 0; *outcount != MPI_UNDEFINED && i < *outcount; ++i) ++%s[i];" % n)
    elif base == "int" and dims == "[][3]":
        a.cparam = "MPI_Fint (*%s)[3]" % n
        a.call = n
        a.fdecl = "integer :: %s(3,*)" % n
    elif base in ("MPI_Aint", "MPI_Count", "MPI_Offset"):
        kind = {"MPI_Aint": "MPI_ADDRESS_KIND", "MPI_Count": "MPI_COUNT_KIND",
                "MPI_Offset": "MPI_OFFSET_KIND"}[base]
        a.cparam = "const %s* %s" % (base, n)
        a.call = "*%s" % n
        a.fdecl = "integer(kind=%s) :: %s%s" % (kind, n, "(*)" if dims else "")
        if dims:
            a.cparam = "%s%s* %s" % (cconst, base, n)
            a.call = n
    elif base in ("MPI_Aint*", "MPI_Count*", "MPI_Offset*") and not dims:
        kind = {"MPI_Aint*": "MPI_ADDRESS_KIND", "MPI_Count*": "MPI_COUNT_KIND",
                "MPI_Offset*": "MPI_OFFSET_KIND"}[base]
        a.cparam = "%s %s" % (base, n)
        a.call = n
        a.fdecl = "integer(kind=%s) :: %s" % (kind, n)
    elif base in HANDLE_TYPES and not dims:
        a.cparam = "const MPI_Fint* %s" % n
        a.call = "c_%s" % n
        a.pre.append("%s c_%s = static_cast<%s>(sluice_fortran_f2c(%s, *%s));"
                     % (base, n, base, HANDLE_TYPES[base], n))
        a.fdecl = "integer :: %s" % n
    elif base.rstrip("*") in HANDLE_TYPES and base.endswith("*") and not dims:
        t = base.rstrip("*")
        kind = HANDLE_TYPES[t]
        a.cparam = "MPI_Fint* %s" % n
        a.call = "&c_%s" % n
        a.fdecl = "integer :: %s" % n
        inout = n in INOUT_HANDLES.get(fname, ()) or (fname.endswith("_free") and n != "info_used")
        if inout:
            a.pre.append("%s c_%s = static_cast<%s>(sluice_fortran_f2c(%s, *%s));" % (t, n, t, kind, n))
            a.pre.append("const %s old_%s = c_%s;" % (t, n, n))
            a.post.append("sluice_fortran_update(%s, %s, old_%s, c_%s);" % (kind, n, n, n))
        else:
            a.pre.append("%s c_%s = nullptr;" % (t, n))
            conv = "sluice_fortran_c2f_new" if t == "MPI_Request" else "sluice_fortran_c2f"
            a.post.append("if (rc == MPI_SUCCESS) *%s = %s(%s, c_%s);" % (n, conv, kind, n))
    elif base in HANDLE_TYPES and dims == "[]":
        kind = HANDLE_TYPES[base]
        cnt = count_expr(fname, p, params)
        if cnt is None:
            return None, "no count for handle array %s" % n
        a.cparam = "%sMPI_Fint* %s" % (cconst, n)
        a.fdecl = "integer :: %s(*)" % n
        a.call = "c_%s.data()" % n
        a.late = True
        if p.const:
            a.pre.append("const sluice::fortran::HandleArray<%s> c_%s(%s, %s, %s);"
                         % (base, n, kind, n, cnt))
        elif base == "MPI_Datatype":  # Type_get_contents: out
            a.pre.append("sluice::fortran::HandleArray<%s> c_%s(%s, nullptr, %s);" % (base, n, kind, cnt))
            a.post.append("if (rc == MPI_SUCCESS) c_%s.copy_out(%s);" % (n, n))
        else:  # requests: in and out
            a.pre.append("sluice::fortran::HandleArray<%s> c_%s(%s, %s, %s);" % (base, n, kind, n, cnt))
            a.post.append("c_%s.update(%s);" % (n, n))
    elif base == "MPI_Status*" and not dims:
        a.cparam = "MPI_Fint* %s" % n
        a.fdecl = "integer :: %s(MPI_STATUS_SIZE)" % n
        a.pre.append("sluice::fortran::StatusArg s_%s(%s, 1);" % (n, n))
        a.call = "s_%s.get()" % n
        if not p.const:
            a.post.append("s_%s.copy_out(%s);" % (n, n))
    elif base == "MPI_Status" and dims == "[]":
        cnt = count_expr(fname, p, params)
        if cnt is None:
            return None, "no count for status array %s" % n
        a.cparam = "MPI_Fint* %s" % n
        a.fdecl = "integer :: %s(MPI_STATUS_SIZE,*)" % n
        a.pre.append("sluice::fortran::StatusArg s_%s(%s, %s);" % (n, n, cnt))
        a.call = "s_%s.get()" % n
        a.post.append("s_%s.copy_out(%s);" % (n, n))
    elif base == "void*" and n == "baseptr":  # Alloc_mem: the address into an INTEGER
        a.cparam = "void* %s" % n
        a.call = n
        a.fdecl = "integer(kind=MPI_ADDRESS_KIND) :: %s" % n
    elif base == "void*" and n in ("attribute_val", "extra_state", "buffer_addr"):
        return None, "attribute/address argument %s" % n
    elif base == "void*" and not dims:
        a.cparam = "%svoid* %s" % (cconst, n)
        a.call = "sluice_fortran_buf(%s)" % n
        a.fattr = n
        a.fdecl = "type(*), dimension(*) :: %s" % n
    elif base == "char" and dims == "[]" and p.const:  # datarep of the external32 routines
        a.cparam = "const char* %s" % n
        a.hidden = "size_t %s_len" % n
        a.fdecl = "character(len=*) :: %s" % n
        a.pre.append("const sluice::fortran::InString s_%s(%s, %s_len);" % (n, n, n))
        a.call = "s_%s.c_str()" % n
    elif base == "char*" and not dims:
        a.cparam = "%schar* %s" % (cconst, n)
        a.hidden = "size_t %s_len" % n
        a.fdecl = "character(len=*) :: %s" % n
        if p.const:
            a.pre.append("const sluice::fortran::InString s_%s(%s, %s_len);" % (n, n, n))
            a.call = "s_%s.c_str()" % n
        else:
            a.pre.append("sluice::fortran::OutString s_%s(%s, %s_len);" % (n, n, n))
            a.call = "s_%s.data()" % n
            if "flag" in [q.name for q in params]:  # MPI_Info_get: VALUE unchanged if not set
                a.post.append("if (rc == MPI_SUCCESS && *flag) s_%s.copy_out();" % n)
            else:
                a.post.append("s_%s.copy_out();" % n)
    else:
        return None, "argument type '%s' (%s)" % (p.text, n)
    return a, None


def free_form(line, width=100):
    """A free-form line cut at commas into continuation lines of at most `width` columns."""
    out = []
    while len(line) > width:
        cut = line.rfind(", ", 0, width - 2)
        if cut < 0:
            break
        out.append(line[:cut + 1] + " &")
        line = "          " + line[cut + 2:]
    out.append(line)
    return "\n".join(out)


def needs_address_kind(decls):
    return any("MPI_ADDRESS_KIND" in d or "MPI_COUNT_KIND" in d or "MPI_OFFSET_KIND" in d
               or "MPI_STATUS_SIZE" in d for d in decls)


def generate(mpi_h, outdir):
    int_consts, handles, funcs = parse_header(mpi_h)
    numbers, tables = handle_numbers(handles)

    consts = constant_lines(int_consts, numbers)
    mpif = ["! mpif.h: Sluice MPI for Fortran (gen_fortran.py, from mpi.h)",
            "! Valid in fixed and free source form."] + consts + [
            "      DOUBLE PRECISION MPI_WTIME, MPI_WTICK",
            "      EXTERNAL MPI_WTIME, MPI_WTICK",
            "      INTEGER(KIND=MPI_ADDRESS_KIND) MPI_AINT_ADD, MPI_AINT_DIFF",
            "      EXTERNAL MPI_AINT_ADD, MPI_AINT_DIFF",
            "      EXTERNAL MPI_COMM_NULL_COPY_FN, MPI_COMM_DUP_FN",
            "      EXTERNAL MPI_COMM_NULL_DELETE_FN",
            "      EXTERNAL MPI_TYPE_NULL_COPY_FN, MPI_TYPE_DUP_FN",
            "      EXTERNAL MPI_TYPE_NULL_DELETE_FN",
            "      EXTERNAL MPI_WIN_NULL_COPY_FN, MPI_WIN_DUP_FN",
            "      EXTERNAL MPI_WIN_NULL_DELETE_FN",
            "      EXTERNAL MPI_NULL_COPY_FN, MPI_DUP_FN, MPI_NULL_DELETE_FN"]
    open(outdir + "/mpif.h", "w").write(fixed_form(mpif))

    # predefined tables for libmpi
    inc = ["// Generated by gen_fortran.py from mpi.h: do not edit."]
    for t in HANDLE_TYPES:
        objs = tables[t]
        inc.append("void* const %s[] = {" % TABLE_NAME[t])
        inc.append("    nullptr,")
        for o in objs[1:]:
            inc.append("    &%s," % o)
        inc.append("};")
    open(outdir + "/fortran_predefined.inc", "w").write("\n".join(inc) + "\n")

    glue = ["// Generated by gen_fortran.py from mpi.h: do not edit. The Fortran binding's",
            "// C side; the helpers are in fortran_glue.hpp.",
            '#include "fortran_glue.hpp"',
            "",
            "using namespace sluice::fortran;",
            "",
            'extern "C" {']
    interfaces = [ATTR_CALLBACKS]
    provided, left_out = [], []
    for ret, fname, params in funcs:
        if fname.endswith("_c") or fname.startswith("PMPI_"):
            continue  # MPI-4 large counts: mpi_f08 only
        if fname in MANUAL:
            interfaces.append(MANUAL[fname])
            provided.append(fname + " (hand-written)")
            continue
        if fname in NOT_FORTRAN:
            left_out.append((fname, NOT_FORTRAN[fname]))
            continue
        if fname.startswith("MPI_T_"):
            left_out.append((fname, "the tool information interface is C only (MPI-3.1 §14.3)"))
            continue
        if ret != "int":
            left_out.append((fname, "returns %s" % ret))
            continue
        args, why = [], None
        for p in params:
            a, why = classify(fname, p, params)
            if a is None:
                break
            args.append(a)
        if why:
            left_out.append((fname, why))
            continue
        lower = fname.lower()
        cparams = [a.cparam for a in args] + ["MPI_Fint* ierror"] + [a.hidden for a in args if a.hidden]
        sig = "(%s)" % ", ".join(cparams)
        glue.append("")
        glue.append("void p%s_%s {" % (lower, sig))
        for a in sorted(args, key=lambda a: a.late):
            glue.extend("  " + line for line in a.pre)
        call = "%s(%s)" % (fname, ", ".join(a.call for a in args))
        glue.append("  const int rc = %s;" % call)
        for a in args:
            glue.extend("  " + line for line in a.post)
        glue.append("  *ierror = rc;")
        glue.append("}")
        for alias in (lower + "_", lower + "__", lower, fname.upper()):
            glue.append('void %s%s __attribute__((weak, alias("p%s_")));' % (alias, sig, lower))
        # interface
        names = [p.name for p in params] + ["ierror"]
        decls = [a.fdecl for a in args] + ["integer :: ierror"]
        body = [free_form("      subroutine %s(%s)" % (fname.upper(), ", ".join(names)))]
        if needs_address_kind(decls):
            body.append("        import :: MPI_ADDRESS_KIND, MPI_COUNT_KIND, MPI_OFFSET_KIND, &")
            body.append("                  MPI_STATUS_SIZE")
        for a in args:
            if a.fattr:
                body.append("        !GCC$ ATTRIBUTES NO_ARG_CHECK :: %s" % a.fattr)
        body.extend("        " + d for d in decls)
        body.append("      end subroutine")
        interfaces.append("\n" + "\n".join(body))
        provided.append(fname)
    glue.append("")
    glue.append('}  // extern "C"')
    open(outdir + "/fortran_glue.cpp", "w").write("\n".join(glue) + "\n")

    mod = ["! The `mpi` module of Sluice MPI (generated by gen_fortran.py from mpi.h).",
           "module mpi",
           "      implicit none"] + consts + [
           "      interface"] + interfaces + [
           "      end interface",
           "end module mpi"]
    open(outdir + "/mpi.f90", "w").write("\n".join(mod) + "\n")

    cov = ["# Fortran routines provided (mpif.h and the mpi module): %d" % len(provided)]
    cov += sorted(provided)
    cov += ["", "# C functions of mpi.h without a Fortran binding: %d" % len(left_out)]
    cov += ["%s: %s" % x for x in sorted(left_out)]
    open(outdir + "/fortran_coverage.txt", "w").write("\n".join(cov) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        fail("usage: gen_fortran.py MPI_H OUTDIR")
    generate(sys.argv[1], sys.argv[2])
