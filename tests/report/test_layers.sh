#!/bin/sh
# test_layers.sh - the layer guard (tools/check_layers.sh) checked on small trees of its own: a clean tree passes,
# and each planted violation fails it with the line that names it: an upward include, an upward call from a top
# folder, from a backend's folder and from a backend's subfolder, an include cycle, and a call cycle inside a top
# folder, a subfolder, between a folder and its subfolder, between C++ files, and between objects of a second
# object folder (a separately built product such as build/nnsim). Objects are compiled here with cc and c++.
# POSIX sh.

. "$(dirname "$0")/lib.sh"

guard=$(cd "$(dirname "$0")/../.." && pwd)/tools/check_layers.sh
command -v c++ >/dev/null 2>&1 && have_cxx=1 || have_cxx=0

# src FILE BODY: a source file of the small tree
src() {
    mkdir -p "$(dirname "$1")"
    printf '%s\n' "$2" >"$1"
}

# A clean tree: cli -> exec -> core, a backend and its subfolder calling core, a folder calling its subfolder.
base() {
    rm -rf "$T/tree"
    mkdir -p "$T/tree"
    cd "$T/tree" || exit 3
    src core/a.h 'int core_a(void);'
    src core/a.c '#include "a.h"
int core_a(void) { return 1; }'
    src core/b.c 'int core_a(void);
int core_b(void) { return core_a(); }'
    src exec/x.c '#include "core/a.h"
int exec_x(void) { return core_a(); }'
    src cli/m.c 'int exec_x(void);
int cli_m(void) { return exec_x(); }'
    src backends/k/k.c 'int core_a(void); int k_sub(void);
int k_k(void) { return core_a() + k_sub(); }'
    src backends/k/sub/s.c 'int core_b(void);
int k_sub(void) { return core_b(); }'
    src cases/w.c 'int cases_o(void);
int cases_w(void) { return cases_o(); }'
    src cases/ops/o.c 'int cases_o(void) { return 0; }'
    if [ $have_cxx = 1 ]; then
        src backends/t/t1.cpp 'int t2(int);
int t1(int x) { return x ? t2(x - 1) : 0; }'
        src backends/t/t2.cpp 'int t2(int x) { return x; }'
    fi
    cd - >/dev/null || exit 3
}

# guard EXPECT PATTERN DESCRIPTION: compiles every source of the tree into obj/ (and nnsim/ for the files named in
# $T/second), runs the guard, and checks its status (0 or 1) and, when failing, that a line matches PATTERN
guard() {
    expect=$1 pattern=$2 what=$3
    (
        cd "$T/tree" || exit 3
        rm -rf .git obj nnsim
        git init -q . && git add . && git -c user.email=t@t -c user.name=t commit -qm tree || exit 3
        for f in $(git ls-files '*.c' '*.cpp'); do
            dir=obj
            grep -qx "$f" "$T/second" 2>/dev/null && dir=nnsim
            mkdir -p "$dir/$(dirname "$f")"
            case $f in
            *.cpp) c++ -I. -c "$f" -o "$dir/${f%.cpp}.o" ;;
            *) cc -I. -c "$f" -o "$dir/${f%.c}.o" ;;
            esac || exit 3
        done
        sh "$guard" obj nnsim
    ) >"$T/guard.out" 2>&1
    rc=$?
    if [ $rc -ne "$expect" ]; then
        no "$what: exit $rc (expected $expect)"
        sed 's/^/    /' "$T/guard.out" | head -12
    elif [ "$expect" = 1 ] && ! grep -q -- "$pattern" "$T/guard.out"; then
        no "$what: no line matching '$pattern'"
        sed 's/^/    /' "$T/guard.out" | head -12
    else
        ok
    fi
    : >"$T/second"
}

: >"$T/second"
base
guard 0 '' "a clean tree"

base
src "$T/tree/core/up.c" '#include "cli/m.c"'
guard 1 'core/up.c:1: includes cli/m.c' "an upward include"

base
src "$T/tree/core/up.c" 'int cli_m(void);
int core_up(void) { return cli_m(); }'
guard 1 'core/up.c calls into cli/m.c' "an upward call from a top folder"

base
src "$T/tree/backends/k/up.c" 'int exec_x(void);
int k_up(void) { return exec_x(); }'
guard 1 'backends/k/up.c calls into exec/x.c' "an upward call from a backend's folder"

base
src "$T/tree/backends/k/sub/up.c" 'int cli_m(void);
int k_up(void) { return cli_m(); }'
guard 1 'backends/k/sub/up.c calls into cli/m.c' "an upward call from a backend's subfolder"

base
src "$T/tree/backends/k/sub/up.c" 'int k_side(void) { return 0; }'
src "$T/tree/backends/j/j.c" 'int k_side(void);
int j_j(void) { return k_side(); }'
guard 1 'backends/j/j.c calls into backends/k/sub/up.c' "a call sideways between two backends"

base
src "$T/tree/core/c1.h" '#include "c2.h"'
src "$T/tree/core/c2.h" '#include "c1.h"'
guard 1 'include cycle' "an include cycle"

base
src "$T/tree/core/a.c" 'int core_b(void);
int core_a(void) { return core_b(); }'
guard 1 'call cycle in core' "a call cycle in a top folder"

base
src "$T/tree/backends/k/sub/s2.c" 'int k_sub(void);
int k_s2(void) { return k_sub(); }'
src "$T/tree/backends/k/sub/s.c" 'int k_s2(void);
int k_sub(void) { return k_s2(); }'
guard 1 'call cycle in backends/k' "a call cycle in a backend's subfolder"

base
src "$T/tree/cases/ops/o.c" 'int cases_w(void);
int cases_o(void) { return cases_w(); }'
guard 1 'call cycle in cases' "a call cycle between a folder and its subfolder"

if [ $have_cxx = 1 ]; then
    base
    src "$T/tree/backends/t/t2.cpp" 'int t1(int);
int t2(int x) { return t1(x); }'
    guard 1 'call cycle in backends/t' "a call cycle between C++ files"
else
    skip "a call cycle between C++ files: no c++ compiler"
fi

base
src "$T/tree/backends/k/sub/s2.c" 'int k_sub(void);
int k_s2(void) { return k_sub(); }'
src "$T/tree/backends/k/sub/s.c" 'int k_s2(void);
int k_sub(void) { return k_s2(); }'
printf 'backends/k/sub/s.c\nbackends/k/sub/s2.c\n' >"$T/second"
guard 1 'call cycle in backends/k' "a call cycle in a second object folder"

finish
