/* stdinread.c - a correct relu that reads what it can from its standard input on every run and writes it, and a
 * line it never flushes, to stdout: a backend child must read nothing of the harness's stdin (it has /dev/null) and
 * what it wrote, flushed or not, a NUL byte inside, must reach the record's output. PASS. */
#include "tp_common.h"

#include <stdio.h>
#include <unistd.h>

static par_status run(void *ctx, void *prepared, par_msg *msg)
{
    char buf[256];
    ssize_t n = read(STDIN_FILENO, buf, sizeof buf - 1);
    if (n > 0) {
        buf[n] = '\0';
        printf("stdinread: read from stdin: %s\n", buf);
    }
    fwrite("stdinread: a NUL \0 and after the NUL\n", 1, 37, stdout); /* the text after it must be kept */
    printf("stdinread: never flushed\n"); /* stdout is a pipe: fully buffered, not flushed here */
    return tp_run_ok(ctx, prepared, msg);
}

TP_BACKEND("tp_stdinread", PAR_BACKEND_API_VERSION, run, NULL)
