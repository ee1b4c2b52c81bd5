/*
 * campaign_reduce.c - the reduction of a new finding, in a child process of the campaign. Why a child: a
 * reduction runs hundreds of candidates for up to --reduce-time seconds, and the campaign must stay interruptible
 * (SIGINT stops it at once, with every finding kept) and must survive a reducer bug; the child is killed when the
 * campaign is interrupted or when it overruns its time. The child talks to the same fork servers as the campaign's
 * worker 0 (the campaign waits meanwhile, so nothing else uses them); after a child was killed the campaign
 * restarts its servers, since the child may have left a server in the middle of a job.
 */
#include "campaign_int.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "findings.h"
#include "oracle/oracle.h"
#include "core/clock.h"

/* The reference values of r's outputs (for repro.c's comparison), or NULL when the reference refuses the case. */
static par_ref_result *reference_of(const par_case *r, const par_backend_inst *inst)
{
    void **inputs = NULL;
    par_msg m = {{0}};
    if (par_case_make_inputs(r, &inputs, &m) != PAR_OK) return NULL;
    par_prec p = par_prec_of_backend(inst);
    par_ref_result *ref = NULL;
    if (par_ref_run(par_graph_desc_of(r->graph), &p, (const void *const *)inputs, &ref, &m) != PAR_OK) ref = NULL;
    par_case_free_inputs(r, inputs);
    return ref;
}

/* The child: reduce, write the files, send the outcome. Never returns. */
static void child_main(const par_case *c, const par_run_config *cfg1, const par_signature *sig, double time_s,
                       const char *folder, int fd)
{
    par_campaign_reduced out;
    memset(&out, 0, sizeof out);
    par_reduce_opts ro = {.time_s = time_s};
    par_msg m = {{0}};
    par_case *r = par_reduce(c, cfg1, sig, &ro, &out.st, &m);
    if (!r) {
        snprintf(out.msg, sizeof out.msg, "%s", m.text[0] ? m.text : "the reducer returned no case");
    } else {
        char path[4400];
        snprintf(path, sizeof path, "%s/reduced.json", folder);
        char *text = par_case_to_json(r, 0);
        par_msg wm = {{0}};
        if (!text) snprintf(out.msg, sizeof out.msg, "%s: cannot serialize the reduced case", path);
        else if (par_write_file_atomic(path, text, &wm) != 0) snprintf(out.msg, sizeof out.msg, "%s", wm.text);
        else out.ok = 1;
        free(text);
        par_ref_result *ref = reference_of(r, &cfg1->backends[0]);
        const par_graph_desc *g = par_graph_desc_of(r->graph);
        const double *vals[64];
        int have = ref && g->n_outputs <= 64;
        for (int32_t k = 0; have && k < g->n_outputs; k++) vals[k] = ref->values[g->outputs[k]].v;
        snprintf(path, sizeof path, "%s/repro.c", folder);
        par_msg rm = {{0}};
        if (par_repro_write_c(r, &cfg1->backends[0], have ? vals : NULL, path, &rm) == PAR_OK) out.repro_ok = 1;
        else snprintf(out.repro_msg, sizeof out.repro_msg, "%s", rm.text[0] ? rm.text : "repro.c not written");
        par_ref_result_destroy(ref);
        par_case_destroy(r);
    }
    const char *p = (const char *)&out;
    size_t n = sizeof out;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        p += w;
        n -= (size_t)w;
    }
    _exit(0);
}

int par_campaign_reduce_child(const par_case *c, const par_run_config *cfg1, const par_signature *sig, double time_s,
                              const char *folder, volatile sig_atomic_t *stop, par_campaign_reduced *out)
{
    memset(out, 0, sizeof *out);
    int p[2];
    if (pipe(p) != 0) return -1;
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        close(p[0]);
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* it dies with the campaign */
        if (getppid() != parent) _exit(3);
        child_main(c, cfg1, sig, time_s, folder, p[1]);
    }
    close(p[1]);
    /* the reducer keeps to its budget; the margin covers its last candidate (a case may run to its timeout) */
    double deadline = par_now_s() + time_s + 2.0 * (cfg1->exec.timeout_s > 0 ? cfg1->exec.timeout_s : 60.0) + 10.0;
    size_t got = 0;
    char *dst = (char *)out;
    while (got < sizeof *out) {
        if (*stop || par_now_s() > deadline) {
            kill(pid, SIGKILL);
            out->killed = 1;
            break;
        }
        struct pollfd pf = {.fd = p[0], .events = POLLIN};
        int r = poll(&pf, 1, 100);
        if (r < 0 && errno != EINTR) break;
        if (r <= 0) continue;
        ssize_t n = read(p[0], dst + got, sizeof *out - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (size_t)n;
    }
    close(p[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (got < sizeof *out) {
        int killed = out->killed;
        memset(out, 0, sizeof *out);
        out->killed = killed;
        if (killed) snprintf(out->msg, sizeof out->msg, "%s", *stop ? "interrupted" : "the reduction overran its time");
        else
            snprintf(out->msg, sizeof out->msg, "the reduction's process ended without an answer (%s %d)",
                     WIFSIGNALED(st) ? "signal" : "status", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
    }
    out->msg[sizeof out->msg - 1] = 0;
    out->repro_msg[sizeof out->repro_msg - 1] = 0;
    return 0;
}
