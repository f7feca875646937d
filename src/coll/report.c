/* Which algorithm each collective call ran, counted per call class, for RMPI_REPORT: the
 * selection table decides from values every member sees alike, so this is the one place
 * a user or a test can see that a communicator spanning sites got the site-aware
 * algorithm where the table says so (seed infiniband-wan 3.4) and the node-aware one
 * where RMPI_COLL_SITE_RUNS_MIN keeps it. One note per schedule built (blocking call, I*
 * call, persistent *_init) or per blocking call run in shared memory. */
#include "coll_impl.h"

#include "../core/core.h"
#include "../rt/rt.h"

#include <stdio.h>
#include <string.h>

#define NOTE_ALGS 8 /* per call class: more choices than any knob offers */

typedef struct {
    const char *choices; /* "a|b|c" (a knob's choices, or gx_choices); NULL: slot free */
    int idx;             /* field of choices */
    unsigned long long calls;
    size_t min, max; /* bytes per rank (coll_select's, or the block) */
} note_t;

static note_t notes[COLL_NCALLS][NOTE_ALGS];

static const char *const call_names[COLL_NCALLS] = {[COLL_BARRIER] = "barrier",
                                                    [COLL_BCAST] = "bcast",
                                                    [COLL_REDUCE] = "reduce",
                                                    [COLL_ALLREDUCE] = "allreduce",
                                                    [COLL_REDUCE_SCATTER] = "reduce_scatter",
                                                    [COLL_SCAN] = "scan",
                                                    [COLL_CALL_GATHER] = "gather",
                                                    [COLL_CALL_SCATTER] = "scatter",
                                                    [COLL_CALL_ALLGATHER] = "allgather",
                                                    [COLL_CALL_ALLGATHERV] = "allgatherv",
                                                    [COLL_CALL_ALLTOALL] = "alltoall",
                                                    [COLL_CALL_ALLTOALLV] = "alltoallv"};

int coll_note_muted;

void coll_note(int call, const char *choices, int idx, size_t bytes)
{
    if (coll_note_muted)
        return;
    note_t *n = notes[call];
    for (int i = 0; i < NOTE_ALGS; i++, n++) {
        if (!n->choices)
            *n = (note_t){choices, idx, 0, bytes, bytes};
        else if (n->choices != choices || n->idx != idx)
            continue;
        n->calls++;
        n->min = RMPI_MIN(n->min, bytes);
        n->max = RMPI_MAX(n->max, bytes);
        return;
    }
}

/* The choices of the knob RMPI_<name> ("auto|binomial|..."), found once per kind. */
const char *coll_knob_choices(const char *name)
{
    for (size_t i = 0; i < rmpi_knobs_count(); i++)
        if (!strcmp(rmpi_knob_at(i)->name, name))
            return rmpi_knob_at(i)->choices;
    return "?";
}

static void put_choice(FILE *f, const char *choices, int idx)
{
    const char *p = choices;
    for (int i = 0; i < idx && p; i++)
        if ((p = strchr(p, '|')))
            p++;
    if (!p) {
        fprintf(f, "%d", idx);
        return;
    }
    const char *e = strchr(p, '|');
    fprintf(f, "%.*s", (int)(e ? e - p : (ptrdiff_t)strlen(p)), p);
}

/* RMPI_REPORT=json's "collectives" key: per call class the same notes as the lines below,
 * {"alg", "calls", "min", "max"} each, in the order first seen. */
void rmpi_coll_report_json(FILE *f)
{
    fputs(", \"collectives\": {", f);
    for (int k = 0, sep = 0; k < COLL_NCALLS; k++) {
        if (!notes[k][0].choices)
            continue;
        fprintf(f, "%s\"%s\": [", sep++ ? ", " : "", call_names[k]);
        for (int i = 0; i < NOTE_ALGS && notes[k][i].choices; i++) {
            const note_t *n = &notes[k][i];
            fputs(i ? ", {\"alg\": \"" : "{\"alg\": \"", f);
            put_choice(f, n->choices, n->idx);
            fprintf(f, "\", \"calls\": %llu, \"min\": %zu, \"max\": %zu}", n->calls, n->min, n->max);
        }
        fputc(']', f);
    }
    fputc('}', f);
    coll_state_stats_t st;
    coll_shm_state_stats(&st);
    if (st.probes)
        fprintf(f,
                ", \"coll_state\": {\"probes\": %llu, \"slow\": %llu, \"rt_last_ns\": %llu, \"rt_min_ns\": %llu, "
                "\"rt_max_ns\": %llu, \"two_cma\": %llu, \"two_trials\": %llu, \"two_seg_ns_kib\": %.1f, "
                "\"two_cma_ns_kib\": %.1f}",
                st.probes, st.slow, st.last, st.min, st.max, st.two_cma, st.two_trials, st.two_seg_ns, st.two_cma_ns);
    coll_over_stats_t ov;
    coll_shm_over_stats(&ov);
    if (ov.windows || ov.picks)
        fprintf(f,
                ", \"coll_over_state\": {\"windows\": %llu, \"slow\": %llu, \"to_slow\": %llu, \"trials\": %llu, "
                "\"yields_mib_last\": %.1f, \"yields_mib_min\": %.1f, \"yields_mib_max\": %.1f, \"us_mib_last\": %.1f}",
                ov.windows, ov.slow, ov.picks - ov.trials, ov.trials, ov.last, ov.min, ov.max, ov.us_mib);
}

void rmpi_coll_report(FILE *f)
{
    for (int k = 0; k < COLL_NCALLS; k++) {
        if (!notes[k][0].choices)
            continue;
        fprintf(f, "[rmpi report] rank %d: collective %s:", rmpi_core_rank, call_names[k]);
        for (int i = 0; i < NOTE_ALGS && notes[k][i].choices; i++) {
            const note_t *n = &notes[k][i];
            fputs(i ? ", " : " ", f);
            put_choice(f, n->choices, n->idx);
            if (n->min == n->max)
                fprintf(f, " x%llu (%zu B)", n->calls, n->min);
            else
                fprintf(f, " x%llu (%zu-%zu B)", n->calls, n->min, n->max);
        }
        fputc('\n', f);
    }
    /* the 2-rank state (shm.c): what the segment-or-single-copy thresholds followed */
    coll_state_stats_t st;
    coll_shm_state_stats(&st);
    if (st.probes)
        fprintf(f,
                "[rmpi report] rank %d: collective state: %llu probes, %llu slow; line round trip %llu ns last, "
                "%llu-%llu ns; 2-rank segment or single copy: %llu chose single copy, %llu trials, last compared "
                "%.1f against %.1f ns per KiB\n",
                rmpi_core_rank, st.probes, st.slow, st.last, st.min, st.max, st.two_cma, st.two_trials, st.two_seg_ns,
                st.two_cma_ns);
    /* the oversubscribed Reduce's state (shm.c, rank 0's windows) */
    coll_over_stats_t ov;
    coll_shm_over_stats(&ov);
    if (ov.windows || ov.picks)
        fprintf(f,
                "[rmpi report] rank %d: collective oversubscribed state: %llu windows, %llu slow; %llu to slow, "
                "%llu trials; yields per MiB %.1f last, %.1f-%.1f; segment %.1f us per MiB last\n",
                rmpi_core_rank, ov.windows, ov.slow, ov.picks - ov.trials, ov.trials, ov.last, ov.min, ov.max,
                ov.us_mib);
}
