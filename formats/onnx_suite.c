/*
 * onnx_suite.c - ONNX's own backend node tests as a suite (`--suite onnx`): every folder of the installed
 * libonnx-testdata (Debian: /usr/share/libonnx-testdata/data/node/<test>/, or $PARITY_ONNX_NODE_DIR) is imported
 * with its first test data set, so the case's inputs are ONNX's and its expected outputs ONNX's (judged by the
 * `expected` backend). A test parity cannot express is reported with its reason, never run.
 *
 * Must not: run or judge anything.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "formats/onnx_suite.h"

const char *par_onnx_suite_dir(void)
{
    const char *env = getenv("PARITY_ONNX_NODE_DIR");
    if (env && *env) return env;
    return "/usr/share/libonnx-testdata/data/node";
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int par_onnx_suite_walk(par_onnx_suite_fn fn, void *user, par_msg *msg)
{
    const char *dir = par_onnx_suite_dir();
    if (!is_dir(dir))
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: not installed (Debian's libonnx-testdata: make deps installs it)",
                        dir), -1;
    struct dirent **ents = NULL;
    int n = scandir(dir, &ents, NULL, alphasort);
    if (n < 0) return par_msgf(msg, PAR_ERROR, "%s: cannot read the folder", dir), -1;
    int32_t count = 0;
    int stop = 0;
    for (int i = 0; i < n; i++) {
        const char *name = ents[i]->d_name;
        char model[4096];
        snprintf(model, sizeof model, "%s/%s/model.onnx", dir, name);
        struct stat st;
        if (!stop && name[0] != '.' && stat(model, &st) == 0 && S_ISREG(st.st_mode)) {
            par_import_opts o = {.seed = 1, .test_data = 1};
            par_import_info info;
            par_msg m = {{0}};
            par_case *c = par_model_import(model, &o, &info, &m);
            char why[PAR_MSG_LEN];
            if (c) {
                why[0] = 0;
                if (!c->expected) snprintf(why, sizeof why, "no test data");
            } else if (info.n_missing) {
                const par_import_missing *e = &info.missing[0];
                if (e->why[0]) snprintf(why, sizeof why, "%s: %s", e->op, e->why);
                else snprintf(why, sizeof why, "op %s not in parity's op table", e->op);
            } else {
                const char *p = strstr(m.text, ": ");
                snprintf(why, sizeof why, "%s", p ? p + 2 : m.text);
            }
            if (c && why[0]) par_case_destroy(c), c = NULL;
            count++;
            if (fn(user, name, c, why)) stop = 1;
        }
        free(ents[i]);
    }
    free(ents);
    return count;
}
