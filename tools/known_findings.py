#!/usr/bin/env python3
"""known_findings.py REPORT KNOWN STEP [--each] - the records of a `make check` step's report.json compared with a
list of known findings of the runtime under test (lines `BACKEND VERDICT CASE-ID`; whole-line `#` comments, since
case IDs hold '#'), shared by tools/check_nnapi.sh and tools/check_onednn.sh.

Every record must PASS, be UNSUPPORTED (skipped), or be a listed finding that still reproduces with its listed
verdict; anything else (NEW), a listed finding that passes now (FIXED: take it off the list) and one that was not run
(MISSING) fail. A reproduced finding counts as passed, named one per line with --each, else in one KNOWN line.
Run as a program it prints the count line `STEP: P passed, F failed, S skipped` and exits 1 on any failure; a step
with checks of its own imports compare() and prints the line itself. It must not judge values: the oracle did."""
import json
import sys


def load(known_path, step):
    known = {}
    for n, line in enumerate(open(known_path), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(None, 2)
        if len(parts) != 3:
            print(f"{known_path}:{n}: expected 'BACKEND VERDICT CASE-ID'")
            print(f"{step}: 0 passed, 1 failed")
            sys.exit(1)
        known[(parts[0], parts[2])] = parts[1]
    return known


def compare(results, known, known_path, each=False):
    """(passed, failed, skipped) over the records, with a line for every one that is not a plain PASS or skip."""
    passed = failed = skipped = 0
    seen = set()
    for rec in results:
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
            if each:
                print(f"KNOWN   {v} {key[0]} {key[1]}")
            continue
        failed += 1
        print(f"NEW     {v} {key[0]} {key[1]}: {rec.get('reason', '')[:300]}")
    run = {(x["backend"], x["case"]) for x in results}
    for key in sorted(known):
        if key not in seen and key not in run:
            failed += 1
            print(f"MISSING {key[0]} {key[1]}: listed in {known_path} but not run")
    if not each:
        print(f"KNOWN   {len(seen)} listed findings reproduced ({known_path})")
    return passed, failed, skipped


def main(argv):
    if len(argv) not in (4, 5) or (len(argv) == 5 and argv[4] != "--each"):
        print("usage: known_findings.py REPORT KNOWN STEP [--each]")
        return 2
    report, known_path, step = argv[1:4]
    known = load(known_path, step)
    passed, failed, skipped = compare(json.load(open(report))["results"], known, known_path, len(argv) == 5)
    print(f"{step}: {passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
