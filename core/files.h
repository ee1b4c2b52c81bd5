/*
 * files.h - the two file-system operations every writer of the harness needs: making a folder and its parents, and
 * writing a file atomically (a temporary file in the same folder, fsync, rename), so that a reader never sees half a
 * file and a crash loses nothing already written.
 */
#ifndef PAR_FILES_H
#define PAR_FILES_H

#include "parity_backend.h"

/* mkdir -p: 0 when path is a folder afterwards, else -1 with errno set. */
int par_mkdir_p(const char *path);

/* Write text to path atomically. 0, or -1 with msg naming the file and the reason. */
int par_write_file_atomic(const char *path, const char *text, par_msg *msg);
/* The same for len bytes of any content (a binary file). */
int par_write_bytes_atomic(const char *path, const void *data, size_t len, par_msg *msg);

#endif
