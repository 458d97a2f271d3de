#!/bin/sh
# wrappers.sh BINDIR SRCDIR: mpicc/mpicxx compile, link, -show and -I/-L pass-through.
set -eu
bin=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$bin/mpicc" -show | grep -q -- "-lmpi" || fail "mpicc -show does not link libmpi"
"$bin/mpicc" -show -c x.c | grep -q -- "-lmpi" && fail "mpicc -show -c links"
"$bin/mpicc" -showme:compile | grep -q -- "-I" || fail "mpicc -showme:compile"
"$bin/mpicc" -showme:link | grep -q -- "mpi" || fail "mpicc -showme:link"
"$bin/mpicc" -link-info | grep -q -- "-lmpi" || fail "mpicc -link-info"
mkdir "$tmp/inc" "$tmp/lib"
echo '#define WRAPPER_VALUE 42' > "$tmp/inc/wrapper_test.h"
cat > "$tmp/t.c" <<'C'
#include <mpi.h>
#include <wrapper_test.h>
int helper(void);
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* Predefined handles are weak references (mpi.h): each must resolve, also when linked
     statically, where nothing but MPI_Init pulls in the objects defining them. */
  int handles_ok = MPI_SUM != MPI_OP_NULL && MPI_MAXLOC != MPI_OP_NULL &&
                   MPI_INT != MPI_DATATYPE_NULL && MPI_C_BOOL != MPI_DATATYPE_NULL &&
                   MPI_INFO_ENV != MPI_INFO_NULL && MPI_ERRORS_RETURN != MPI_ERRHANDLER_NULL &&
                   MPI_COMM_SELF != MPI_COMM_NULL && MPI_GROUP_EMPTY != MPI_GROUP_NULL &&
                   MPI_IN_PLACE != 0;
  MPI_Finalize();
  return helper() == WRAPPER_VALUE && size >= 1 && handles_ok ? 0 : 1;
}
C
echo 'int helper(void) { return 42; }' > "$tmp/h.c"
"$bin/mpicc" -c -o "$tmp/h.o" "$tmp/h.c"
ar rcs "$tmp/lib/libhelper.a" "$tmp/h.o"
"$bin/mpicc" -c -I"$tmp/inc" -o "$tmp/t.o" "$tmp/t.c"
"$bin/mpicc" -o "$tmp/t" "$tmp/t.o" -L"$tmp/lib" -lhelper
"$bin/sluicerun" -n 2 --timeout 60 "$tmp/t" || fail "C program built by mpicc failed"
# Predefined objects (MPI_COMM_WORLD, ...) must be reached through the GOT, never copied
# into the executable at link time (a later libmpi with larger objects would overrun them).
if command -v readelf >/dev/null; then
  readelf -r --wide "$tmp/t" | grep -q 'R_X86_64_COPY.*sluice_' &&
    fail "a predefined MPI object is copy-relocated into the program"
fi
SLUICE_MPI_STATIC=1 "$bin/mpicc" -o "$tmp/ts" "$tmp/t.o" -L"$tmp/lib" -lhelper
"$bin/sluicerun" -n 2 --timeout 60 "$tmp/ts" || fail "statically linked program failed"
cat > "$tmp/t.cpp" <<'C'
#include <mpi.h>
#include <vector>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<int> v(1, rank), w(1, -1);
  MPI_Sendrecv(v.data(), 1, MPI_INT, (rank + 1) % size, 0, w.data(), 1, MPI_INT,
               (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Finalize();
  return w[0] == (rank + size - 1) % size ? 0 : 1;
}
C
"$bin/mpicxx" -o "$tmp/tcxx" "$tmp/t.cpp"
"$bin/sluicerun" -n 3 --timeout 60 "$tmp/tcxx" || fail "C++ program built by mpicxx failed"
echo PASS
