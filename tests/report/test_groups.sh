# test_groups.sh - the failure groups (reports/groups.c) on the planted bugs of two test plugins, end to end:
#   - tp_stride2 (conv2d at a horizontal stride of 2 leaves out the input's last column, so only some stride-2 cases
#     fail): `parity report --groups` names s=[2,2] with no failure outside it, and the summary of the run says so in
#     its first lines (before the list of failures);
#   - tp_chan8 (conv2d leaves out the last input channel when the channel count is not a multiple of 8): the group is
#     "input channels % 8 != 0", with no failure outside it;
#   - a report without failures has no groups ("no failures").
. tests/report/lib.sh

run_plugin() { # NAME: the quick conv2d cases on tests/plugins/NAME.so into $T/NAME
    "$PARITY" run --suite quick -o conv2d -b "tp_$1" --plugin "$BUILD/tests/plugins/$1.so" --no-progress \
        --out "$T/$1" >"$T/$1.log" 2>&1
}

run_plugin stride2
[ $? -eq 1 ] && ok || no "tp_stride2 run: expected exit 1 (failures): $(tail -2 "$T/stride2.log")"
"$PARITY" report "$T/stride2/report.json" --groups >"$T/g1.txt" 2>&1
grep -Eq '^conv2d on tp_stride2: [1-9][0-9]* of [0-9]+ with s=\[2,2\] fail, 0 of [1-9][0-9]* others$' "$T/g1.txt" &&
    ok || no "stride-2 bug not named by the groups: $(cat "$T/g1.txt")"
# in the summary: within its first 10 lines
head -10 "$T/stride2.log" | grep -q 'conv2d on tp_stride2: .* with s=\[2,2\] fail, 0 of' && ok ||
    no "the run's summary does not start with the group: $(head -10 "$T/stride2.log")"

run_plugin chan8
"$PARITY" report "$T/chan8/report.json" --groups >"$T/g2.txt" 2>&1
grep -Eq '^conv2d on tp_chan8: [1-9][0-9]* of [0-9]+ with input channels % 8 != 0 fail, 0 of [1-9][0-9]* others$' \
    "$T/g2.txt" && ok || no "channel bug not named by the groups: $(cat "$T/g2.txt")"

"$PARITY" run --suite quick -o relu -b cpu --no-progress --out "$T/clean" >/dev/null 2>&1
"$PARITY" report "$T/clean/report.json" --groups >"$T/g3.txt" 2>&1
[ "$(cat "$T/g3.txt")" = "no failures" ] && ok || no "a clean report's groups: $(cat "$T/g3.txt")"

finish
