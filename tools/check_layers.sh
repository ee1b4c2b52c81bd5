#!/bin/sh
# check_layers.sh [OBJDIR...] - fails when an #include or a call runs up the layers or closes a cycle
# (docs/ARCHITECTURE.md, "Layers").
#
# Every folder has a rank; a file may include files of its own folder and of folders of a lower rank, never of a
# folder of the same or a higher rank. Between the files of one folder the include graph must have no cycle
# (checked with tsort). Includes resolve as the compiler resolves them with -I.: the including file's folder
# first, then the tree's root.
# With OBJDIRs (object folders that mirror the tree: build/obj, and the separately built products build/nnsim and
# build/torchlib), the same rules hold for calls: an edge a -> b when a.o uses a global symbol that b.o defines (nm),
# for every object whose source (.c or .cpp) is a file of the tree. Cycles are looked for among all the files of a
# layer folder, its subfolders included. So a driver file and its parts cannot call each other in a loop, and a lower
# layer cannot call up through a function pointer table that names a higher layer's functions.
# Run from the root of the tree; prints one line per violation, exits 1 on any.

set -u

rank_of() {
    case "$1" in
    core) echo 0 ;;
    backends/runner) echo 2 ;; # above formats: it writes the model files it hands a runtime
    reference | cases | formats | nnsim | backends/*) echo 1 ;; # nnsim: the simulated NNAPI library
    oracle) echo 2 ;;
    exec | reports | gen) echo 3 ;;
    runner) echo 4 ;;
    campaign) echo 5 ;;
    cli) echo 6 ;;
    tests | tests/* | fuzz/targets) echo 9 ;;
    *) echo "" ;;
    esac
}

# The layer folder of a path: its top folder, or backends/<name> (each backend is its own folder) or fuzz/targets
# (the libFuzzer programs, above everything); cases/ops is part of cases,
# tests/plugins part of tests.
folder_of() {
    case "$1" in
    backends/*/* | fuzz/targets/*) echo "$1" | cut -d/ -f1-2 ;;
    */*) echo "$1" | cut -d/ -f1 ;;
    *) echo "." ;;
    esac
}

files=$(git ls-files 'core/*' 'reference/*' 'cases/*.[ch]' 'cases/ops/*' 'oracle/*' 'exec/*' 'reports/*' 'runner/*' \
    'cli/*' 'backends/*' 'nnsim/*' 'tests/*' 'fuzz/*' 'gen/*' 'campaign/*' 'formats/*' 2>/dev/null | grep -E '\.(c|cpp|h|hpp|def|inc)$')
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
bad=0

for f in $files; do
    dir=$(dirname "$f")
    src_folder=$(folder_of "$f")
    src_rank=$(rank_of "$src_folder")
    grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" | while IFS= read -r line; do
        n=${line%%:*}
        inc=$(echo "$line" | sed 's/^[^"]*"\([^"]*\)".*/\1/')
        if [ -f "$dir/$inc" ]; then
            target=$(realpath --relative-to=. "$dir/$inc")
        elif [ -f "$inc" ]; then
            target=$(realpath --relative-to=. "$inc")
        else
            continue # a system or generated header
        fi
        echo "$f $target" >>"$edges"
        tgt_folder=$(folder_of "$target")
        [ "$tgt_folder" = "$src_folder" ] && continue
        tgt_rank=$(rank_of "$tgt_folder")
        if [ -z "$src_rank" ] || [ -z "$tgt_rank" ]; then
            echo "$f:$n: includes $target: folder '$tgt_folder' or '$src_folder' has no layer in tools/check_layers.sh"
            echo x >>"$edges.bad"
        elif [ "$tgt_rank" -ge "$src_rank" ]; then
            echo "$f:$n: includes $target: layer $tgt_folder ($tgt_rank) is not below $src_folder ($src_rank)"
            echo x >>"$edges.bad"
        fi
    done
done

if [ -s "$edges.bad" ]; then bad=1; fi
rm -f "$edges.bad"

# Cycles: tsort names the files of any loop on stderr.
if ! tsort "$edges" >/dev/null 2>"$edges.err"; then
    echo "include cycle:"
    sed 's/^tsort: /  /' "$edges.err"
    bad=1
fi
rm -f "$edges.err"

# Calls between object files.
n_calls=0
if [ $# -ge 1 ]; then
    calls=$(mktemp)
    : >"$calls.defs"
    : >"$calls.uses"
    for obj in "$@"; do
        [ -d "$obj" ] || continue # a product this build left out
        for o in $(cd "$obj" && find . -name '*.o' | sed 's|^\./||'); do
            src=${o%.o}
            if [ -f "$src.c" ]; then src=$src.c; elif [ -f "$src.cpp" ]; then src=$src.cpp; else continue; fi
            [ -n "$(rank_of "$(folder_of "$src")")" ] || continue # generated or outside the layers (build/gen)
            nm --defined-only -g "$obj/$o" | awk -v f="$src" 'NF == 3 && $2 != "V" && $2 != "W" { print $3, f }' \
                >>"$calls.defs"
            nm -u "$obj/$o" | awk -v f="$src" '{ print $2, f }' >>"$calls.uses"
        done
    done
    sort -u "$calls.defs" -o "$calls.defs"
    sort -u "$calls.uses" -o "$calls.uses"
    join "$calls.uses" "$calls.defs" | awk '$2 != $3 { print $2, $3 }' | sort -u >"$calls"
    n_calls=$(wc -l <"$calls")
    while read -r a b; do
        fa=$(folder_of "$a")
        fb=$(folder_of "$b")
        [ "$fa" = "$fb" ] && continue
        ra=$(rank_of "$fa")
        rb=$(rank_of "$fb")
        if [ -n "$ra" ] && [ -n "$rb" ] && [ "$rb" -ge "$ra" ]; then
            echo "$a calls into $b: layer $fb ($rb) is not below $fa ($ra)"
            bad=1
        fi
    done <"$calls"
    # a cycle among the files of one layer folder, subfolders included
    while read -r a b; do echo "$(folder_of "$a") $a $b"; done <"$calls" >"$calls.f"
    for fo in $(awk '{ print $1 }' "$calls.f" | sort -u); do
        awk -v d="$fo" '$1 == d { print $2, $3 }' "$calls.f" >"$calls.one"
        if ! tsort "$calls.one" >/dev/null 2>"$calls.err"; then
            echo "call cycle in $fo:"
            grep -v 'input contains a loop' "$calls.err" | sed 's/^tsort: /  /'
            bad=1
        fi
    done
    rm -f "$calls" "$calls.defs" "$calls.uses" "$calls.f" "$calls.one" "$calls.err"
fi

n_edges=$(wc -l <"$edges")
n_cross=$(awk '{ split($1, a, "/"); split($2, b, "/"); if (a[1] != b[1]) c++ } END { print c + 0 }' "$edges")
if [ "$bad" -ne 0 ]; then
    echo "check_layers: FAILED ($n_edges include edges, $n_cross across top folders, $n_calls call edges)"
    exit 1
fi
echo "check_layers: $n_edges include edges ($n_cross across top folders), $n_calls call edges: nothing runs up, no cycle"
