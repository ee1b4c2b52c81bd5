/*
 * merge.c - shard reports of one run into one report (merge.h). Reads par_reports (from the reader) and builds a
 * new one: no file is read or written here, nothing is judged again.
 */
#include "merge.h"

#include <stdlib.h>
#include <string.h>

struct par_report_merged {
    par_report r;
    par_report_case *cases;
    par_result *results;
    par_node_strip *strips;  /* NULL when no shard has one; each entry's nodes borrowed from its shard report */
    par_report_shard *shards;
};

static int same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

static const char *or_none(const char *s)
{
    return s ? s : "(none)";
}

/* Is b's selection a's (the shard aside)? why says what differs. */
static int same_selection(const par_report_selection *a, const par_report_selection *b, char *why, size_t len)
{
    if (!same_str(a->suite, b->suite))
        return snprintf(why, len, "suite %s, not %s", or_none(b->suite), or_none(a->suite)), 0;
    if (!same_str(a->case_id, b->case_id))
        return snprintf(why, len, "--case %s, not %s", or_none(b->case_id), or_none(a->case_id)), 0;
    if (!same_str(a->ops, b->ops)) return snprintf(why, len, "-o %s, not %s", or_none(b->ops), or_none(a->ops)), 0;
    if (!same_str(a->filter, b->filter))
        return snprintf(why, len, "-k %s, not %s", or_none(b->filter), or_none(a->filter)), 0;
    if (a->n_paths != b->n_paths) return snprintf(why, len, "%d case paths, not %d", b->n_paths, a->n_paths), 0;
    for (int32_t i = 0; i < a->n_paths; i++)
        if (!same_str(a->paths[i], b->paths[i]))
            return snprintf(why, len, "case path %s, not %s", b->paths[i], a->paths[i]), 0;
    return 1;
}


/* The merged order: (input, case) pairs sorted by the case's index. */
typedef struct slot {
    int64_t index;
    int32_t in, c;
} slot;

static int cmp_slot(const void *pa, const void *pb)
{
    const slot *a = pa, *b = pb;
    return (a->index > b->index) - (a->index < b->index);
}

par_status par_report_merge(const par_report *const *in, const char *const *paths, int32_t n,
                            par_report_merged **out, par_msg *msg)
{
    *out = NULL;
    if (n < 1) return par_msgf(msg, PAR_ERROR, "merge: no report given");
    const par_report *a = in[0];
    char why[512];
    int32_t shard_n = a->sel.shard_n;
    int64_t total = 0;
    for (int32_t i = 0; i < n; i++) {
        const par_report *b = in[i];
        if (b->campaign) return par_msgf(msg, PAR_ERROR, "%s: a fuzzing campaign's report; merge merges runs (parity fuzz "
                                                         "--merge merges campaigns' findings)", paths[i]);
        if (n > 1 && b->sel.shard_n == 0)
            return par_msgf(msg, PAR_ERROR, "%s: not a shard report (config.shard is null): merge the reports of "
                                            "'parity run --shard K/N'", paths[i]);
        if (b->sel.shard_n != shard_n)
            return par_msgf(msg, PAR_ERROR, "%s: shard %d/%d, but %s is a shard of %d", paths[i], b->sel.shard_k,
                            b->sel.shard_n, paths[0], shard_n);
        if (!same_selection(&a->sel, &b->sel, why, sizeof why))
            return par_msgf(msg, PAR_ERROR, "%s: another selection than %s: %s", paths[i], paths[0], why);
        if (b->seed != a->seed)
            return par_msgf(msg, PAR_ERROR, "%s: seed %llu, but %s has seed %llu", paths[i],
                            (unsigned long long)b->seed, paths[0], (unsigned long long)a->seed);
        if (b->n_backends != a->n_backends)
            return par_msgf(msg, PAR_ERROR, "%s: %d backends, but %s has %d", paths[i], b->n_backends, paths[0],
                            a->n_backends);
        for (int32_t k = 0; k < a->n_backends; k++)
            if (strcmp(a->backends[k].label, b->backends[k].label))
                return par_msgf(msg, PAR_ERROR, "%s: backend %d is %s, but %s's is %s", paths[i], k + 1,
                                b->backends[k].label, paths[0], a->backends[k].label);
        for (int32_t j = 0; j < i; j++)
            if (in[j]->sel.shard_k == b->sel.shard_k)
                return par_msgf(msg, PAR_ERROR, "%s: shard %d/%d again (%s is that shard too)", paths[i],
                                b->sel.shard_k, shard_n, paths[j]);
        total += b->n_cases;
    }
    if (n > 1)
        for (int32_t k = 1; k <= shard_n; k++) {
            int found = 0;
            for (int32_t i = 0; i < n; i++) found |= in[i]->sel.shard_k == k;
            if (!found) return par_msgf(msg, PAR_ERROR, "merge: shard %d/%d is missing (given: %d of %d)", k, shard_n,
                                        n, shard_n);
        }
    if (total > INT32_MAX / 2) return par_msgf(msg, PAR_ERROR, "merge: %lld cases, too many", (long long)total);

    par_report_merged *m = calloc(1, sizeof *m);
    slot *order = malloc(sizeof *order * (size_t)(total ? total : 1));
    const size_t nb = (size_t)a->n_backends;
    if (m) {
        m->cases = calloc((size_t)(total ? total : 1), sizeof *m->cases);
        m->results = calloc((size_t)(total ? total : 1) * (nb ? nb : 1), sizeof *m->results);
        m->shards = calloc((size_t)n, sizeof *m->shards);
        int any = 0;
        for (int32_t i = 0; i < n; i++) any |= in[i]->strips != NULL;
        if (any && !(m->strips = calloc((size_t)(total ? total : 1) * (nb ? nb : 1), sizeof *m->strips))) {
            free(order);
            par_report_merged_free(m);
            return par_msgf(msg, PAR_ERROR, "merge: out of memory");
        }
    }
    if (!m || !order || !m->cases || !m->results || !m->shards) {
        free(order);
        par_report_merged_free(m);
        return par_msgf(msg, PAR_ERROR, "merge: out of memory");
    }
    int64_t k = 0;
    for (int32_t i = 0; i < n; i++)
        for (int32_t c = 0; c < in[i]->n_cases; c++) order[k++] = (slot){in[i]->cases[c].index, i, c};
    qsort(order, (size_t)total, sizeof *order, cmp_slot);
    for (int64_t j = 0; j < total; j++) {
        const slot *s = &order[j];
        if (j > 0 && order[j - 1].index == s->index) {
            const slot *p = &order[j - 1];
            par_msgf(msg, PAR_ERROR, "%s and %s both hold case %lld of the selection (%s): not shards of one run",
                     paths[p->in], paths[s->in], (long long)s->index, in[s->in]->cases[s->c].id);
            free(order);
            par_report_merged_free(m);
            return PAR_ERROR;
        }
        m->cases[j] = in[s->in]->cases[s->c];
        if (nb)
            memcpy(&m->results[(size_t)j * nb], &in[s->in]->results[(size_t)s->c * nb], nb * sizeof *m->results);
        if (nb && in[s->in]->strips)
            memcpy(&m->strips[(size_t)j * nb], &in[s->in]->strips[(size_t)s->c * nb], nb * sizeof *m->strips);
    }
    free(order);

    par_report *r = &m->r;
    *r = *a;
    r->created = NULL;
    r->n_cases = (int32_t)total;
    r->cases = m->cases;
    r->results = m->results;
    r->strips = m->strips;
    if (n > 1) r->sel.shard_k = r->sel.shard_n = 0; /* every shard is here: the merged report is the whole run */
    r->wall_s = 0;
    r->interrupted = 0;
    for (int32_t i = 0; i < n; i++) {
        const par_report *b = in[i];
        if (b->wall_s > r->wall_s) r->wall_s = b->wall_s; /* shards run side by side */
        r->interrupted |= b->interrupted;
        par_report_shard *sh = &m->shards[i];
        sh->k = b->sel.shard_k;
        sh->n = b->sel.shard_n;
        sh->path = paths[i];
        sh->created = b->created;
        sh->command_line = b->command_line;
        sh->git_revision = b->git_revision;
        sh->wall_s = b->wall_s;
        sh->n_cases = b->n_cases;
        if (b->env) sh->env = *b->env;
    }
    if (n > 1) {
        r->n_shards = n;
        r->shards = m->shards;
    }
    *out = m;
    return PAR_OK;
}

par_report *par_report_merged_report(par_report_merged *m)
{
    return m ? &m->r : NULL;
}

void par_report_merged_free(par_report_merged *m)
{
    if (!m) return;
    free(m->cases);
    free(m->results);
    free(m->strips);
    free(m->shards);
    free(m);
}
