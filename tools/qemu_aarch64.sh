#!/bin/sh
# qemu_aarch64.sh PROGRAM [ARGS...] - runs a program of the aarch64 cross-build (build/aarch64, make ARCH=aarch64)
# under qemu-user on another machine (docs/aarch64.md). The emulated CPU is $QEMU_CPU (qemu reads it; `max` has
# the dot-product instructions, `cortex-a53` has not); unset, it is `max`.
#
# The loader and libc are the cross toolchain's (/usr/aarch64-linux-gnu: qemu's -L prefix), and LD_LIBRARY_PATH
# puts its libc first: Debian's multiarch libc6:arm64 (installed with libjson-c-dev:arm64) is another build of
# glibc, and its libc.so.6 under the cross loader corrupts the thread list (pthread_create spins forever). Then
# the private sysroot's pthreadpool, cpuinfo and XNNPACK, and the simulated libneuralnetworks.so.
# qemu-user runs only this program: one it executes (system(), popen, exec) runs natively, so an aarch64 program
# cannot start another aarch64 program through the shell (no binfmt_misc registration is assumed).
# POSIX sh.
here=$(cd "$(dirname "$0")/.." && pwd)
sysroot=${AARCH64_SYSROOT:-$here/build/aarch64/sysroot}
: "${QEMU_CPU:=max}"
export QEMU_CPU
exec qemu-aarch64 -L /usr/aarch64-linux-gnu \
    -E LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib:$sysroot/usr/lib/aarch64-linux-gnu:$here/build/aarch64/lib "$@"
