#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz build step: the project's own fuzz build (fuzz/build.sh) with the compiler, flags and
# output folder the builder image sets ($CC, $CFLAGS, $LIB_FUZZING_ENGINE, $OUT).
bash "$SRC/parity/fuzz/build.sh"
