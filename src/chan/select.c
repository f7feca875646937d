/* Channel selection: the statistics table, FIND_MAP and the window driver (seed
 * adaptive-transport-selection, secs. 3.2, 3.4, 4.2 and Table 2). libc only. */
#include "select.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Table 2: the statistics table has 2048 rows up to 2^10 processes. */
#define SIGMA_MAX 2048

static int ceil_log2(long long n)
{
    int k = 0;
    while ((1LL << k) < n)
        k++;
    return k;
}

/* Rejects NaN too. */
static int nonneg(double x) { return x >= 0 && x <= 1e15; }

int rmpi_chan_params_check(const rmpi_chan_params_t *p, char *why, size_t len)
{
    static const char *const name[] = {"r",     "p",     "c",     "rho",     "q",     "w",    "gamma",
                                       "net.r", "net.p", "net.c", "net.rho", "net.q", "net.w"};
    const double v[] = {p->r,     p->p,     p->c,     p->rho,     p->q,     p->w,    p->gamma,
                        p->net.r, p->net.p, p->net.c, p->net.rho, p->net.q, p->net.w};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        if (!nonneg(v[i])) {
            snprintf(why, len, "the cost %s is %g, not a number of nanoseconds from 0 to 1e15.", name[i], v[i]);
            return -1;
        }
    if ((p->c > 0 && !(p->s >= 1 && p->s <= 1e15)) || (p->net.c > 0 && !(p->net.s >= 1 && p->net.s <= 1e15))) {
        snprintf(why, len,
                 "s (receives per credit message) is %g (net: %g); with a credit cost c it must be at least 1.", p->s,
                 p->net.s);
        return -1;
    }
    if (p->h < 0) {
        snprintf(why, len, "h (most dedicated channels) is %d, below 0.", p->h);
        return -1;
    }
    if (p->tau < 1) {
        snprintf(why, len, "tau (most channels set up at once) is %d, below 1.", p->tau);
        return -1;
    }
    if (p->slot_ns == 0 || p->interval_ns < p->slot_ns) {
        snprintf(why, len, "the slot (%llu ns) must be longer than 0 and no longer than the interval (%llu ns).",
                 (unsigned long long)p->slot_ns, (unsigned long long)p->interval_ns);
        return -1;
    }
    if (p->sources < 0 || (p->sources > 0 && p->sources < 2 * (p->h + 1))) {
        snprintf(why, len,
                 "sources (columns of the statistics table) is %d: 0 (the default) or at least 2 (h + 1) = %d, as a "
                 "full table keeps half its columns and every dedicated source keeps its own.",
                 p->sources, 2 * (p->h + 1));
        return -1;
    }
    if (p->skips < 0) {
        snprintf(why, len, "skips (interval runs skipped in a row) is %d, below 0.", p->skips);
        return -1;
    }
    if (p->sigma < 2 || p->sigma > SIGMA_MAX) {
        snprintf(why, len, "sigma (slots kept) is %d, outside 2 .. %d (the seed's Table 2).", p->sigma, SIGMA_MAX);
        return -1;
    }
    return 0;
}

int rmpi_chan_default_h(int nprocs, int node_size)
{
    if (nprocs < 2)
        return 0;
    int h = ceil_log2(nprocs) + 1;
    int node_cap = 128 / (node_size > 0 ? node_size : 1);
    if (node_cap < 2)
        node_cap = 2;
    if (h > node_cap)
        h = node_cap;
    return h < nprocs - 1 ? h : nprocs - 1;
}

int rmpi_chan_default_sigma(int nprocs, uint64_t interval_ns, uint64_t slot_ns)
{
    int t2 = nprocs <= 1024 ? SIGMA_MAX : SIGMA_MAX / ((ceil_log2(nprocs) - 10) * 2);
    uint64_t hist = slot_ns ? 16 * ((interval_ns + slot_ns - 1) / slot_ns) : SIGMA_MAX;
    int sigma = hist < (uint64_t)t2 ? (int)hist : t2;
    return sigma < 2 ? 2 : sigma;
}

/* A full table keeps half its columns: room for the h dedicated sources and 3h contenders
 * (the busiest shared sources, which FIND_MAP compares with the dedicated ones), or 32 if
 * more. Up to 64 peers, and at every size while 8h is at most npeers, that is a column for
 * every peer, as before the bound. */
int rmpi_chan_default_sources(int npeers, int h)
{
    int k = 8 * (h > 0 ? h : 1);
    if (k < 64)
        k = 64;
    return npeers < k ? (npeers > 0 ? npeers : 1) : k;
}

/* ---- FIND_MAP ---- */

/* The costs of a source of class cls (rmpi_chan_src_t.cls), and what one of its receives on
 * a dedicated channel saves, credit messages paid (Appendix A.2). */
static rmpi_chan_cost_t class_cost(const rmpi_chan_params_t *p, int cls)
{
    return cls == 1 ? p->net : (rmpi_chan_cost_t){p->r, p->p, p->c, p->s, p->rho, p->q, p->w};
}

static double msg_value(const rmpi_chan_cost_t *c) { return c->r - (c->c > 0 ? c->c / c->s : 0); }

/* What a stream's message saves beyond r: w - r when w is the larger (throughput), else 0. */
static double stream_extra(const rmpi_chan_cost_t *c) { return c->w > c->r ? c->w - c->r : 0; }

/* What n receives of which b came behind an earlier one save on a dedicated channel, credit
 * messages paid: every one r (latency, the seed's A), the b the larger of r and w. */
static double recv_value(const rmpi_chan_cost_t *c, uint64_t n, uint64_t b)
{
    return (double)n * msg_value(c) + (double)(b < n ? b : n) * stream_extra(c);
}

/* The progress passes that find a ring of a source of n receives empty, in a window of total
 * receives and idle idle polls: a pass is spent waiting for, or finding, some message, so the
 * idle polls go to the receives in proportion (1 + idle / total passes each); those of the
 * other sources' receives poll the ring for nothing, those of its own are the ring at work
 * (a receiver that waits on its one busy ring is not charged for waiting). */
static double empty_passes(uint64_t n, double total, uint64_t idle)
{
    return total > 0 ? (total - (double)n) * (total + (double)idle) / total : 0;
}

typedef struct cand {
    double v; /* what making it dedicated adds, its set-up paid */
    int peer, idx, dedicated;
} cand_t;

/* Larger gain first; ties to the lower rank, so both runs of a test and every process
 * given the same counts agree. */
static int cand_cmp(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    if (x->v != y->v)
        return x->v > y->v ? -1 : 1;
    return (x->peer > y->peer) - (x->peer < y->peer);
}

/* Fig. 6 with two kinds: the seed's loops over l (DC-RDMA or RC-RDMA) and m (RC-RDMA)
 * collapse to one over m, since here a channel is dedicated or shared and nothing sits in
 * between. x(M) = sum over i in M of n_i * (r_i - c_i / s_i) - rho_i [i new] - the polling
 * (max_j n_j) * p_i / 2 (the busiest source waits for half of the rings polled), with each
 * source's costs those of its class (shared memory, or a ring written over the network:
 * each term of Appendix A is per channel, so classes mix by adding). A.1 counts polling
 * only as the busiest source's delay; what the receiver spends polling a ring that is empty
 * is a term of its own here: q_i at every progress pass that finds the ring empty
 * (empty_passes: the passes of the other sources' receives, each with its share of the
 * idle polls). Beside r it is small for a busy ring; but a ring kept from a finished phase
 * gains nothing and pays it at every pass, which A.1's max-n term alone never lets outweigh
 * gamma.
 * The maximum n is over the whole window, not M, so x(M) is a sum of one value per
 * source: the best M is the sources of positive value in decreasing order, skipping new
 * ones once tau are taken and stopping at h (a greedy choice under one cardinality cap per
 * class of a laminar family is optimal). With one class this is the seed's loop over m:
 * every value moves by the same polling terms, so the order and the best prefix are the
 * same. */
int rmpi_chan_find_map(const rmpi_chan_src_t *src, int nsrc, const rmpi_chan_params_t *p, int *up, int *down,
                       rmpi_chan_plan_t *plan)
{
    return rmpi_chan_find_map_idle(src, nsrc, 0, p, up, down, plan);
}

int rmpi_chan_find_map_idle(const rmpi_chan_src_t *src, int nsrc, uint64_t idle, const rmpi_chan_params_t *p, int *up,
                            int *down, rmpi_chan_plan_t *plan)
{
    memset(plan, 0, sizeof *plan);
    cand_t *cand = malloc((size_t)(nsrc > 0 ? nsrc : 1) * sizeof *cand);
    char *chosen = calloc((size_t)(nsrc > 0 ? nsrc : 1), 1);
    int *order = malloc((size_t)(nsrc > 0 ? nsrc : 1) * sizeof *order);
    if (!cand || !chosen || !order) {
        free(cand), free(chosen), free(order);
        return -1;
    }
    const rmpi_chan_cost_t cost[2] = {class_cost(p, 0), class_cost(p, 1)};
    double total = 0, nmax = 0, x_cur = 0;
    int ncur = 0, ncand = 0;
    for (int i = 0; i < nsrc; i++) {
        total += (double)src[i].n;
        if (src[i].peer >= 0 && (double)src[i].n > nmax)
            nmax = (double)src[i].n;
    }
    for (int i = 0; i < nsrc; i++) {
        if (src[i].peer < 0)
            continue; /* receives of sources without a column: in the total only */
        int k = src[i].cls == 1;
        double keep = recv_value(&cost[k], src[i].n, src[i].b) - nmax * cost[k].p / 2 -
                      cost[k].q * empty_passes(src[i].n, total, idle);
        cand[ncand++] = (cand_t){keep - (src[i].dedicated ? 0 : cost[k].rho), src[i].peer, i, src[i].dedicated};
        if (src[i].dedicated) {
            x_cur += keep;
            ncur++;
        }
    }
    if (p->tau >= p->h && p->h < ncand / 2) {
        /* the greedy pass below reads only the first h in order (no new source is skipped
         * before h are taken while tau >= h): a selection of them, h passes over the list,
         * instead of sorting all (a check calls this twice, and h is a few) */
        for (int k = 0; k < p->h; k++) {
            int top = k;
            for (int i = k + 1; i < ncand; i++)
                top = cand_cmp(&cand[i], &cand[top]) < 0 ? i : top;
            cand_t t = cand[k];
            cand[k] = cand[top], cand[top] = t;
        }
    } else {
        qsort(cand, (size_t)ncand, sizeof *cand, cand_cmp);
    }
    double x = 0, best = 0;
    int m = 0, fresh = 0, best_m = 0;
    for (int i = 0; i < ncand && m < p->h; i++) {
        if (!cand[i].dedicated && fresh == p->tau)
            continue;
        x += cand[i].v;
        order[m++] = cand[i].idx;
        fresh += !cand[i].dedicated;
        if (x > best) {
            best = x;
            best_m = m;
        }
    }
    for (int k = 0; k < best_m; k++)
        chosen[order[k]] = 1;
    plan->ndedicated = best_m;
    plan->x_new = best;
    plan->x_cur = x_cur;
    plan->gain = total > 0 ? (best - x_cur) / total : 0;
    for (int i = 0; i < nsrc; i++) {
        if (chosen[i] && !src[i].dedicated)
            up[plan->nup++] = src[i].peer;
        else if (!chosen[i] && src[i].dedicated)
            down[plan->ndown++] = src[i].peer;
    }
    /* A current mapping above h (h was lowered) is brought under it whatever the gain. */
    plan->apply = (plan->gain > p->gamma || ncur > p->h) && plan->nup + plan->ndown > 0;
    if (!plan->apply) {
        plan->nup = plan->ndown = 0;
        plan->ndedicated = ncur;
        plan->x_new = x_cur;
    }
    free(cand), free(chosen), free(order);
    return 0;
}

/* ---- the statistics table ---- */

/* The fewest receives whose window can pass gamma with a set-up in it: all n from one
 * source of class k, a stream (each behind the last), gain n (max(r, w) - c/s) - n p / 2 - rho
 * (Appendix A, one channel polled), which exceeds gamma n from
 * n > rho / (max(r, w) - c/s - p/2 - gamma). Fewer receives can apply no mapping, so a run
 * before them is wasted; at them a source that sent them all is dedicated. The smaller over
 * the classes that have a selectable peer (has[k]: a class without one would bring the first
 * run forward for nothing); UINT64_MAX when none can repay a set-up. */
static uint64_t evidence(const rmpi_chan_params_t *p, const int has[2])
{
    uint64_t least = UINT64_MAX;
    for (int k = 0; k < 2; k++) {
        if (!has[k])
            continue;
        rmpi_chan_cost_t c = class_cost(p, k);
        double per = msg_value(&c) + stream_extra(&c) - c.p / 2 - p->gamma;
        if (per > 0 && c.rho / per < 1e18) {
            uint64_t n = (uint64_t)(c.rho / per) + 1;
            least = n < least ? n : least;
        }
    }
    return least;
}

/* A column: sigma cells, then sigma running counts of receives and sigma of b
 * (RMPI_CHAN_ROW_BYTES a row). The running count of a slot's row is the column's receives (or
 * b) in all its earlier slots, modulo 2^32, so a window's receives are two reads (count_since)
 * instead of a walk of its rows: a run read up to sigma rows of every column, twice, and the
 * ageing once more. */
static rmpi_chan_cell_t *col_alloc(int sigma) { return calloc((size_t)sigma, RMPI_CHAN_ROW_BYTES); }

static uint32_t *run_of(const rmpi_chan_sel_t *s, rmpi_chan_cell_t *c)
{
    return (uint32_t *)(void *)(c + s->prm.sigma);
}

static uint32_t *runb_of(const rmpi_chan_sel_t *s, rmpi_chan_cell_t *c) { return run_of(s, c) + s->prm.sigma; }

/* The first run's count (evidence) over the classes of the selectable peers: the selector is
 * made with every peer of class 0, and told the classes and the fixed peers after. Kept once
 * a run or check has come. */
static void first_trigger(rmpi_chan_sel_t *s)
{
    if (s->runs || s->skipped)
        return;
    int has[2] = {0, 0};
    for (int i = 0; i < s->npeers; i++)
        if (!s->fixed[i])
            has[s->cls[i] == 1] = 1;
    uint64_t ev = evidence(&s->prm, has);
    s->trigger_now = s->prm.trigger && ev < s->prm.trigger ? ev : s->prm.trigger;
}

rmpi_chan_sel_t *rmpi_chan_sel_create(int npeers, const rmpi_chan_params_t *p, uint64_t now_ns)
{
    char why[160];
    if (npeers < 0 || rmpi_chan_params_check(p, why, sizeof why))
        return NULL;
    rmpi_chan_sel_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    size_t n = npeers > 0 ? (size_t)npeers : 1;
    s->col = calloc(n, sizeof *s->col);
    s->cur = calloc(n, sizeof *s->cur);
    s->kind = calloc(n, 1);
    s->fixed = calloc(n, 1);
    s->cls = calloc(n, 1);
    s->seen = calloc(n, sizeof *s->seen);
    s->sink = col_alloc(p->sigma);
    s->spill = col_alloc(p->sigma);
    s->idle_at = calloc((size_t)p->sigma, sizeof *s->idle_at);
    s->maxcols = p->sources > 0 ? p->sources : rmpi_chan_default_sources(npeers, p->h);
    s->active = malloc((size_t)s->maxcols * sizeof *s->active);
    if (!s->col || !s->cur || !s->kind || !s->fixed || !s->cls || !s->seen || !s->sink || !s->spill || !s->idle_at ||
        !s->active) {
        rmpi_chan_sel_destroy(s);
        return NULL;
    }
    s->npeers = npeers;
    s->prm = *p;
    s->t0_ns = s->now_ns = s->last_run_ns = now_ns;
    s->slot_end_ns = now_ns + p->slot_ns;
    s->next_run_ns = now_ns + p->interval_ns;
    s->own_pass = 1; /* seen[] starts at 0: a source's first receive is in no earlier pass */
    s->pass = &s->own_pass;
    /* the first run as soon as the receives can repay a set-up, if that is before the count */
    first_trigger(s);
    return s;
}

void rmpi_chan_sel_destroy(rmpi_chan_sel_t *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->nactive; i++)
        free(s->col[s->active[i]]);
    free(s->col);
    free(s->cur);
    free(s->kind);
    free(s->fixed);
    free(s->cls);
    free(s->seen);
    free(s->sink);
    free(s->spill);
    free(s->idle_at);
    free(s->active);
    free(s);
}

static int peer_ok(const rmpi_chan_sel_t *s, int peer) { return peer >= 0 && peer < s->npeers; }

/* peer's own column (neither a shared sink nor none) */
static int own_col(const rmpi_chan_sel_t *s, int peer)
{
    return s->col[peer] && s->col[peer] != s->sink && s->col[peer] != s->spill;
}

/* Gives back the column at active[i] (the order of the rest is kept). */
static void drop_col(rmpi_chan_sel_t *s, int i)
{
    free(s->col[s->active[i]]);
    s->col[s->active[i]] = NULL;
    s->cur[s->active[i]] = NULL;
    memmove(&s->active[i], &s->active[i + 1], (size_t)(s->nactive - i - 1) * sizeof *s->active);
    s->nactive--;
}

static uint64_t oldest(const rmpi_chan_sel_t *s);
static uint64_t count_since(const rmpi_chan_sel_t *s, rmpi_chan_cell_t *c, uint64_t from);
static void to_spill(rmpi_chan_sel_t *s, rmpi_chan_cell_t *c);
static void add_cell(rmpi_chan_cell_t *c, uint64_t n, uint64_t bytes);

/* A column for peer, which has none (or the spill): a free one, else, when every column is
 * taken, the one of the shared source with the fewest receives in the table, whose counts go
 * to the spill as an eviction's do (it asks again at its next receive). A dedicated peer
 * needs its own column: FIND_MAP would otherwise see it silent and release it, however busy
 * it is. 0, or -1 (out of memory, or every column dedicated: at most h <= sources are). */
static int give_col(rmpi_chan_sel_t *s, int peer)
{
    rmpi_chan_cell_t *c;
    if (s->nactive < s->maxcols) {
        if (!(c = col_alloc(s->prm.sigma)))
            return -1;
    } else {
        int victim = -1;
        uint64_t least = UINT64_MAX;
        for (int i = 0; i < s->nactive; i++) {
            if (s->kind[s->active[i]] == RMPI_CHAN_DEDICATED)
                continue;
            uint64_t n = count_since(s, s->col[s->active[i]], oldest(s));
            if (n < least)
                least = n, victim = i;
        }
        if (victim < 0)
            return -1;
        c = s->col[s->active[victim]];
        to_spill(s, c);
        memset(c, 0, (size_t)s->prm.sigma * RMPI_CHAN_ROW_BYTES);
        s->col[s->active[victim]] = NULL;
        s->cur[s->active[victim]] = NULL;
        memmove(&s->active[victim], &s->active[victim + 1], (size_t)(s->nactive - victim - 1) * sizeof *s->active);
        s->nactive--;
        s->evicted++;
    }
    s->active[s->nactive++] = peer;
    s->col[peer] = c;
    s->cur[peer] = NULL;
    return 0;
}

void rmpi_chan_sel_set(rmpi_chan_sel_t *s, int peer, rmpi_chan_kind_t kind)
{
    if (!peer_ok(s, peer) || s->kind[peer] == kind)
        return;
    if (!s->fixed[peer])
        s->ndedicated += kind == RMPI_CHAN_DEDICATED ? 1 : -1;
    s->kind[peer] = (uint8_t)kind;
    if (kind == RMPI_CHAN_DEDICATED && !s->fixed[peer] && !own_col(s, peer))
        give_col(s, peer); /* on failure it counts into the spill, as any source without a column */
}

void rmpi_chan_sel_fix(rmpi_chan_sel_t *s, int peer, rmpi_chan_kind_t kind)
{
    if (!peer_ok(s, peer))
        return;
    rmpi_chan_sel_set(s, peer, RMPI_CHAN_SHARED);
    s->fixed[peer] = 1;
    s->kind[peer] = (uint8_t)kind;
    if (own_col(s, peer))
        for (int i = 0; i < s->nactive; i++)
            if (s->active[i] == peer) {
                drop_col(s, i);
                break;
            }
    s->col[peer] = s->sink;
    s->cur[peer] = NULL;
    first_trigger(s);
}

void rmpi_chan_sel_class(rmpi_chan_sel_t *s, int peer, int cls)
{
    if (peer_ok(s, peer)) {
        s->cls[peer] = cls == 1;
        first_trigger(s);
    }
}

rmpi_chan_kind_t rmpi_chan_sel_kind(const rmpi_chan_sel_t *s, int peer)
{
    return peer_ok(s, peer) ? (rmpi_chan_kind_t)s->kind[peer] : RMPI_CHAN_SHARED;
}

/* The table moves to now: rows of the slots that began since are cleared (at most every
 * row once), so no window ever sees counts older than sigma slots. */
static void advance(rmpi_chan_sel_t *s, uint64_t now)
{
    if (now > s->now_ns)
        s->now_ns = now;
    if (now < s->slot_end_ns)
        return;
    uint64_t k = (now - s->t0_ns) / s->prm.slot_ns, sigma = (uint64_t)s->prm.sigma;
    uint64_t clear = k - s->slot < sigma ? k - s->slot : sigma;
    for (int i = -2; i < s->nactive; i++) {
        rmpi_chan_cell_t *c = i == -2 ? s->sink : i == -1 ? s->spill : s->col[s->active[i]];
        uint32_t *run = run_of(s, c), base = run[s->row] + c[s->row].n;
        uint32_t *runb = runb_of(s, c), baseb = runb[s->row] + c[s->row].b;
        for (uint64_t j = 1; j <= clear; j++) {
            uint32_t row = (uint32_t)((s->slot + j) % sigma);
            c[row] = (rmpi_chan_cell_t){0, 0, 0};
            run[row] = base;
            runb[row] = baseb;
        }
    }
    for (uint64_t j = 1; j <= clear; j++)
        s->idle_at[(s->slot + j) % sigma] = s->idle_total;
    s->slot = k;
    s->row = (uint32_t)(k % sigma);
    /* each source finds its cell of the new row at its first receive in it */
    memset(s->cur, 0, (size_t)s->npeers * sizeof *s->cur);
    s->slot_end_ns = s->t0_ns + (k + 1) * s->prm.slot_ns;
}

void rmpi_chan_note_slow(rmpi_chan_sel_t *s, int src, size_t bytes, uint64_t now_ns)
{
    advance(s, now_ns);
    if (!peer_ok(s, src))
        return;
    if (!s->col[src] || (s->col[src] == s->spill && s->kind[src] == RMPI_CHAN_DEDICATED)) {
        /* the first receive from src: its column (a peer that stays silent costs none), or
         * the spill column while the table is full (its receives then count in the total
         * only, until an eviction makes room); a dedicated source takes a shared one's */
        if (s->nactive < s->maxcols || s->kind[src] == RMPI_CHAN_DEDICATED) {
            if (give_col(s, src) && s->kind[src] != RMPI_CHAN_DEDICATED)
                return; /* out of memory: this receive is not counted, the next one tries again */
        }
        if (!s->col[src]) {
            s->full = 1;
            s->col[src] = s->spill;
        }
    }
    s->cur[src] = &s->col[src][s->row];
    rmpi_chan_bump_recv(s, src, bytes);
}

void rmpi_chan_sel_note_idle(rmpi_chan_sel_t *s, uint64_t polls, uint64_t now_ns)
{
    advance(s, now_ns);
    s->idle_total += polls;
}

static void sum_rows(const rmpi_chan_sel_t *s, const rmpi_chan_cell_t *c, uint64_t from, uint64_t to, uint64_t *n,
                     uint64_t *bytes)
{
    /* slot k is row k % sigma: one division for the first row, then a running index that
     * wraps at sigma (a window covers at most sigma slots, sec. 4.2) */
    uint64_t sigma = (uint64_t)s->prm.sigma, row = to > from ? from % sigma : 0;
    *n = *bytes = 0;
    for (uint64_t k = from; k < to; k++) {
        *n += c[row].n;
        *bytes += c[row].bytes;
        if (++row == sigma)
            row = 0;
    }
}

/* The oldest slot still in the table. */
static uint64_t oldest(const rmpi_chan_sel_t *s)
{
    uint64_t sigma = (uint64_t)s->prm.sigma;
    return s->slot + 1 > sigma ? s->slot + 1 - sigma : 0;
}

/* Receives in column c from slot `from` (not older than the table) to now: the current
 * row's running count and cell less the running count at `from`. */
static uint64_t count_since(const rmpi_chan_sel_t *s, rmpi_chan_cell_t *c, uint64_t from)
{
    if (from > s->slot)
        return 0;
    const uint32_t *run = run_of(s, c);
    return (uint32_t)(run[s->row] + c[s->row].n - run[from % (uint64_t)s->prm.sigma]);
}

/* The same for b. */
static uint64_t backlog_since(const rmpi_chan_sel_t *s, rmpi_chan_cell_t *c, uint64_t from)
{
    if (from > s->slot)
        return 0;
    const uint32_t *run = runb_of(s, c);
    return (uint32_t)(run[s->row] + c[s->row].b - run[from % (uint64_t)s->prm.sigma]);
}

/* Column c's counts go into the spill (an evicted source's receives stay in the windows'
 * totals), whose running counts are then summed again over the table's slots. The spill's b
 * is not kept: its entry is never dedicated. */
static void to_spill(rmpi_chan_sel_t *s, rmpi_chan_cell_t *c)
{
    uint64_t sigma = (uint64_t)s->prm.sigma;
    if (!count_since(s, c, oldest(s)))
        return; /* silent for the whole table (most evictions): every cell is empty */
    for (uint64_t row = 0; row < sigma; row++)
        add_cell(&s->spill[row], c[row].n, c[row].bytes);
    uint32_t *run = run_of(s, s->spill), acc = run[oldest(s) % sigma];
    for (uint64_t k = oldest(s); k <= s->slot; k++) {
        run[k % sigma] = acc;
        acc += s->spill[k % sigma].n;
    }
}

void rmpi_chan_sel_sum(const rmpi_chan_sel_t *s, int peer, int nslots, uint64_t *n, uint64_t *bytes)
{
    *n = *bytes = 0;
    if (!peer_ok(s, peer) || !own_col(s, peer) || nslots <= 0)
        return;
    uint64_t from = s->slot + 1 > (uint64_t)nslots ? s->slot + 1 - (uint64_t)nslots : 0;
    if (from < oldest(s))
        from = oldest(s);
    sum_rows(s, s->col[peer], from, s->slot + 1, n, bytes);
    *n = count_since(s, s->col[peer], from); /* the windows' count (FIND_MAP's), not the walk's */
}

uint64_t rmpi_chan_sel_backlog(const rmpi_chan_sel_t *s, int peer, int nslots)
{
    if (!peer_ok(s, peer) || !own_col(s, peer) || nslots <= 0)
        return 0;
    uint64_t from = s->slot + 1 > (uint64_t)nslots ? s->slot + 1 - (uint64_t)nslots : 0;
    return backlog_since(s, s->col[peer], from < oldest(s) ? oldest(s) : from);
}

size_t rmpi_chan_sel_bytes(const rmpi_chan_sel_t *s)
{
    size_t per_col = (size_t)s->prm.sigma * RMPI_CHAN_ROW_BYTES;
    return sizeof *s + (size_t)s->npeers * (sizeof *s->col + sizeof *s->seen + 3) +
           (size_t)s->maxcols * sizeof *s->active + (size_t)s->nactive * per_col + 2 * per_col +
           (size_t)s->prm.sigma * sizeof *s->idle_at;
}

/* ---- the driver (sec. 3.4, T1-T4) ---- */

/* The sources of window [from, now's slot]: every selectable peer that sent in it, and every
 * dedicated one (silent ones must be listed to be released); its idle polls in *idle. */
static int window(const rmpi_chan_sel_t *s, uint64_t from, rmpi_chan_src_t *out, uint64_t *idle)
{
    int n = 0;
    if (from < oldest(s))
        from = oldest(s);
    *idle = s->idle_total - s->idle_at[from % (uint64_t)s->prm.sigma];
    for (int i = 0; i < s->nactive; i++) {
        int peer = s->active[i];
        uint64_t cnt = count_since(s, s->col[peer], from);
        if (cnt || s->kind[peer] == RMPI_CHAN_DEDICATED)
            out[n++] = (rmpi_chan_src_t){peer, s->kind[peer] == RMPI_CHAN_DEDICATED, cnt, s->cls[peer],
                                         backlog_since(s, s->col[peer], from)};
    }
    if (s->ndedicated)
        for (int peer = 0; peer < s->npeers; peer++)
            if (!s->fixed[peer] && !own_col(s, peer) && s->kind[peer] == RMPI_CHAN_DEDICATED)
                out[n++] = (rmpi_chan_src_t){peer, 1, 0, s->cls[peer]};
    /* the receives of sources without a column (spilled, or evicted with their counts), so
     * that the gain per message is over every receive, as with a column per source */
    uint64_t cnt = count_since(s, s->spill, from);
    if (cnt)
        out[n++] = (rmpi_chan_src_t){-1, 0, cnt, 0};
    return n;
}

static int apply_plan(rmpi_chan_sel_t *s, const rmpi_chan_plan_t *pl, const int *up, const int *down,
                      rmpi_chan_apply_fn apply, void *ctx)
{
    int done = 0;
    for (int i = 0; i < pl->ndown + pl->nup; i++) {
        int release = i < pl->ndown, peer = release ? down[i] : up[i - pl->ndown];
        rmpi_chan_kind_t k = release ? RMPI_CHAN_SHARED : RMPI_CHAN_DEDICATED;
        if (apply && apply(ctx, peer, k)) {
            s->refused++;
            continue;
        }
        rmpi_chan_sel_set(s, peer, k);
        *(release ? &s->to_shared : &s->to_dedicated) += 1;
        done++;
    }
    return done;
}

/* T1 (no mapping yet: the window since the start) or T2-T4: the extended window
 * [beta, now) against the shrunk one [now - (eps - beta) / 2, now), the larger gain over
 * the current mapping wins if it passes gamma. T1 uses the gamma test too, so a first
 * mapping has to earn its set-ups like any later one. */
static int run(rmpi_chan_sel_t *s, rmpi_chan_apply_fn apply, void *ctx)
{
    size_t cap = (size_t)s->nactive + (size_t)s->ndedicated + 1;
    rmpi_chan_src_t *src = malloc(cap * sizeof *src);
    int *ids = malloc(4 * cap * sizeof *ids);
    if (!src || !ids) {
        free(src), free(ids);
        return 0;
    }
    uint64_t end = s->slot + 1;
    uint64_t from[2] = {s->have_cur ? s->beta : 0, 0};
    int nwin = 1;
    if (s->have_cur) {
        uint64_t half = (s->eps - s->beta + 1) / 2;
        from[1] = end - (half ? half : 1);
        nwin = from[1] != from[0] ? 2 : 1;
    }
    rmpi_chan_plan_t plan[2];
    int best = -1;
    for (int w = 0; w < nwin; w++) {
        uint64_t idle;
        int n = window(s, from[w], src, &idle);
        if (rmpi_chan_find_map_idle(src, n, idle, &s->prm, ids + 2 * w * cap, ids + (2 * w + 1) * cap, &plan[w]))
            plan[w].apply = 0;
        if (w == 0) { /* T2's window: what the check starts from (skip_run) */
            s->ext_n = 0;
            for (int i = 0; i < n; i++)
                s->ext_n += src[i].n;
            s->ext_d = plan[0].gain * (double)s->ext_n;
        }
        if (best < 0 || plan[w].gain > plan[best].gain)
            best = w;
    }
    int done = 0;
    if (plan[best].apply) {
        s->last_gain = plan[best].gain;
        done = apply_plan(s, &plan[best], ids + 2 * best * cap, ids + (2 * best + 1) * cap, apply, ctx);
        s->applied++;
    }
    if (plan[best].apply || !s->have_cur) {
        s->beta = from[best] < oldest(s) ? oldest(s) : from[best];
        s->eps = end;
        s->have_cur = 1;
    }
    free(src), free(ids);
    return done;
}

/* Saturating, as rmpi_chan_count_recv. */
static void add_cell(rmpi_chan_cell_t *c, uint64_t n, uint64_t bytes)
{
    n += c->n, bytes += c->bytes;
    c->n = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
    c->bytes = bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes;
}

typedef struct col_rank {
    uint64_t n;
    double v; /* FIND_MAP's value of dedicating it over the whole table (polling aside) */
    int peer, i;
} col_rank_t;

/* Higher value first (the order in which FIND_MAP would take them); ties keep the lower
 * rank, as FIND_MAP's do. */
static int col_rank_cmp(const void *a, const void *b)
{
    const col_rank_t *x = a, *y = b;
    if (x->v != y->v)
        return x->v > y->v ? -1 : 1;
    return (x->peer > y->peer) - (x->peer < y->peer);
}

/* At the end of a window (after its run), the table ages: the columns of shared sources
 * that sent nothing in the sigma slots kept go back (sec. 4.2's table holds only what a
 * window can read). If a source found the table full since the last eviction, the shared
 * sources FIND_MAP values least over the table (fewest receives, weighed by their class's
 * gain and set-up) lose theirs too, until half the columns are free: busy sources, those
 * FIND_MAP would dedicate, keep their history; the spilled ones
 * get columns at their next receive and compete in the next window. Dedicated sources
 * always keep theirs (a release needs their counts). */
static void evict(rmpi_chan_sel_t *s)
{
    col_rank_t *rk = malloc((size_t)(s->nactive > 0 ? s->nactive : 1) * sizeof *rk);
    if (!rk)
        return;
    int nk = 0, keep = s->maxcols / 2;
    for (int i = 0; i < s->nactive; i++) {
        int peer = s->active[i];
        if (s->kind[peer] == RMPI_CHAN_DEDICATED) {
            keep--;
            continue;
        }
        rk[nk] = (col_rank_t){count_since(s, s->col[peer], oldest(s)), 0, peer, i};
        rmpi_chan_cost_t c = class_cost(&s->prm, s->cls[peer]);
        rk[nk].v = recv_value(&c, rk[nk].n, backlog_since(s, s->col[peer], oldest(s))) - c.rho;
        nk++;
    }
    qsort(rk, (size_t)nk, sizeof *rk, col_rank_cmp);
    /* marks the columns to drop with an impossible peer, then compacts active[] once */
    int dropped = 0;
    for (int j = 0; j < nk; j++)
        if (rk[j].n == 0 || (s->full && j >= keep)) {
            rmpi_chan_cell_t *c = s->col[rk[j].peer];
            to_spill(s, c); /* its counts stay in the windows' totals */
            free(c);
            s->col[rk[j].peer] = NULL;
            s->cur[rk[j].peer] = NULL;
            s->active[rk[j].i] = -1;
            dropped++;
        }
    free(rk);
    if (dropped) {
        int m = 0;
        for (int i = 0; i < s->nactive; i++)
            if (s->active[i] >= 0)
                s->active[m++] = s->active[i];
        s->nactive = m;
        s->evicted += (uint64_t)dropped;
    }
    if (s->full) {
        /* the spilled sources ask again at their next receive */
        for (int peer = 0; peer < s->npeers; peer++)
            if (s->col[peer] == s->spill)
                s->col[peer] = s->cur[peer] = NULL;
        s->full = 0;
    }
}

/* The check (sec. 3.4): whether a run due (at the interval or by the count) can be skipped.
 * The seed assumes that the latency reduction computed over a past window predicts the next
 * one. The last run left T2's extended window [beta, t) with a best change d = x(M) - x(D)
 * of at most gamma per receive (else it would have applied it); what came since (the
 * receives and idle polls of the slots from the last run's or check's on) is the only new
 * evidence. x(M) - x(D) adds over the two parts except the set-ups (paid once: dropped from
 * the new part's side, which only raises its bound), A.1's max-n term (the whole's max n is
 * at least the old part's and at most the sum of both parts' maxima: the new side drops it
 * for channels added and keeps |D| channels' worth for those released, the slack below) and
 * the idle term (the idle polls' share per frame is a ratio of the whole, not a sum). So d
 * over [beta, now) is at most the last d plus FIND_MAP's best over the new part alone (no
 * set-ups, no A.1 term) plus the slack; while that stays within gamma per receive of the
 * whole, T2 cannot apply anything (the bound carries to the next check). T3's shrunk window
 * [t - (eps - beta) / 2, t) is its older part and the new frames: the run is skipped only if
 * FIND_MAP over the new frames alone, with every cost (set-ups included), applies nothing
 * either, so a new busy peer or a ring gone idle is run at once; among equal peers the new
 * frames' noise does not pay a set-up. That, rows older than sigma slots leaving the
 * extended window and the idle term's ratio are not bounds: hence at most `skips` runs in a
 * row are skipped, so a change they miss is at most skips intervals late. A check reads two
 * running counts per column, as a run does, but calls FIND_MAP on the new frames only and
 * starts no switch. Not before the first run, after a run that changed or was refused
 * something (its switches are proposed again), while a source finds the table full (the run
 * evicts), or while h is exceeded. */
static int skip_run(rmpi_chan_sel_t *s)
{
    if (!s->prm.skips || s->nskip >= s->prm.skips || !s->have_cur || s->changed || s->refused_last || s->full ||
        s->ndedicated > s->prm.h || s->check_slot < oldest(s))
        return 0;
    size_t cap = (size_t)s->nactive + (size_t)s->ndedicated + 1;
    rmpi_chan_src_t *src = malloc(cap * sizeof *src);
    int *ids = malloc(2 * cap * sizeof *ids);
    int skip = 0;
    if (src && ids) {
        uint64_t idle, total = 0, nmax = 0;
        int n = window(s, s->check_slot, src, &idle);
        for (int i = 0; i < n; i++) {
            total += src[i].n;
            if (src[i].peer >= 0 && src[i].n > nmax)
                nmax = src[i].n;
        }
        rmpi_chan_params_t q = s->prm;
        q.rho = q.net.rho = q.p = q.net.p = 0;
        rmpi_chan_plan_t pl;
        double pmax = s->prm.p > s->prm.net.p ? s->prm.p : s->prm.net.p;
        rmpi_chan_plan_t now;
        /* T3 (below): the new frames alone, with every cost, call for no change */
        if (!rmpi_chan_find_map_idle(src, n, idle, &s->prm, ids, ids + cap, &now) && !now.apply &&
            !rmpi_chan_find_map_idle(src, n, idle, &q, ids, ids + cap, &pl)) {
            /* the most the new frames can add to T2's best x(M) - x(D): their own, set-ups
             * and A.1 aside, plus the A.1 slack; against the margin the last run left */
            double add = pl.gain * (double)total + (double)s->ndedicated * (double)nmax * pmax / 2;
            if (total == 0 && idle > 0 && s->ndedicated > 0)
                skip = 0; /* idle polls alone: evidence only against the rings held */
            else if (s->ext_d + add <= s->prm.gamma * (double)(s->ext_n + total)) {
                skip = 1;
                s->ext_d += add, s->ext_n += total;
            }
        }
    }
    free(src), free(ids);
    return skip;
}

/* After a run (done changes) or a skipped one (0), early or not (trig). A run reads every
 * column and sorts its candidates (O(columns)): while the traffic keeps the mapping, early runs back off
 * to the interval's cadence; a change shows the traffic moved, and the trigger's count
 * applies again. Until the trigger's count has come in all, the table is a few rows and a run
 * cheap: runs that change nothing come every first count (the evidence of one source, which a
 * few frames of others, a barrier's, leave just short of passing). After that, doubling starts
 * from the trigger's count, not the first (from it, 2-3 more runs over a full table at 32
 * ranks). */
static void backoff(rmpi_chan_sel_t *s, int trig, int done)
{
    if (done)
        s->trigger_now = s->prm.trigger;
    else if (trig && s->total < s->prm.trigger)
        ;
    else if (trig && s->trigger_now < UINT64_MAX / 4)
        s->trigger_now = 2 * (s->trigger_now > s->prm.trigger ? s->trigger_now : s->prm.trigger);
}

uint64_t rmpi_chan_sel_until_trigger(const rmpi_chan_sel_t *s)
{
    if (!s->trigger_now)
        return UINT64_MAX;
    uint64_t since = s->total - s->total_at_run;
    return since >= s->trigger_now ? 0 : s->trigger_now - since;
}

int rmpi_chan_sel_tick(rmpi_chan_sel_t *s, uint64_t now_ns, rmpi_chan_apply_fn apply, void *ctx)
{
    advance(s, now_ns);
    now_ns = s->now_ns;
    int due = now_ns >= s->next_run_ns;
    /* The count is the evidence: a run comes with it, however soon (a job of a few thousand
     * frames can be shorter than a slot and would otherwise end unselected). The slot is the
     * least gap after a run that changed the mapping (its switches under way, the window of
     * the new mapping still empty), not a wait after the start; after a run that changed
     * nothing the doubled count is the wait. */
    int trig = !due && s->trigger_now && s->total - s->total_at_run >= s->trigger_now &&
               (!s->changed || now_ns >= s->last_run_ns + s->prm.slot_ns);
    if (!due && !trig)
        return 0;
    if (skip_run(s)) {
        /* as a run that changed nothing: the next interval, the count from here, backed off */
        s->skipped++;
        s->nskip++;
        s->next_run_ns = now_ns + s->prm.interval_ns;
        s->check_slot = s->slot;
        s->total_at_run = s->total;
        backoff(s, trig, 0);
        return 0;
    }
    s->nskip = 0;
    s->check_slot = s->slot;
    uint64_t refused = s->refused;
    s->runs++;
    s->trigger_runs += trig;
    s->last_run_ns = now_ns;
    s->next_run_ns = now_ns + s->prm.interval_ns;
    s->total_at_run = s->total;
    int done = run(s, apply, ctx);
    s->changed = done > 0;
    s->refused_last = s->refused != refused;
    evict(s);
    backoff(s, trig, done);
    return done;
}
