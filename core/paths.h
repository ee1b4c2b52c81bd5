/*
 * paths.h - where parity finds its own files, from where its executable is, never from where it was built: a parity
 * run from a build folder (build/parity, build/tests/test_x) uses that build folder and the source tree around it;
 * an installed or copied parity uses the folders beside its bin/ (PREFIX/share/parity, PREFIX/lib/parity,
 * PREFIX/include/parity), and the PREFIX it was built for as the last resort. Nothing here knows the build tree's
 * absolute path.
 */
#ifndef PAR_PATHS_H
#define PAR_PATHS_H

#include <stddef.h>

/* The folder of the running executable (/proc/self/exe); "" when it cannot be read. */
const char *par_exe_dir(void);
/* The build folder the executable runs from: the folder of libparity.a beside it or one folder up (a test in
 * build/tests); "" for an installed or copied executable. */
const char *par_build_dir(void);
/* The source tree of that build folder (the nearest of its parent, grandparent and great-grandparent that holds
 * core/parity_backend.h: build/, build/san, build/aarch64/san); "" otherwise. */
const char *par_tree_dir(void);
/* The installation prefix of an installed executable: the parent of its bin/ when that holds share/parity or
 * include/parity; else the PREFIX it was built for (PAR_PREFIX_DIR). */
const char *par_prefix_dir(void);

#endif
