/*
 * probe.c - the worker's side of the jobs without a graph, each in a sandboxed child forked from the caller: the
 * probe (the backend started once: its declarations, recorded in the instance) and a micro-benchmark
 * (PAR_PROC_MICROBENCH). The child's side is exec/child.c; everything it answers is checked here before use.
 */
#include "xsup.h"

#include "core/requant.h"

#include <math.h>
#include <string.h>

static void sup_init(par_xsup *s, const par_backend_inst *inst, double timeout_s)
{
    memset(s, 0, sizeof *s);
    s->pidfd = s->sock = s->outfd = s->thread_sock = -1;
    s->srv_fd = s->blob_fd = s->out_fd = s->in_fd = -1;
    s->inst = inst;
    s->isolated = 1;
    s->timeout_s = timeout_s;
    s->v = PAR_V_PASS;
}


void par_exec_probe(par_backend_inst *inst, double timeout_s)
{
    if (!inst) return;
    inst->usable = 0;
    inst->probed = 0;
    inst->knob_error = 0;
    inst->describe[0] = '\0';
    inst->requant = PAR_REQUANT_FP32;
    inst->requant_exact = 0;
    inst->arith_flags = 0;
    if (!inst->be) {
        par_xfmt(inst->unusable_reason, sizeof inst->unusable_reason, "backend '%s' is not resolved", inst->label);
        return;
    }
    inst->arith = (unsigned)inst->be->arith < PAR_ARITH_N_KINDS ? (int32_t)inst->be->arith : PAR_ARITH_F32;
    par_xsup s;
    sup_init(&s, inst, timeout_s);
    par_xjob xj = {.inst = inst};
    par_xmsg m;
    int got_probe = 0;
    if (par_xstart(&s, &xj) == 0) {
        while (par_xawait(&s, &m)) {
            if (m.type == XM_PROBE && !got_probe) {
                got_probe = 1;
                par_text_clean(inst->describe, sizeof inst->describe, m.text, sizeof m.text, 1);
                if (m.requant < 0 || m.requant >= PAR_REQUANT_N_SCHEMES)
                    par_xdecide(&s, PAR_V_ERROR, "declares unknown requantization scheme %d", (int)m.requant);
                inst->requant = m.requant;
                inst->requant_exact = m.requant_exact != 0;
                /* A flag this harness does not know would change the budgets in a way it cannot honour. */
                if (m.arith_flags & ~PAR_ARITH_FLAGS_KNOWN)
                    par_xdecide(&s, PAR_V_ERROR, "backend '%s' declares unknown arithmetic flags 0x%x (known: 0x%x)",
                                inst->be->name, (unsigned)(m.arith_flags & ~PAR_ARITH_FLAGS_KNOWN),
                                (unsigned)PAR_ARITH_FLAGS_KNOWN);
                inst->arith_flags = m.arith_flags & PAR_ARITH_FLAGS_KNOWN;
                /* PAR_PROC_ARITH (or the table's, checked at load): the arithmetic of this context, after knobs */
                if (m.arith < (int32_t)PAR_ARITH_F32 || m.arith >= (int32_t)PAR_ARITH_N_KINDS)
                    par_xdecide(&s, PAR_V_ERROR, "backend '%s' declares unknown arithmetic %d (%s; known: 0 f32, "
                                "1 f16_storage, 2 f16, 3 bf16, 4 bf16_storage)", inst->be->name, (int)m.arith, PAR_PROC_ARITH);
                else
                    inst->arith = m.arith;
            } else if (m.type == XM_END) {
                if (m.phase != PH_DONE) {
                    par_xdecide_end(&s, &m);
                    if (m.phase == PH_KNOBS) inst->knob_error = 1;
                } else if (!got_probe) {
                    par_xdecide(&s, PAR_V_CRASH, "the backend child ended without the probe's answers");
                }
                break;
            } else {
                par_xdecide(&s, PAR_V_CRASH, "the backend child sent an unexpected report (type %d)", (int)m.type);
                break;
            }
        }
    }
    par_xfinish(&s);
    inst->probed = 1;
    if (s.decided) {
        par_xfmt(inst->unusable_reason, sizeof inst->unusable_reason, "%s", s.reason);
        return;
    }
    inst->usable = 1;
    inst->unusable_reason[0] = '\0';
}

par_status par_exec_micro(const par_backend_inst *inst, const char *name, double timeout_s, double *value, char *unit,
                          size_t unit_len, par_msg *msg)
{
    *value = NAN;
    if (unit_len) unit[0] = '\0';
    if (!inst || !inst->be) return par_msgf(msg, PAR_ERROR, "backend '%s' is not resolved", inst ? inst->label : "?");
    par_xsup s;
    sup_init(&s, inst, timeout_s);
    par_xjob xj = {.inst = inst, .micro = name};
    par_xmsg m;
    par_status st = PAR_ERROR;
    int got = 0;
    if (par_xstart(&s, &xj) == 0) {
        while (par_xawait(&s, &m)) {
            if (m.type == XM_MICRO && !got) {
                got = 1;
                char t[PAR_MSG_LEN];
                par_xmsg_text(&m, t, sizeof t);
                if (m.status == PAR_OK && isfinite(m.ms)) {
                    st = PAR_OK;
                    *value = m.ms;
                    snprintf(unit, unit_len, "%s", t);
                } else if (m.status == PAR_OK) {
                    par_xdecide(&s, PAR_V_ERROR, "micro-benchmark '%s' gave %g, not a value", name, m.ms);
                } else if (m.status == PAR_UNSUPPORTED || m.status == PAR_ERROR) {
                    st = (par_status)m.status;
                    par_msgf(msg, st, "%s", t);
                } else {
                    par_xdecide(&s, PAR_V_ERROR, "micro-benchmark '%s' returned invalid status %d", name, (int)m.status);
                }
            } else if (m.type == XM_END) {
                if (m.phase != PH_DONE) par_xdecide_end(&s, &m);
                else if (!got) par_xdecide(&s, PAR_V_CRASH, "the backend child ended without the benchmark's answer");
                break;
            } else {
                par_xdecide(&s, PAR_V_CRASH, "the backend child sent an unexpected report (type %d)", (int)m.type);
                break;
            }
        }
    }
    par_xfinish(&s);
    if (s.decided) {
        *value = NAN;
        if (unit_len) unit[0] = '\0';
        return par_msgf(msg, s.v == PAR_V_UNSUPPORTED ? PAR_UNSUPPORTED : PAR_ERROR, "%s", s.reason);
    }
    return st;
}
