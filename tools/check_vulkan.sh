#!/bin/sh
# check_vulkan.sh EXE OUTDIR JOBS - the `make check` step of the vulkan backend: the quick suite on `vulkan` and on
# `vulkan[precision=fp16]` (f16 storage; lavapipe on a machine without a GPU) when the backend is built and finds a
# device; otherwise one skip, with the reason, never a pass. On a device without 16-bit storage the fp16 instance is
# refused by its knob (UNSUPPORTED, naming the missing feature), never passed. The count line is `parity run`'s
# (`conformance: P passed, F failed, S skipped`) or the skip's.
# POSIX sh.
exe=$1 out=$2 jobs=$3
usable=$("$exe" list backends 2>/dev/null | awk '$1 == "vulkan" { print $3 }')
if [ -z "$usable" ]; then
    echo "SKIP conformance-vulkan: the vulkan backend is not built here (it needs vulkan.h, glslc and spirv-val)"
    echo "conformance-vulkan: 0 passed, 0 failed, 1 skipped"
    exit 0
fi
if [ "$usable" != yes ]; then
    echo "SKIP conformance-vulkan: no usable Vulkan device: $("$exe" list backends 2>&1 | grep '^vulkan')"
    echo "conformance-vulkan: 0 passed, 0 failed, 1 skipped"
    exit 0
fi
exec "$exe" run --suite quick -b 'vulkan,vulkan[precision=fp16]' -j "$jobs" --repeat 2 --no-progress --out "$out"
