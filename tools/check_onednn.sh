#!/bin/sh
# check_onednn.sh EXE OUTDIR JOBS - the `make check` step of the onednn backend: the quick suite on oneDNN 2.6 with
# each fpmath setting, judged like every backend, then the records that did not pass compared with
# backends/onednn/known_findings.txt: what oneDNN itself computes otherwise than parity's ops (docs/findings.md,
# "Findings in oneDNN 2.6", each with a direct-call repro under tools/). Every record must PASS, be UNSUPPORTED
# (skipped), or be a listed finding that still reproduces with its listed verdict; anything else, and a listed
# finding that no longer reproduces (take it off the list), fails.
# Count line: `conformance-onednn: P passed, F failed, S skipped`. Built without oneDNN: one skip, never a pass.
exe=$1 out=$2 jobs=$3
known=backends/onednn/known_findings.txt
if ! "$exe" list backends 2>/dev/null | grep -q '^onednn '; then
    echo "SKIP conformance-onednn: built without oneDNN (make deps installs libdnnl-dev)"
    echo "conformance-onednn: 0 passed, 0 failed, 1 skipped"
    exit 0
fi
"$exe" run --suite quick -b 'onednn,onednn[fpmath=bf16]' -j "$jobs" --no-progress --out "$out" >"$out.log" 2>&1
rc=$?
grep -v "^conformance: " "$out.log" | grep -E '^(backend|onednn|ties|infinite)' | head -n 8
if [ "$rc" -gt 1 ] || [ ! -f "$out/report.json" ]; then
    echo "conformance-onednn: parity run exited $rc (output in $out.log)"
    echo "conformance-onednn: 0 passed, 1 failed"
    exit 1
fi
exec python3 - "$out/report.json" "$known" <<'PY'
import json, sys
report, known_path = sys.argv[1], sys.argv[2]
known = {}
for n, line in enumerate(open(known_path), 1):
    line = line.strip()
    if not line or line.startswith("#"):  # comments are whole lines: case IDs hold '#'
        continue
    parts = line.split(None, 2)
    if len(parts) != 3:
        print(f"{known_path}:{n}: expected 'BACKEND VERDICT CASE-ID'")
        print("conformance-onednn: 0 passed, 1 failed")
        sys.exit(1)
    known[(parts[0], parts[2])] = parts[1]
r = json.load(open(report))
passed = failed = skipped = 0
seen = set()
for rec in r["results"]:
    key = (rec["backend"], rec["case"])
    v = rec["verdict"]
    if v == "PASS":
        passed += 1
        if key in known:
            failed += 1
            print(f"FIXED   {key[0]} {key[1]}: listed as {known[key]} in {known_path} but passes now: take it off")
        continue
    if v == "UNSUPPORTED":
        skipped += 1
        continue
    if known.get(key) == v:
        passed += 1
        seen.add(key)
        continue
    failed += 1
    print(f"NEW     {v} {key[0]} {key[1]}: {rec.get('reason', '')[:300]}")
for key, v in sorted(known.items()):
    if key not in seen and not any((x["backend"], x["case"]) == key for x in r["results"]):
        failed += 1
        print(f"MISSING {key[0]} {key[1]}: listed in {known_path} but not run")
print(f"KNOWN   {len(seen)} listed oneDNN findings reproduced ({known_path})")
print(f"conformance-onednn: {passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
PY
