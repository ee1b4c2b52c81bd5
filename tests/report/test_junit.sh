# test_junit.sh - JUnit XML end to end (reports/junit.c, `parity report FILE --junit OUT`):
#   - the fixture report (real FAILs of tp_offbyone) rendered as JUnit validates against tests/data/junit.xsd with
#     xmllint, and the schema check can fail: a deliberately invalid file is rejected with the same XSD;
#   - per backend, the testsuite's tests, failures, errors and skipped, and its testcases, equal the report's counts,
#     read from the JSON by python3 (not by parity);
#   - a report whose backend strings hold control characters and invalid UTF-8 (the test plugin tp_badutf8 for real,
#     and the fixture report edited to hold them in a record's output, reason and describe text) still gives
#     well-formed, valid XML;
#   - an unwritable output path is refused with exit 2 and a message naming it, and a missing report with exit 2.
. tests/report/lib.sh

XSD=tests/data/junit.xsd
have_xmllint=0
command -v xmllint >/dev/null 2>&1 && have_xmllint=1

# valid FILE: the file is well-formed and valid under the XSD (skipped without xmllint)
valid() {
    if [ $have_xmllint = 1 ]; then
        check "$1 validates against $XSD" xmllint --noout --schema "$XSD" "$2"
    else
        skip "$1: xmllint not installed (libxml2-utils)"
    fi
}

fixture_report "$T/fx" || { no "fixture run"; finish; exit 1; }
ok

"$PARITY" report "$T/fx/report.json" --junit "$T/junit.xml" >"$T/out.txt" 2>&1
rc=$?
[ $rc -eq 1 ] && ok || no "parity report --junit on a report with failures exited $rc, expected 1"
[ -s "$T/junit.xml" ] && ok || no "no JUnit file written"
[ ! -s "$T/out.txt" ] && ok || no "parity report --junit printed something without --summary: $(head -3 "$T/out.txt")"
valid "the fixture's JUnit XML" "$T/junit.xml"
mkdir -p "$BUILD/report" && cp "$T/junit.xml" "$BUILD/report/junit.xml" 2>/dev/null

# the schema check itself can fail: a testsuite without its tests count, a negative failure count, a testcase
# without a name and a failure before a skipped element are each refused
if [ $have_xmllint = 1 ]; then
    for bad in '<testsuite name="s"><testcase name="c"/></testsuite>' \
               '<testsuite name="s" tests="1" failures="-1"><testcase name="c"/></testsuite>' \
               '<testsuite name="s" tests="1"><testcase classname="x"/></testsuite>' \
               '<testsuite name="s" tests="1"><testcase name="c"><failure/><skipped/></testcase></testsuite>'; do
        printf '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>%s</testsuites>\n' "$bad" >"$T/invalid.xml"
        if xmllint --noout --schema "$XSD" "$T/invalid.xml" >/dev/null 2>&1; then
            no "the XSD accepts an invalid file: $bad"
        else
            ok
        fi
    done
else
    skip "invalid files: xmllint not installed"
fi

# the counts, from the JSON by python3 and from the XML by python3's ElementTree
check "the JUnit counts are the report's" python3 - "$T/fx/report.json" "$T/junit.xml" <<'PY'
import json, sys
import xml.etree.ElementTree as ET
rep = json.load(open(sys.argv[1]))
root = ET.parse(sys.argv[2]).getroot()
suites = {s.get("name"): s for s in root.findall("testsuite")}
if len(suites) != len(rep["backends"]):
    sys.exit("%d testsuites for %d backends" % (len(suites), len(rep["backends"])))
total_fail = 0
for sb in rep["summary"]["backends"]:
    s = suites.get("parity." + sb["backend"])
    if s is None:
        sys.exit("no testsuite for backend %s" % sb["backend"])
    n = sb["counts"]
    want = {"tests": sb["records"], "failures": n["FAIL"], "skipped": n["UNSUPPORTED"],
            "errors": n["ERROR"] + n["CRASH"] + n["TIMEOUT"] + n["FLAKY"]}
    got = {k: int(s.get(k)) for k in want}
    if got != want:
        sys.exit("backend %s: JUnit %s, report %s" % (sb["backend"], got, want))
    cases = s.findall("testcase")
    recs = [r for r in rep["results"] if r["backend"] == sb["backend"]]
    if len(cases) != len(recs):
        sys.exit("backend %s: %d testcases, %d records" % (sb["backend"], len(cases), len(recs)))
    for tc, r in zip(cases, recs):
        if tc.get("name") != r["case"]:
            sys.exit("testcase %s is not record %s" % (tc.get("name"), r["case"]))
        kids = [k.tag for k in tc if k.tag != "system-out"]
        exp = {"PASS": [], "FAIL": ["failure"], "UNSUPPORTED": ["skipped"]}.get(r["verdict"], ["error"])
        if kids != exp:
            sys.exit("%s on %s (%s): elements %s, expected %s" % (r["case"], r["backend"], r["verdict"], kids, exp))
        if r["verdict"] == "FAIL" and r["repro"] not in tc.find("failure").text:
            sys.exit("%s: the failure's text lacks the repro command" % r["case"])
    total_fail += n["FAIL"]
if total_fail == 0:
    sys.exit("the fixture has no FAIL: the counts prove nothing")
PY

# control characters and invalid UTF-8: the test plugin tp_badutf8 (its describe text and run message) for real
"$PARITY" run --suite quick -o relu -b tp_badutf8 --plugin "$BUILD/tests/plugins/badutf8.so" --no-progress \
    --out "$T/bad" >"$T/bad.log" 2>&1
[ -s "$T/bad/report.json" ] && ok || no "tp_badutf8 run wrote no report: $(tail -3 "$T/bad.log")"
"$PARITY" report "$T/bad/report.json" --junit "$T/bad.xml" >/dev/null 2>&1
valid "tp_badutf8's JUnit XML" "$T/bad.xml"
check "tp_badutf8's records are errors" grep -q '<error type="ERROR"' "$T/bad.xml"

# ... and a report edited to hold C0 controls, U+FFFE and raw invalid bytes in a record's output and reason
check "edit the report" python3 - "$T/fx/report.json" "$T/ctl.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["results"][0]["output"] = "noise \u0001\u0002\u001b[31m red\ufffe\uffff end & <tag> ]]>"
r["results"][0]["reason"] = "bell \u0007 here"
r["backends"][0]["describe"] = "d\u0003x"
s = json.dumps(r, ensure_ascii=False).encode()
open(sys.argv[2], "wb").write(s.replace(b"noise ", b"noise \xff\xc3( ", 1))
PY
"$PARITY" report "$T/ctl.json" --junit "$T/ctl.xml" >/dev/null 2>&1
valid "the JUnit XML of a report with control characters" "$T/ctl.xml"
check "the control characters are shown as \\xNN" python3 - "$T/ctl.xml" <<'PY'
import sys
import xml.etree.ElementTree as ET
out = [e.text for e in ET.parse(sys.argv[1]).getroot().iter("system-out")]
if not any(t and "\\x01\\x02\\x1b[31m" in t and "& <tag> ]]>" in t for t in out):
    sys.exit("no system-out with the escaped controls and the markup characters as text")
PY

# bad output path, missing report
"$PARITY" report "$T/fx/report.json" --junit "$T/no/such/dir/junit.xml" >"$T/err.txt" 2>&1
rc=$?
[ $rc -eq 2 ] && ok || no "an unwritable --junit path exited $rc, expected 2"
grep -q "$T/no/such/dir/junit.xml" "$T/err.txt" && ok || no "the error does not name the path: $(cat "$T/err.txt")"
"$PARITY" report "$T/missing.json" --junit "$T/m.xml" >/dev/null 2>&1
rc=$?
[ $rc -eq 2 ] && ok || no "a missing report exited $rc, expected 2"
[ ! -e "$T/m.xml" ] && ok || no "a JUnit file was written for a missing report"

# parity run --junit renders the same XML from the report it wrote as parity report --junit does
fixture_report "$T/runj" --junit "$T/runj/junit.xml" || no "fixture run with --junit"
"$PARITY" report "$T/runj/report.json" --junit "$T/runj/again.xml" >/dev/null 2>&1
if [ -s "$T/runj/junit.xml" ] && cmp -s "$T/runj/junit.xml" "$T/runj/again.xml"; then ok; else
    no "parity run --junit differs from parity report --junit on the same report"; fi
grep -q "^junit: $T/runj/junit.xml\$" "$T/runj.log" && ok || no "parity run --junit does not name the file it wrote"

finish
