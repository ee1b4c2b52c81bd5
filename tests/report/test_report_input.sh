# test_report_input.sh - a report file is input like a case file: every command that reads one (parity report,
# diff, merge, coverage, run --baseline) refuses a malformed report through the one reader (reports/report_read.c) with exit 2 and
# one message naming the file, the JSON path of the field and the reason; none is killed by a signal, and no output
# file already there is overwritten. The files are tests/data/report/*.json, each good.json with one defect:
#   null                 "results": null (json-c's accessors abort on a null where an array is expected)
#   wrong_type           an array where an object is expected; wrong_type_string: an integer for a string
#   duplicate_key        "verdict": "PASS", "verdict": "FAIL" in one record (json-c keeps the last)
#   out_of_range         a count larger than the element count; negative_count: a negative byte count
#   huge_coordinate      the worst element at a coordinate of 99999999999; index_outside_shape: its flat index
#   seed_30_digits       a seed of 30 digits (json-c saturates it to 2^64 - 1)
#   nan                  NaN for a metric (json-c reads the literal even in strict mode)
#   truncated            the first half of the file
#   strip_order          a localization strip whose nodes are not in graph order; strip_over: a node with more
#                        elements over than compared; strip_first: a first divergent node that does not diverge
# good_strip.json (a FAIL record with a valid strip) reads (exit 1: the record fails), and its HTML draws the strip.
# parity reduce takes a case file or a findings folder, never a report: given one, it refuses it as a case file
# (exit 2, the file named), which is checked too.
. tests/report/lib.sh

D=tests/data/report
# the good report reads, so that every refusal below is the defect's
"$PARITY" report "$D/good.json" >"$T/good.out" 2>&1
rc=$?
[ $rc -eq 0 ] && ok || no "good.json: exit $rc: $(head -1 "$T/good.out")"

# refused NAME RC OUTPUT PATTERN: exit 2, the file and the pattern (the field's path and the reason) in the output
refused() {
    what=$1 rc=$2 out=$3 pat=$4
    if [ "$rc" -gt 128 ]; then no "$what: killed by signal $((rc - 128))"; return; fi
    if [ "$rc" -eq 2 ] && grep -q -- "$f" "$out" && grep -q -- "$pat" "$out" && [ "$(wc -l <"$out")" -le 2 ]; then
        ok
    else
        no "$what: exit $rc, message: $(head -2 "$out") (expected exit 2, $f and '$pat')"
    fi
}

while read -r name pat; do
    f=$D/$name.json
    [ -f "$f" ] || { no "$f is missing"; continue; }
    "$PARITY" report "$f" >"$T/o" 2>&1
    refused "report $name" $? "$T/o" "$pat"
    "$PARITY" diff "$D/good.json" "$f" >"$T/o" 2>&1
    refused "diff $name" $? "$T/o" "$pat"
    "$PARITY" diff "$f" "$D/good.json" >"$T/o" 2>&1
    refused "diff $name (first)" $? "$T/o" "$pat"
    "$PARITY" coverage "$f" >"$T/o" 2>&1
    refused "coverage $name" $? "$T/o" "$pat"
    # outputs already there stay as they were
    echo kept >"$T/merged.json"
    "$PARITY" merge "$D/good.json" "$f" -o "$T/merged.json" >"$T/o" 2>&1
    refused "merge $name" $? "$T/o" "$pat"
    [ "$(cat "$T/merged.json")" = kept ] && ok || no "merge $name: the output file was overwritten"
    echo kept >"$T/junit.xml"
    "$PARITY" report "$f" --junit "$T/junit.xml" >"$T/o" 2>&1
    refused "report --junit $name" $? "$T/o" "$pat"
    [ "$(cat "$T/junit.xml")" = kept ] && ok || no "report --junit $name: the output file was overwritten"
    "$PARITY" run --case 'relu(x=[3])#seed=1' -b cpu --no-progress --baseline "$f" --out "$T/run" >"$T/o" 2>&1
    refused "run --baseline $name" $? "$T/o" "$pat"
    [ ! -e "$T/run/report.json" ] && ok || no "run --baseline $name ran and wrote a report"
    "$PARITY" reduce "$f" -b cpu --out "$T/reduce" >"$T/o" 2>&1
    refused "reduce $name" $? "$T/o" "$f"
    [ ! -e "$T/reduce/reduced.json" ] && ok || no "reduce $name wrote a reduced case"
done <<'LIST'
null results: is null, expected an array
wrong_type results\[1\]\.timing: is an array, expected an object
wrong_type_string results\[0\]\.verdict: is an integer, expected a string
duplicate_key results\[0\]\.verdict: duplicate key
out_of_range results\[0\]\.metrics\.n_over: 300 is more than n (252)
negative_count results\[0\]\.output_bytes: -1 is out of range
huge_coordinate results\[0\]\.worst\.coords\[2\]: 99999999999 is outside its dimension
index_outside_shape results\[0\]\.worst\.index: 252 is outside the shape
seed_30_digits config\.seed: 123456789012345678901234567890 is beyond 64 bits
nan results\[0\]\.metrics\.max_abs: NaN is not a finite number
truncated ends early
strip_order results\[0\]\.localization\.nodes\[1\]\.node: 0 after 1
strip_over results\[0\]\.localization\.nodes\[0\]\.over: 300 is more than n
strip_first results\[0\]\.localization\.first\.node: 0 is not a diverging node
LIST

"$PARITY" report "$D/good_strip.json" --html "$T/strip.html" >"$T/o" 2>&1
rc=$?
if [ $rc -le 1 ] && grep -q 'svg class="strip"' "$T/strip.html" && grep -q 'first divergent node is 1 <code>b</code>' "$T/strip.html"; then
    ok
else
    no "good_strip.json: exit $rc, or its HTML has no strip naming node 1 'b': $(head -1 "$T/o")"
fi
finish
