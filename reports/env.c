/*
 * env.c - collects the environment a run happened on, for the report: CPU model, the SIMD features that decide
 * which kernels a backend runs (from /proc/cpuinfo; on aarch64 from the kernel's HWCAP bits, which are also right
 * under an emulator such as qemu-user, whose /proc/cpuinfo is the host's), core count, OS (uname), the architecture
 * parity was built for, the compiler that built parity, and the json-c version. Everything is best effort: a
 * missing source gives "unknown", never an error.
 *
 * It must not run anything (no external commands) and must not depend on the backends.
 */
#include "report.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

/* The features reported when present: x86 (Linux flag names), then Arm (Linux "Features" names). */
static const char *const wanted[] = {
    "sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512dq", "avx512bw", "avx512vl", "avx512_vnni",
    "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_int8", "neon", "asimd", "asimdhp", "asimddp", "asimdfhm", "i8mm",
    "bf16", "sve", "sve2", "fphp",
};

static void copy_trim(char *dst, size_t len, const char *src)
{
    while (*src == ' ' || *src == '\t') src++;
    size_t n = strcspn(src, "\n");
    while (n > 0 && (src[n - 1] == ' ' || src[n - 1] == '\t' || src[n - 1] == '\r')) n--;
    if (n >= len) n = len - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* Is word a whole word of the space-separated list? */
static int has_word(const char *list, const char *word)
{
    size_t wl = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += wl) {
        int start = p == list || p[-1] == ' ' || p[-1] == '\t';
        int end = p[wl] == '\0' || p[wl] == ' ' || p[wl] == '\n' || p[wl] == '\t';
        if (start && end) return 1;
    }
    return 0;
}

#if defined(__aarch64__) && defined(__linux__)
/* The Arm features of `wanted` as Linux names them in "Features", from AT_HWCAP / AT_HWCAP2 (what the CPU running
 * this process has; /proc/cpuinfo may describe another machine's CPU under an emulator). */
static void hwcap_features(char *flags, size_t len)
{
    static const struct {
        int two;
        unsigned long bit;
        const char *name;
    } map[] = {
        {0, HWCAP_ASIMD, "asimd"},       {0, HWCAP_ASIMDHP, "asimdhp"}, {0, HWCAP_ASIMDDP, "asimddp"},
        {0, HWCAP_ASIMDFHM, "asimdfhm"}, {1, HWCAP2_I8MM, "i8mm"},      {1, HWCAP2_BF16, "bf16"},
        {0, HWCAP_SVE, "sve"},           {1, HWCAP2_SVE2, "sve2"},      {0, HWCAP_FPHP, "fphp"},
    };
    const unsigned long h1 = getauxval(AT_HWCAP), h2 = getauxval(AT_HWCAP2);
    size_t o = 0;
    flags[0] = '\0';
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        if (!((map[i].two ? h2 : h1) & map[i].bit)) continue;
        int n = snprintf(flags + o, len - o, "%s%s", o ? " " : "", map[i].name);
        if (n < 0 || (size_t)n >= len - o) break;
        o += (size_t)n;
    }
}
#endif

static void read_cpuinfo(par_env *e)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[8192], flags[8192] = "", part[64] = "";
    int arm_keys = 0; /* the file describes an Arm CPU ("CPU part"), not an emulator's host */
    while (fgets(line, sizeof line, f)) {
        const char *colon = strchr(line, ':');
        if (!colon) continue;
        size_t key = (size_t)(colon - line);
        while (key > 0 && (line[key - 1] == ' ' || line[key - 1] == '\t')) key--;
#define KEY_IS(k) (key == strlen(k) && strncmp(line, k, key) == 0)
        if (KEY_IS("model name") && strcmp(e->cpu_model, "unknown") == 0)
            copy_trim(e->cpu_model, sizeof e->cpu_model, colon + 1);
        else if ((KEY_IS("flags") || KEY_IS("Features")) && !flags[0])
            copy_trim(flags, sizeof flags, colon + 1);
        else if (KEY_IS("CPU part") && !part[0])
            copy_trim(part, sizeof part, colon + 1), arm_keys = 1;
        else if (KEY_IS("Hardware") && strcmp(e->cpu_model, "unknown") == 0)
            copy_trim(e->cpu_model, sizeof e->cpu_model, colon + 1);
#undef KEY_IS
    }
    fclose(f);
#if defined(__aarch64__) && defined(__linux__)
    hwcap_features(flags, sizeof flags);
    if (!arm_keys) snprintf(e->cpu_model, sizeof e->cpu_model, "unknown"); /* the host's, under an emulator */
#else
    (void)arm_keys;
#endif
    if (strcmp(e->cpu_model, "unknown") == 0 && part[0])
        snprintf(e->cpu_model, sizeof e->cpu_model, "Arm CPU part %s", part);
    size_t o = 0;
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++) {
        if (!has_word(flags, wanted[i])) continue;
        size_t wl = strlen(wanted[i]);
        if (o + wl + 2 > sizeof e->cpu_features) break;
        if (o) e->cpu_features[o++] = ' ';
        memcpy(e->cpu_features + o, wanted[i], wl + 1);
        o += wl;
    }
}

void par_env_collect(par_env *e)
{
    if (!e) return;
    memset(e, 0, sizeof *e);
    snprintf(e->cpu_model, sizeof e->cpu_model, "unknown");
    read_cpuinfo(e);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    e->cores = n > 0 ? (int32_t)n : 0;
    if (gethostname(e->hostname, sizeof e->hostname) != 0) e->hostname[0] = '\0';
    e->hostname[sizeof e->hostname - 1] = '\0';
    struct utsname u;
    if (uname(&u) == 0) {
        copy_trim(e->os_name, sizeof e->os_name, u.sysname);
        copy_trim(e->os_release, sizeof e->os_release, u.release);
        copy_trim(e->os_version, sizeof e->os_version, u.version);
        copy_trim(e->machine, sizeof e->machine, u.machine);
    } else {
        snprintf(e->os_name, sizeof e->os_name, "unknown");
    }
#if defined(__clang__)
    snprintf(e->compiler, sizeof e->compiler, "clang %s", __clang_version__);
#elif defined(__GNUC__)
    snprintf(e->compiler, sizeof e->compiler, "gcc %s", __VERSION__);
#elif defined(__VERSION__)
    snprintf(e->compiler, sizeof e->compiler, "%s", __VERSION__);
#else
    snprintf(e->compiler, sizeof e->compiler, "unknown");
#endif
    snprintf(e->json_c, sizeof e->json_c, "%s", json_c_version());
#if defined(__x86_64__)
    snprintf(e->arch, sizeof e->arch, "x86_64");
#elif defined(__aarch64__)
    snprintf(e->arch, sizeof e->arch, "aarch64");
#elif defined(__i386__)
    snprintf(e->arch, sizeof e->arch, "i386");
#elif defined(__arm__)
    snprintf(e->arch, sizeof e->arch, "arm");
#elif defined(__riscv) && __riscv_xlen == 64
    snprintf(e->arch, sizeof e->arch, "riscv64");
#else
    snprintf(e->arch, sizeof e->arch, "unknown");
#endif
}
