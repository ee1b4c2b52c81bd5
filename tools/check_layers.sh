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

# The layers as awk functions, shared by the include and the call checks (one awk per check, no process per edge).
LAYERS_AWK='
function rank_of(f) {
    if (f == "core") return 0
    if (f == "backends/runner") return 2 # above formats: it writes the model files it hands a runtime
    if (f == "reference" || f == "cases" || f == "formats" || f == "nnsim" || f ~ /^backends\//) return 1 # nnsim: the simulated NNAPI library
    if (f == "oracle") return 2
    if (f == "exec" || f == "reports" || f == "gen") return 3
    if (f == "runner") return 4
    if (f == "campaign") return 5
    if (f == "cli") return 6
    if (f == "tests" || f ~ /^tests\// || f == "fuzz/targets") return 9
    return ""
}
# The layer folder of a path: its top folder, or backends/<name> (each backend is its own folder) or fuzz/targets
# (the libFuzzer programs, above everything); cases/ops is part of cases, tests/plugins part of tests.
function folder_of(p,    a, n) {
    n = split(p, a, "/")
    if (a[1] == "backends" && n >= 3) return "backends/" a[2]
    if (a[1] == "fuzz" && a[2] == "targets" && n >= 3) return "fuzz/targets"
    if (n >= 2) return a[1]
    return "."
}
# 1 when the file exists and can be read (without a process: getline fails on a missing file)
function exists(p,    line, r) {
    r = (getline line < p)
    close(p)
    return r >= 0
}
# p with its "." and ".." parts resolved, as realpath --relative-to=. gives it for a path inside the tree
function normal(p,    a, n, i, k, out, st) {
    n = split(p, a, "/")
    k = 0
    for (i = 1; i <= n; i++) {
        if (a[i] == "" || a[i] == ".") continue
        if (a[i] == ".." && k > 0 && st[k] != "..") { k--; continue }
        st[++k] = a[i]
    }
    out = ""
    for (i = 1; i <= k; i++) out = out (i > 1 ? "/" : "") st[i]
    return k ? out : "."
}
'

files=$(git ls-files 'core/*' 'reference/*' 'cases/*.[ch]' 'cases/ops/*' 'oracle/*' 'exec/*' 'reports/*' 'runner/*' \
    'cli/*' 'backends/*' 'nnsim/*' 'tests/*' 'fuzz/*' 'gen/*' 'campaign/*' 'formats/*' 2>/dev/null | grep -E '\.(c|cpp|h|hpp|def|inc)$')
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
bad=0

# Includes: every quoted #include of every file (grep prints FILE:LINE:TEXT), resolved as the compiler does.
# (the file names have no blanks: git ls-files above)
grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' /dev/null $files | awk -v edges="$edges" "$LAYERS_AWK"'
{
    f = $0; sub(/:.*/, "", f)
    rest = substr($0, length(f) + 2)
    n = rest; sub(/:.*/, "", n)
    inc = substr(rest, length(n) + 2)
    sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
    dir = f; if (!sub(/\/[^\/]*$/, "", dir)) dir = "."
    if (exists(dir "/" inc)) target = normal(dir "/" inc)
    else if (exists(inc)) target = normal(inc)
    else next # a system or generated header
    print f, target > edges
    src_folder = folder_of(f); tgt_folder = folder_of(target)
    if (tgt_folder == src_folder) next
    src_rank = rank_of(src_folder); tgt_rank = rank_of(tgt_folder)
    if (src_rank == "" || tgt_rank == "") {
        print f ":" n ": includes " target ": folder \047" tgt_folder "\047 or \047" src_folder "\047 has no layer in tools/check_layers.sh"
        bad = 1
    } else if (tgt_rank >= src_rank) {
        print f ":" n ": includes " target ": layer " tgt_folder " (" tgt_rank ") is not below " src_folder " (" src_rank ")"
        bad = 1
    }
}
END { close(edges); exit bad }' || bad=1

# Cycles: tsort names the files of any loop on stderr.
if ! tsort "$edges" >/dev/null 2>"$edges.err"; then
    echo "include cycle:"
    sed 's/^tsort: /  /' "$edges.err"
    bad=1
fi
rm -f "$edges.err"

# Calls between object files: the objects whose source (.c or .cpp) is a file of the layers, then nm once over all.
n_calls=0
if [ $# -ge 1 ]; then
    calls=$(mktemp)
    for obj in "$@"; do
        [ -d "$obj" ] || continue # a product this build left out
        (cd "$obj" && find . -name '*.o') | sed "s|^\./||; s|^|$obj |"
    done | awk "$LAYERS_AWK"'{
        src = $2; sub(/\.o$/, "", src)
        if (exists(src ".c")) src = src ".c"; else if (exists(src ".cpp")) src = src ".cpp"; else next
        if (rank_of(folder_of(src)) == "") next # generated or outside the layers (build/gen)
        print $1 "/" $2, src
    }' >"$calls.objs"
    : >"$calls.defs"
    : >"$calls.uses"
    if [ -s "$calls.objs" ]; then
        # nm -A prefixes each line with "OBJECT:"; the source of each object from $calls.objs
        nm -A --defined-only -g $(awk '{ print $1 }' "$calls.objs") | awk -v map="$calls.objs" '
            BEGIN { while ((getline l < map) > 0) { split(l, a, " "); src[a[1]] = a[2] } }
            { o = $1; sub(/:.*/, "", o) }
            NF == 3 && $2 != "V" && $2 != "W" { print $3, src[o] }' >"$calls.defs"
        nm -A -u $(awk '{ print $1 }' "$calls.objs") | awk -v map="$calls.objs" '
            BEGIN { while ((getline l < map) > 0) { split(l, a, " "); src[a[1]] = a[2] } }
            { o = $1; sub(/:.*/, "", o); print $NF, src[o] }' >"$calls.uses"
    fi
    sort -u "$calls.defs" -o "$calls.defs"
    sort -u "$calls.uses" -o "$calls.uses"
    join "$calls.uses" "$calls.defs" | awk '$2 != $3 { print $2, $3 }' | sort -u >"$calls"
    n_calls=$(wc -l <"$calls")
    # upward calls; and each edge with its folder, for the cycles below
    awk -v fo="$calls.f" "$LAYERS_AWK"'{
        fa = folder_of($1); fb = folder_of($2)
        print fa, $1, $2 > fo
        if (fa == fb) next
        ra = rank_of(fa); rb = rank_of(fb)
        if (ra != "" && rb != "" && rb >= ra) { print $1 " calls into " $2 ": layer " fb " (" rb ") is not below " fa " (" ra ")"; bad = 1 }
    }
    END { close(fo); exit bad }' "$calls" || bad=1
    [ -f "$calls.f" ] || : >"$calls.f"
    # a cycle among the files of one layer folder, subfolders included
    for fo in $(awk '{ print $1 }' "$calls.f" | sort -u); do
        awk -v d="$fo" '$1 == d { print $2, $3 }' "$calls.f" >"$calls.one"
        if ! tsort "$calls.one" >/dev/null 2>"$calls.err"; then
            echo "call cycle in $fo:"
            grep -v 'input contains a loop' "$calls.err" | sed 's/^tsort: /  /'
            bad=1
        fi
    done
    rm -f "$calls" "$calls.objs" "$calls.defs" "$calls.uses" "$calls.f" "$calls.one" "$calls.err"
fi

n_edges=$(wc -l <"$edges")
n_cross=$(awk '{ split($1, a, "/"); split($2, b, "/"); if (a[1] != b[1]) c++ } END { print c + 0 }' "$edges")
if [ "$bad" -ne 0 ]; then
    echo "check_layers: FAILED ($n_edges include edges, $n_cross across top folders, $n_calls call edges)"
    exit 1
fi
echo "check_layers: $n_edges include edges ($n_cross across top folders), $n_calls call edges: nothing runs up, no cycle"
