#!/bin/sh
# deps.sh PACKAGE... - installs the Debian packages that are missing (`make deps`). Prints nothing when all are
# installed; must be root to install. It changes nothing else on the machine (no upgrade, no removal).
#
# A package counts as installed only in state "install ok installed" (dpkg -s also succeeds for a removed package
# whose configuration files remain). On a fresh machine another apt or dpkg process (unattended upgrades, a cloud
# init) often holds the locks for minutes: apt-get install waits for the dpkg lock (DPkg::Lock::Timeout), and
# apt-get update, which does not wait for the lists lock itself, is retried while the lock is what stops it. Both
# wait at most DEPS_LOCK_WAIT seconds (default 600). apt's own output is shown only when it fails.
# POSIX sh.

set -u
wait_s=${DEPS_LOCK_WAIT:-600}

missing=""
for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
    echo "make deps: missing Debian packages:$missing (run 'make deps' as root)"
    exit 1
fi
echo "make deps: installing$missing"

log=$(mktemp) || exit 1
trap 'rm -f "$log"' EXIT

waited=0 said=0
while ! apt-get -o DPkg::Lock::Timeout="$wait_s" update -qq >"$log" 2>&1; do
    if grep -q 'Could not get lock' "$log" && [ "$waited" -lt "$wait_s" ]; then
        if [ "$said" = 0 ]; then
            echo "make deps: waiting for another apt process to release its lock (up to $wait_s s)"
            said=1
        fi
        sleep 2
        waited=$((waited + 2))
        continue
    fi
    cat "$log"
    echo "make deps: apt-get update failed"
    exit 1
done

if ! DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout="$wait_s" install -y -qq $missing >"$log" 2>&1
then
    cat "$log"
    echo "make deps: apt-get install$missing failed"
    exit 1
fi
exit 0
