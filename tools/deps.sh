#!/bin/sh
# deps.sh PACKAGE... - installs the Debian packages that are missing (`make deps`). Prints nothing when all are
# installed; must be root to install. It changes nothing else on the machine (no upgrade, no removal).
#
# Not root: the missing packages are named in one line and nothing is installed. That fails only when the build
# itself needs one of them (DEPS_ESSENTIAL: the compiler, pkg-config, json-c, CUnit); any other missing package
# leaves out what needs it (the build leaves out a backend whose library is missing, and each check that needs a
# tool skips with its reason), so a developer who is not root still runs `make check` on what the machine has.
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
    essential=""
    for p in $missing; do
        case " ${DEPS_ESSENTIAL:-build-essential pkg-config libjson-c-dev libcunit1-dev} " in
        *" $p "*) essential="$essential $p" ;;
        esac
    done
    if [ -n "$essential" ]; then
        echo "make deps: missing Debian packages the build needs:$essential (run 'make deps' as root)"
        exit 1
    fi
    echo "make deps: not root, so not installed:$missing; what needs them is left out and its checks skip (run 'make deps' as root for all)"
    exit 0
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
