# test_child_io.sh - what a backend child reads and writes of the harness's standard streams (exec/server.c,
# exec/xsup.c, exec/child.c): its stdin is /dev/null, never the harness's (tests/plugins/stdinread.c reads what it
# can and prints it), and what it printed without flushing reaches the record's output tail in every record, also
# when the worker ends the child right after its last message, and a NUL byte in it cuts nothing (it is kept as
# U+FFFD, as any byte that is not text).
. tests/report/lib.sh

PLUGIN="$BUILD/tests/plugins/stdinread.so"
echo "SECRET-INPUT-OF-THE-HARNESS" >"$T/stdin.txt"
"$PARITY" run --suite quick -o relu -b tp_stdinread --plugin "$PLUGIN" -j 2 --no-progress --out "$T/r" \
    <"$T/stdin.txt" >"$T/r.log" 2>&1
rc=$?
[ $rc = 0 ] && ok || no "relu on tp_stdinread: exit $rc: $(tail -2 "$T/r.log")"
python3 - "$T/r/report.json" >"$T/check.txt" <<'PY'
import json, sys
r = [x for x in json.load(open(sys.argv[1]))["results"] if x["verdict"] == "PASS"]
leaked = sum("SECRET-INPUT" in x["output"] for x in r)
kept = sum("never flushed" in x["output"] for x in r)
nul = sum("after the NUL" in x["output"] for x in r)
print(len(r), leaked, kept, nul)
PY
read -r n leaked kept nul <"$T/check.txt"
[ "${n:-0}" -ge 20 ] && ok || no "only ${n:-0} records passed"
[ "${leaked:-1}" = 0 ] && ok || no "the backend child read the harness's stdin in $leaked of $n records"
[ "${kept:-0}" = "${n:-x}" ] && ok || no "unflushed output kept in $kept of $n records"
[ "${nul:-0}" = "${n:-x}" ] && ok || no "the output after a NUL byte kept in $nul of $n records"
grep -q "SECRET-INPUT" "$T/r.log" && no "the harness's stdin reached its own output" || ok
finish
