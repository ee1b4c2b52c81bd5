#!/bin/bash -eu
# fuzz/build.sh - builds the libFuzzer targets the way OSS-Fuzz and ClusterFuzzLite build a project
# (.clusterfuzzlite/build.sh calls it). It reads their variables:
#   CC, CXX             the compilers (clang, clang++)
#   CFLAGS              the sanitizer and coverage flags (e.g. -fsanitize=address,fuzzer-no-link): every library
#                       object is compiled with them
#   LIB_FUZZING_ENGINE  what each target links for its engine (e.g. -fsanitize=fuzzer)
#   OUT                 where the targets, their seed corpora (<target>_seed_corpus.zip) and dictionaries
#                       (<target>.dict) go
#   SRC                 where the tree is: $SRC/parity, or $SRC itself, or else the tree this script is in
#   WORK                scratch space for the objects (default /tmp/parity-fuzz-work)
#
# Locally (what `make fuzz` builds, the same sources and per-object flags, here with the caller's flags):
#   CC=clang CXX=clang++ CFLAGS="-O1 -g -fsanitize=address,undefined,fuzzer-no-link" \
#   LIB_FUZZING_ENGINE=-fsanitize=fuzzer OUT=/tmp/out SRC=$PWD bash fuzz/build.sh
#
# The library is built by the top-level Makefile (BUILD=$WORK/build), so this build cannot drift from `make`; each
# fuzz/targets/fuzz_<name>.c becomes $OUT/fuzz_<name>. Shared libraries the targets need beyond the C library
# (json-c, pthreadpool, cpuinfo, XNNPACK) are copied to $OUT/lib and found through an $ORIGIN/lib run path, since
# the machines that run the targets have only what is in $OUT.

: "${CC:=clang}" "${CXX:=clang++}" "${CFLAGS:=}" "${LIB_FUZZING_ENGINE:=-fsanitize=fuzzer}"
: "${OUT:?OUT must name the output folder}" "${WORK:=/tmp/parity-fuzz-work}"

here=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${SRC:-}" ] && [ -f "$SRC/parity/fuzz/build.sh" ]; then root=$SRC/parity
elif [ -n "${SRC:-}" ] && [ -f "$SRC/fuzz/build.sh" ]; then root=$SRC
else root=$here
fi
build=$WORK/build
mkdir -p "$OUT" "$build"
jobs=$(nproc 2>/dev/null || echo 2)

# Without pthreadpool and cpuinfo (older base images) the built-in backends cannot be built: then only core/ is,
# and only the targets that include nothing else are built; the others are named as left out.
# (PARITY_FUZZ_CORE_ONLY=1 asks for that build anywhere, to test it.)
core_only=${PARITY_FUZZ_CORE_ONLY:-0}
if [ ! -f /usr/include/pthreadpool.h ] || [ ! -f /usr/include/cpuinfo.h ]; then core_only=1; fi

# The library: the flags go in through OPT (the Makefile's optimisation slot), SANITIZE stays empty (CFLAGS has
# the sanitizers), CI= keeps -Werror off code this compiler sees differently, and CPPFLAGS through the environment
# so that the Makefile's own `CPPFLAGS +=` appends to it.
# (the last line of the print targets: the Makefile may say first that a backend is left out)
cppflags=$(make -C "$root" --no-print-directory -s BUILD="$build" fuzz-print-cppflags | tail -n 1)
if [ "$core_only" = 0 ]; then
    CPPFLAGS=-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION \
        make -C "$root" --no-print-directory -j"$jobs" BUILD="$build" CC="$CC" OPT="$CFLAGS" SANITIZE= CI= \
        "$build/libparity-all.a"
    libs=$(make -C "$root" --no-print-directory -s BUILD="$build" fuzz-print-libs | tail -n 1)
else
    echo "fuzz/build.sh: building core/ only (pthreadpool.h or cpuinfo.h missing, or PARITY_FUZZ_CORE_ONLY=1)"
    mkdir -p "$build/core"
    rm -f "$build/libparity-all.a"
    for c in "$root"/core/*.c; do
        # shellcheck disable=SC2086
        $CC $CFLAGS $cppflags -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -std=c11 -c "$c" \
            -o "$build/core/$(basename "$c" .c).o"
    done
    ar rcs "$build/libparity-all.a" "$build"/core/*.o
    libs="$(pkg-config --libs json-c) -ldl -lpthread -lm"
fi

mkdir -p "$OUT/lib"
for src in "$root"/fuzz/targets/fuzz_*.c; do
    t=$(basename "$src" .c)
    name=${t#fuzz_}
    if [ "$core_only" = 1 ] && grep -q '^#include "' "$src" && grep '^#include "' "$src" | grep -qv '"core/'; then
        echo "fuzz/build.sh: $t left out: it needs more than core/"
        continue
    fi
    # shellcheck disable=SC2086 # the flag lists are word lists
    $CC $CFLAGS $cppflags -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -std=c11 -c "$src" -o "$build/$t.o"
    # shellcheck disable=SC2086,SC2016 # $ORIGIN is for the dynamic linker, not the shell
    $CXX $CFLAGS $LIB_FUZZING_ENGINE "$build/$t.o" "$build/libparity-all.a" $libs -Wl,-rpath,'$ORIGIN/lib' \
        -o "$OUT/$t"
    if [ -d "$root/fuzz/corpus/$name" ] && [ -n "$(ls -A "$root/fuzz/corpus/$name")" ]; then
        rm -f "$OUT/${t}_seed_corpus.zip"
        (cd "$root/fuzz/corpus/$name" && zip -q -r "$OUT/${t}_seed_corpus.zip" .)
    fi
    if [ -f "$root/fuzz/$name.dict" ]; then cp "$root/fuzz/$name.dict" "$OUT/$t.dict"; fi
    # The shared libraries beyond the C runtime, next to the targets.
    ldd "$OUT/$t" | awk '/=> \// {print $3}' | while read -r so; do
        case $(basename "$so") in
        libc.so* | libm.so* | libdl.so* | libpthread.so* | librt.so* | ld-linux* | libstdc++.so* | libgcc_s.so*) ;;
        *) [ -e "$OUT/lib/$(basename "$so")" ] || cp -L "$so" "$OUT/lib/" ;;
        esac
    done
    echo "fuzz/build.sh: $OUT/$t"
done
