/*
 * nn_lib.c - finds and opens libneuralnetworks.so with dlopen and fills the nn_lib table with dlsym, as an Android
 * application (or PyTorch's NNAPI runtime) does. The search order is the knob, the environment, the build tree
 * beside the executable, then the loader's own path; a missing library is "not usable here" (PAR_UNSUPPORTED), with
 * every place tried.
 *
 * It must not call any NNAPI function (it only looks them up).
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nn_lib.h"

#define SONAME "libneuralnetworks.so"

static par_status bind_all(nn_lib *lib, par_msg *msg)
{
#define NN_REQ(ret, name, args)                                                                                      \
    *(void **)&lib->name = dlsym(lib->handle, "ANeuralNetworks" #name);                                             \
    if (!lib->name)                                                                                                  \
        return par_msgf(msg, PAR_ERROR, "%s lacks ANeuralNetworks%s", lib->path, #name);
#define NN_OPT(ret, name, args) *(void **)&lib->name = dlsym(lib->handle, "ANeuralNetworks" #name);
    NN_LIB_FUNCS(NN_REQ, NN_OPT)
#undef NN_REQ
#undef NN_OPT
    *(void **)&lib->sim_partition = dlsym(lib->handle, "parity_nnapi_sim_partition");
    *(void **)&lib->sim_last_error = dlsym(lib->handle, "parity_nnapi_sim_last_error");
    return PAR_OK;
}

/* The simulated library beside the executable: lib/ in the build folder (/x/build/parity ->
 * /x/build/lib/libneuralnetworks.so), else the private folder `make install` puts it in (PREFIX/bin/parity ->
 * PREFIX/lib/parity/libneuralnetworks.so, never PREFIX/lib, where it would shadow a real NNAPI library). */
static int beside_exe(char *out, size_t len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 0;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash) return 0;
    *slash = 0;
    int k = snprintf(out, len, "%s/lib/" SONAME, exe);
    if (k > 0 && (size_t)k < len && access(out, F_OK) == 0) return 1;
    k = snprintf(out, len, "%s/../lib/parity/" SONAME, exe);
    if (k > 0 && (size_t)k < len && access(out, F_OK) == 0) return 1;
    k = snprintf(out, len, "%s/lib/" SONAME, exe); /* named in the message when absent */
    return k > 0 && (size_t)k < len;
}

static int try_open(nn_lib *lib, const char *path, char *tried, size_t tried_len, const char *what)
{
    lib->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib->handle) {
        snprintf(lib->path, sizeof lib->path, "%s", path);
        return 1;
    }
    size_t used = strlen(tried);
    snprintf(tried + used, tried_len - used, "%s%s%s", used ? ", " : "", what, path);
    return 0;
}

par_status par_nn_lib_open(nn_lib *lib, const char *path, par_msg *msg)
{
    memset(lib, 0, sizeof *lib);
    char tried[400] = "";
    const char *env = getenv("PARITY_NNAPI_LIB");
    char exe_path[PATH_MAX];
    int found = 0;
    if (path && *path) found = try_open(lib, path, tried, sizeof tried, "lib=");
    else if (env && *env) found = try_open(lib, env, tried, sizeof tried, "PARITY_NNAPI_LIB=");
    else {
        if (beside_exe(exe_path, sizeof exe_path) && access(exe_path, F_OK) == 0)
            found = try_open(lib, exe_path, tried, sizeof tried, "beside the executable ");
        else if (beside_exe(exe_path, sizeof exe_path))
            snprintf(tried, sizeof tried, "beside the executable %s (absent)", exe_path);
        if (!found) found = try_open(lib, SONAME, tried, sizeof tried, "the loader's path: ");
    }
    if (!found) return par_msgf(msg, PAR_UNSUPPORTED, "no NNAPI library: tried %s", tried);
    par_status st = bind_all(lib, msg);
    if (st != PAR_OK) par_nn_lib_close(lib);
    return st;
}

void par_nn_lib_close(nn_lib *lib)
{
    if (lib && lib->handle) dlclose(lib->handle);
    if (lib) memset(lib, 0, sizeof *lib);
}

const char *par_nn_result_name(int code)
{
    static const char *const names[] = {"NO_ERROR", "OUT_OF_MEMORY", "INCOMPLETE", "UNEXPECTED_NULL", "BAD_DATA",
                                        "OP_FAILED", "BAD_STATE", "UNMAPPABLE", "OUTPUT_INSUFFICIENT_SIZE",
                                        "UNAVAILABLE_DEVICE"};
    return code >= 0 && (size_t)code < sizeof names / sizeof names[0] ? names[code] : "UNKNOWN_RESULT";
}
