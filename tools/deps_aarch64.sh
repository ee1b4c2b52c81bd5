#!/bin/sh
# deps_aarch64.sh SYSROOT - what the aarch64 cross-build and `make check-aarch64` need (`make deps`, docs/aarch64.md):
# the arm64 architecture in dpkg (added only when missing), the cross compiler and qemu-user, the arm64 libraries
# Debian can install beside the amd64 ones (Multi-Arch: same: json-c, CUnit), and, in the
# private sysroot SYSROOT, the arm64 packages that cannot be (libpthreadpool, libxnnpack, and libcpuinfo, whose -dev
# cmake files clash with the amd64 package's): each fetched with `apt-get download` and extracted with dpkg-deb -x,
# its version in SYSROOT/PKG.version. Idempotent and silent when everything is present; a package already in the
# sysroot is not fetched again. Installing needs root; filling the sysroot does not. It changes nothing else.
# POSIX sh.

set -u
sysroot=${1:?usage: deps_aarch64.sh SYSROOT}
here=$(dirname "$0")

if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    if [ "$(id -u)" != 0 ]; then
        # only `make check-aarch64` needs it, and says so itself
        echo "make deps: the arm64 architecture is not enabled in dpkg, so the aarch64 cross-build cannot be set up (run 'make deps' as root for it)"
        exit 0
    fi
    echo "make deps: dpkg --add-architecture arm64"
    dpkg --add-architecture arm64 || exit 1
fi

# (deps.sh runs apt-get update before it installs anything, so the new architecture's lists are read.)
sh "$here/deps.sh" gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user \
    libjson-c-dev:arm64 libcunit1-dev:arm64 || exit 1

SYSROOT_PKGS="libcpuinfo0 libcpuinfo-dev libpthreadpool0 libpthreadpool-dev libxnnpack0 libxnnpack-dev"
need=""
for p in $SYSROOT_PKGS; do
    [ -s "$sysroot/$p.version" ] || need="$need $p"
done
[ -z "$need" ] && exit 0

echo "make deps: fetching the arm64$need into $sysroot"
mkdir -p "$sysroot" || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
for p in $need; do
    # (apt-get download needs the arm64 package lists: update them once when they have not been read yet)
    if ! (cd "$tmp" && apt-get download -qq "$p:arm64") >"$tmp/log" 2>&1; then
        if [ "$(id -u)" = 0 ] && [ ! -e "$tmp/updated" ]; then
            apt-get -o DPkg::Lock::Timeout="${DEPS_LOCK_WAIT:-600}" update -qq >"$tmp/log" 2>&1 && : >"$tmp/updated"
        fi
        if ! (cd "$tmp" && apt-get download -qq "$p:arm64") >"$tmp/log" 2>&1; then
            cat "$tmp/log"
            echo "make deps: apt-get download $p:arm64 failed"
            exit 1
        fi
    fi
    deb=$(ls "$tmp"/"${p}"_*_arm64.deb 2>/dev/null | head -n 1)
    if [ -z "$deb" ] || ! dpkg-deb -x "$deb" "$sysroot"; then
        echo "make deps: could not extract $p:arm64 into $sysroot"
        exit 1
    fi
    dpkg-deb -f "$deb" Version >"$sysroot/$p.version" || exit 1
    rm -f "$deb"
done
exit 0
