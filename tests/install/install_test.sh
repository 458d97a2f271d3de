#!/bin/sh
# Installs the build tree into a temporary prefix, then builds and runs, from outside the
# tree and with nothing but the prefix: an MPI program (P/bin/mpicc, P/bin/mpirun; shared
# and static libmpi), Fortran MPI programs (P/bin/mpifort with `use mpi`, shared and
# static; P/bin/mpif77 with mpif.h) when the build has gfortran, and a native C++ program (pkg-config sluice, and find_package(Sluice)
# with Sluice::sluice and Sluice::sluice_static), each under the installed launcher.
#   install_test.sh BUILD_DIR SOURCE_DIR
set -eu
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
here="$src/tests/install"
work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
P="$work/prefix"
fail() { echo "FAIL: $*" >&2; exit 1; }
# loads_from_prefix PROGRAM LIB: the dynamic loader resolves LIB inside $P/lib.
loads_from_prefix() {
  _lib=$(ldd "$1" | awk -v l="$2" '$1 ~ l { print $3 }')
  [ -n "$_lib" ] && [ "$(dirname "$(readlink -f "$_lib")")" = "$(readlink -f "$P/lib")" ]
}

cmake --install "$build" --prefix "$P" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }

for f in bin/sluicerun bin/mpirun bin/mpiexec bin/mpicc bin/mpicxx bin/sluice-bench \
         bin/sluice-info bin/sluice-tune bin/sluice-demo bin/sluice-scale include/mpi.h \
         include/sluice/sluice.hpp include/sluice/collectives.hpp include/sluice/rma.hpp lib/libmpi.so lib/libmpi.a \
         lib/libsluice.so lib/libsluice.a lib/pkgconfig/sluice.pc \
         lib/cmake/Sluice/SluiceConfig.cmake lib/cmake/Sluice/SluiceConfigVersion.cmake; do
  [ -e "$P/$f" ] || fail "$f not installed"
done
fortran=no
if [ -e "$P/bin/mpifort" ]; then
  fortran=yes
  for f in bin/mpif90 bin/mpif77 include/mpif.h include/mpi.mod lib/libmpifort.so \
           lib/libmpifort.a; do
    [ -e "$P/$f" ] || fail "$f not installed"
  done
fi
# Nothing installed may point back into the build or source tree.
if grep -rlI -e "$build" -e "$src" "$P/bin/mpicc" "$P/bin/mpicxx" "$P/lib/pkgconfig" \
     "$P/lib/cmake" "$P/include/mpif.h" $( [ $fortran = no ] || echo "$P/bin/mpifort"); then
  fail "installed files name the build or source tree"
fi
# Every tool answers --help.
for t in sluicerun mpirun sluice-bench sluice-info sluice-tune sluice-demo sluice-scale; do
  "$P/bin/$t" --help >"$work/help.txt" 2>&1 || fail "$t --help exits non-zero"
  grep -qi usage "$work/help.txt" || fail "$t --help prints no usage"
done
for t in mpicc mpicxx; do
  "$P/bin/$t" --help 2>&1 | grep -q -- "-showme:compile" || fail "$t --help"
done

cd "$work"
cp "$here/hello_mpi.c" "$here/hello_native.cpp" "$here/hello_mpi.f90" "$here/hello_mpif.f" .

# MPI: the installed wrappers and launcher, libmpi.so from the prefix.
"$P/bin/mpicc" -O2 -o hello_mpi hello_mpi.c
loads_from_prefix ./hello_mpi libmpi.so || fail "hello_mpi does not load the prefix's libmpi"
"$P/bin/mpirun" -n 3 ./hello_mpi | tee out.txt
grep -q "mpi ok: size 3 sum 3 ring 3" out.txt || fail "MPI program (shared libmpi)"
SLUICE_MPI_STATIC=1 "$P/bin/mpicc" -O2 -o hello_mpi_static hello_mpi.c
"$P/bin/mpiexec" -n 2 ./hello_mpi_static | grep -q "mpi ok: size 2 sum 2 ring 1" ||
  fail "MPI program (static libmpi)"
"$P/bin/mpicxx" -O2 -x c++ -o hello_mpi_cxx hello_mpi.c
"$P/bin/mpirun" -n 2 ./hello_mpi_cxx | grep -q "mpi ok" || fail "MPI program (mpicxx)"

# Fortran: the installed mpifort finds mpi.mod, mpif.h and libmpifort in the prefix.
if [ $fortran = yes ]; then
  "$P/bin/mpifort" -O2 -o hello_mpi_f hello_mpi.f90
  loads_from_prefix ./hello_mpi_f libmpifort.so || fail "hello_mpi_f does not load the prefix's libmpifort"
  "$P/bin/mpirun" -n 3 ./hello_mpi_f | grep -q "fortran ok: size 3 sum 3 ring 3" ||
    fail "Fortran MPI program (use mpi, shared)"
  SLUICE_MPI_STATIC=1 "$P/bin/mpifort" -O2 -o hello_mpi_f_static hello_mpi.f90
  "$P/bin/mpirun" -n 2 ./hello_mpi_f_static | grep -q "fortran ok: size 2 sum 2 ring 1" ||
    fail "Fortran MPI program (use mpi, static)"
  "$P/bin/mpif77" -O2 -o hello_mpif hello_mpif.f
  "$P/bin/mpirun" -n 3 ./hello_mpif | grep -q "mpif ok: size 3 sum 3" ||
    fail "Fortran MPI program (mpif.h)"
fi

# Native API through pkg-config.
export PKG_CONFIG_PATH="$P/lib/pkgconfig"
# shellcheck disable=SC2046  # pkg-config's output is meant to split
c++ -std=c++20 -O2 -o hello_pc hello_native.cpp $(pkg-config --cflags --libs sluice)
loads_from_prefix ./hello_pc libsluice.so || fail "hello_pc does not load the prefix's libsluice"
"$P/bin/sluicerun" -n 2 ./hello_pc | grep -q "native ok: size 2 got 10" || fail "native program (pkg-config)"
# shellcheck disable=SC2046
c++ -std=c++20 -O2 -o hello_pc_static hello_native.cpp -static-libstdc++ \
  $(pkg-config --cflags sluice) "$P/lib/libsluice.a" $(pkg-config --static --libs-only-other --libs-only-l sluice | sed 's/-lsluice//')
"$P/bin/sluicerun" -n 2 ./hello_pc_static | grep -q "native ok" || fail "native program (libsluice.a)"

# Native API through find_package(Sluice).
mkdir consumer
cp "$here/CMakeLists.consumer.txt" consumer/CMakeLists.txt
cp hello_native.cpp consumer/
cmake -S consumer -B consumer/build -DCMAKE_PREFIX_PATH="$P" -DCMAKE_BUILD_TYPE=Release \
  >consumer.log 2>&1 || { cat consumer.log; fail "find_package(Sluice)"; }
cmake --build consumer/build >>consumer.log 2>&1 || { cat consumer.log; fail "building against Sluice::sluice"; }
"$P/bin/sluicerun" -n 2 consumer/build/hello_native | grep -q "native ok: size 2 got 10" ||
  fail "native program (find_package, Sluice::sluice)"
"$P/bin/sluicerun" -n 2 consumer/build/hello_native_static | grep -q "native ok" ||
  fail "native program (find_package, Sluice::sluice_static)"
echo "install test passed: $P"
