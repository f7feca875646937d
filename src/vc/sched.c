/* Communication scheduler (Liu et al., 'Building Multirail InfiniBand Clusters: MPI-Level
 * Designs and Performance Evaluation', secs. 4.4-4.5). The contract is in sched.h.
 * Everything here is plain arithmetic on the scheduler's own state, so two schedulers fed
 * the same calls make the same choices bit for bit. No libm: rounding is done by casts. */
#include "sched.h"

#include <string.h>

/* Stripe cut points fall on this boundary, so only a message's last stripe is ragged. */
#define STRIPE_ALIGN ((size_t)64)
/* Smooth WRR runs on integer-valued doubles (exact arithmetic, so exact ties and the
 * textbook sequences): the smallest hint becomes WRR_UNIT and ratios are capped. */
#define WRR_UNIT 1024.0
#define WRR_MAX_RATIO 1073741824.0

static int live_count(const rmpi_sched_t *s)
{
    int n = 0;
    for (int i = 0; i < s->nsub; i++)
        n += s->up[i] != 0;
    return n;
}

/* The first live subchannel at or after `from`, wrapping; -1 when none is live. */
static int next_live(const rmpi_sched_t *s, int from)
{
    for (int k = 0; k < s->nsub; k++) {
        int i = (from + k) % s->nsub;
        if (s->up[i])
            return i;
    }
    return -1;
}

/* The cfg.bind-th subchannel counting only those not asleep (spares woken later take no
 * process's binding from the rails of the others). */
static int bind_index(const rmpi_sched_t *s)
{
    int awake = 0;
    for (int i = 0; i < s->nsub; i++)
        awake += !s->asleep[i];
    if (awake == 0)
        return 0;
    int b = s->cfg.bind % awake;
    if (b < 0)
        b += awake;
    for (int i = 0; i < s->nsub; i++)
        if (!s->asleep[i] && b-- == 0)
            return i;
    return 0;
}

/* Scale the live weights to sum 1; equal shares when they hold nothing usable. */
static void renormalise(rmpi_sched_t *s)
{
    double sum = 0;
    int live = live_count(s);
    for (int i = 0; i < s->nsub; i++) {
        if (!s->up[i] || !(s->weight[i] > 0))
            s->weight[i] = 0;
        sum += s->weight[i];
    }
    for (int i = 0; i < s->nsub; i++) {
        if (!s->up[i])
            continue;
        s->weight[i] = sum > 0 ? s->weight[i] / sum : 1.0 / live;
    }
}

/* Give every live subchannel at least `floor` and scale the others into what is left.
 * Raising one to the floor can push another below it, hence the rounds (at most one per
 * subchannel, since a subchannel once pinned stays pinned). */
static void apply_floor(rmpi_sched_t *s, double floor)
{
    int live = live_count(s);
    if (!(floor > 0) || live == 0)
        return;
    if (floor > 1.0 / live)
        floor = 1.0 / live;
    int pinned[RMPI_SCHED_MAX] = {0};
    int npinned = 0;
    for (int round = 0; round < live; round++) {
        int changed = 0;
        for (int i = 0; i < s->nsub; i++) {
            if (s->up[i] && !pinned[i] && s->weight[i] < floor) {
                pinned[i] = 1;
                npinned++;
                changed = 1;
            }
        }
        if (!changed)
            break;
        double rest = 1.0 - npinned * floor, free_sum = 0;
        int nfree = 0;
        for (int i = 0; i < s->nsub; i++) {
            if (s->up[i] && !pinned[i]) {
                free_sum += s->weight[i];
                nfree++;
            }
        }
        for (int i = 0; i < s->nsub; i++) {
            if (!s->up[i])
                continue;
            if (pinned[i])
                s->weight[i] = floor;
            else
                s->weight[i] = free_sum > 0 ? s->weight[i] * rest / free_sum : rest / nfree;
        }
    }
}

void rmpi_sched_init(rmpi_sched_t *s, const rmpi_sched_cfg_t *cfg, int nsub, const double *hints)
{
    memset(s, 0, sizeof *s);
    s->cfg = *cfg;
    if (nsub < 1)
        nsub = 1;
    if (nsub > RMPI_SCHED_MAX)
        nsub = RMPI_SCHED_MAX;
    s->nsub = nsub;
    if (s->cfg.window == 0)
        s->cfg.window = 1;

    /* A subchannel without a usable hint is assumed to be typical: it gets the mean of the
     * hints that were given (the negated test also catches NaN). */
    double sum = 0;
    int given = 0;
    for (int i = 0; i < nsub; i++) {
        s->up[i] = 1;
        if (hints && hints[i] > 0 && hints[i] < 1e300) {
            sum += hints[i];
            given++;
        }
    }
    double mean = given ? sum / given : 1.0;
    double total = 0;
    for (int i = 0; i < nsub; i++) {
        s->hint[i] = hints && hints[i] > 0 && hints[i] < 1e300 ? hints[i] : mean;
        total += s->hint[i];
    }
    for (int i = 0; i < nsub; i++) {
        s->hint[i] /= total;
        s->weight[i] = s->cfg.stripe_policy == RMPI_STRIPE_POLICY_WEIGHTED ? s->hint[i] : 1.0 / nsub;
    }
    /* Binding spreads the processes of a node over the rails by cfg.bind; round robin and
     * window start at subchannel 0 so that every peer starts the same way. */
    s->cur = s->cfg.small_policy == RMPI_SMALL_POLICY_BINDING ? bind_index(s) : 0;
}

int rmpi_sched_small(rmpi_sched_t *s)
{
    int pick;
    switch (s->cfg.small_policy) {
    case RMPI_SMALL_POLICY_RR:
        pick = next_live(s, s->cur);
        if (pick >= 0)
            s->cur = (pick + 1) % s->nsub;
        return pick;
    case RMPI_SMALL_POLICY_WRR: {
        /* Smooth weighted round robin: every live subchannel earns its weight, the richest
         * sends and pays the total, so picks interleave (4:1 gives A A B A A, not A A A A B). */
        double lo = 0, total = 0;
        for (int i = 0; i < s->nsub; i++)
            if (s->up[i] && (lo == 0 || s->hint[i] < lo))
                lo = s->hint[i];
        pick = -1;
        for (int i = 0; i < s->nsub; i++) {
            if (!s->up[i])
                continue;
            double r = s->hint[i] / lo;
            if (r > WRR_MAX_RATIO)
                r = WRR_MAX_RATIO;
            double w = (double)(uint64_t)(r * WRR_UNIT + 0.5);
            s->credit[i] += w;
            total += w;
            if (pick < 0 || s->credit[i] > s->credit[pick])
                pick = i;
        }
        if (pick >= 0)
            s->credit[pick] -= total;
        return pick;
    }
    case RMPI_SMALL_POLICY_WINDOW:
        if (!s->up[s->cur] || s->in_window >= s->cfg.window) {
            int nx = next_live(s, (s->cur + 1) % s->nsub);
            if (nx < 0)
                return -1;
            s->cur = nx;
            s->in_window = 0;
        }
        s->in_window++;
        return s->cur;
    default:
        pick = next_live(s, s->cur);
        if (pick >= 0)
            s->cur = pick;
        return pick;
    }
}

/* Cut point for the cumulative share `cum` of len, on a STRIPE_ALIGN boundary and never past
 * the last aligned byte (so the ragged tail always lands in the last share). */
static size_t cut_at(size_t len, double cum)
{
    size_t units = len / STRIPE_ALIGN;
    double q = (double)len / (double)STRIPE_ALIGN * cum + 0.5;
    if (!(q > 0))
        return 0;
    if (q >= (double)units)
        return units * STRIPE_ALIGN;
    size_t u = (size_t)q;
    return (u > units ? units : u) * STRIPE_ALIGN;
}

/* Bytes ahead of a new stripe on subchannel i: the stripes cut and not done, or fewer when
 * the provider said it holds fewer (rmpi_sched_seen). */
static double ahead_of(const rmpi_sched_t *s, int i)
{
    return (double)(s->seen_ok[i] && s->seen[i] < s->queued[i] ? s->seen[i] : s->queued[i]);
}

/* The live subchannel (w[i] > 0) expected to finish a message of len whole first, given
 * its queue: ties to the heavier, then the lower. *when: its finish, in bytes per weight. */
static int first_to_finish(const rmpi_sched_t *s, size_t len, const double *w, double *when)
{
    int best = -1;
    double best_t = 0;
    for (int i = 0; i < s->nsub; i++) {
        if (!(w[i] > 0))
            continue;
        double t = (ahead_of(s, i) + (double)len) / w[i];
        if (best < 0 || t < best_t || (t == best_t && w[i] > w[best])) {
            best = i;
            best_t = t;
        }
    }
    *when = best_t;
    return best;
}

/* Adaptive shares that make every stripe of the message end together. Subchannel i, with
 * q_i bytes queued and weight w_i (its part of the total rate), is free at q_i / w_i; water
 * filling finds the time T at which sum_i max(0, T w_i - q_i) = len, and those are the
 * shares. A share under the smallest stripe is dropped (the smallest first) and the rest is
 * filled again; a message left to one subchannel goes whole to the one expected to finish
 * it first (ties: the heavier, then the lower). With empty queues the shares are len * w_i,
 * plain weighted striping. So does a message behind deep queues that, whole, would end at
 * most cfg.whole_slack (RMPI_STRIPE_SLACK) later than its stripes would: there splitting
 * gains the message almost nothing and ties its completion to the slowest rail it touches,
 * which hurts when a rail's rate drops under a stream (the stripes cut at the old split
 * hold the messages' other stripes until the slow rail drains its queue at the new rate),
 * while whole messages on each rail keep every rail as busy. At 4:1 and 0.01 that is a
 * stream about 25 messages deep, or more. w[] (the live weights, 0 elsewhere) is replaced
 * by the shares. */
static void fill_shares(const rmpi_sched_t *s, size_t len, double *w)
{
    double floor_len = s->cfg.min_stripe > 0 ? (double)s->cfg.min_stripe : 1.0;
    double x[RMPI_SCHED_MAX];
    int use[RMPI_SCHED_MAX], nuse = 0;
    for (int i = 0; i < s->nsub; i++) {
        use[i] = w[i] > 0;
        nuse += use[i];
    }
    while (nuse > 1) {
        int ord[RMPI_SCHED_MAX], m = 0;
        for (int i = 0; i < s->nsub; i++) {
            if (!use[i])
                continue;
            double fi = ahead_of(s, i) / w[i];
            int j = m++;
            for (; j > 0 && ahead_of(s, ord[j - 1]) / w[ord[j - 1]] > fi; j--)
                ord[j] = ord[j - 1];
            ord[j] = i;
        }
        double qs = 0, ws = 0, t = 0;
        int k = 0;
        for (; k < m; k++) {
            qs += ahead_of(s, ord[k]);
            ws += w[ord[k]];
            t = ((double)len + qs) / ws;
            if (k + 1 == m || t <= ahead_of(s, ord[k + 1]) / w[ord[k + 1]])
                break;
        }
        int drop = -1;
        for (int j = 0; j < m; j++) {
            int i = ord[j];
            x[i] = j <= k ? t * w[i] - ahead_of(s, i) : 0;
            if (x[i] < 0)
                x[i] = 0;
            if (x[i] < floor_len && (drop < 0 || x[i] < x[drop]))
                drop = i;
        }
        if (drop < 0) {
            double whole_t;
            first_to_finish(s, len, w, &whole_t);
            if (s->cfg.whole_slack > 0 && whole_t <= t * (1 + s->cfg.whole_slack))
                break; /* deep queues: whole, below */
            for (int i = 0; i < s->nsub; i++)
                w[i] = use[i] ? x[i] : 0;
            return;
        }
        use[drop] = 0;
        nuse--;
    }
    double best_t;
    int best = first_to_finish(s, len, w, &best_t);
    for (int i = 0; i < s->nsub; i++)
        w[i] = i == best ? 1.0 : 0;
}

/* Every stripe handed out joins its subchannel's queue until rmpi_sched_stripe_done. */
static int enqueue(rmpi_sched_t *s, rmpi_stripe_t *out, int n)
{
    for (int k = 0; k < n; k++) {
        out[k].ahead = (size_t)ahead_of(s, out[k].sub);
        s->queued[out[k].sub] += out[k].len;
        s->nqueued++;
    }
    return n;
}

/* Stripe st's bytes leave its subchannel's queue (never below zero). */
static void unqueue(rmpi_sched_t *s, const rmpi_stripe_t *st)
{
    int i = st->sub;
    if (i >= 0 && i < s->nsub)
        s->queued[i] -= st->len < s->queued[i] ? st->len : s->queued[i];
}

void rmpi_sched_seen(rmpi_sched_t *s, int sub, uint64_t bytes)
{
    if (sub >= 0 && sub < s->nsub) {
        s->seen[sub] = bytes;
        s->seen_ok[sub] = 1;
    }
}

void rmpi_sched_stripe_done(rmpi_sched_t *s, const rmpi_stripe_t *st)
{
    unqueue(s, st);
    /* Nothing left anywhere: start from exact zeros whatever went astray. */
    if (s->nqueued && --s->nqueued == 0)
        memset(s->queued, 0, sizeof s->queued);
}

void rmpi_sched_stripe_move(rmpi_sched_t *s, rmpi_stripe_t *st, int to)
{
    unqueue(s, st);
    if (to >= 0 && to < s->nsub)
        s->queued[to] += st->len;
    st->sub = to;
}

static int stripe_cut(rmpi_sched_t *s, size_t len, rmpi_stripe_t *out, int max);

int rmpi_sched_stripe(rmpi_sched_t *s, size_t len, rmpi_stripe_t *out, int max)
{
    int n = stripe_cut(s, len, out, max);
    memset(s->seen_ok, 0, sizeof s->seen_ok);
    s->cuts += n > 0;
    s->split += n > 1;
    return n;
}

static int stripe_cut(rmpi_sched_t *s, size_t len, rmpi_stripe_t *out, int max)
{
    if (len == 0 || max < 1)
        return 0;
    int live = live_count(s);
    if (live == 0)
        return 0;
    if (s->cfg.stripe_policy == RMPI_STRIPE_POLICY_BINDING || live == 1) {
        out[0].sub = s->cfg.stripe_policy == RMPI_STRIPE_POLICY_BINDING ? next_live(s, bind_index(s)) : next_live(s, 0);
        out[0].off = 0;
        out[0].len = len;
        return enqueue(s, out, 1);
    }

    double w[RMPI_SCHED_MAX] = {0}, wsum = 0;
    for (int i = 0; i < s->nsub; i++) {
        if (!s->up[i])
            continue;
        w[i] = s->cfg.stripe_policy == RMPI_STRIPE_POLICY_EVEN ? 1.0 : (s->weight[i] > 0 ? s->weight[i] : 0);
        wsum += w[i];
    }
    if (!(wsum > 0)) {
        for (int i = 0; i < s->nsub; i++)
            w[i] = s->up[i] ? 1.0 : 0;
        wsum = live;
    }
    if (s->cfg.stripe_policy == RMPI_STRIPE_POLICY_ADAPTIVE) {
        fill_shares(s, len, w);
        wsum = 0;
        for (int i = 0; i < s->nsub; i++)
            wsum += w[i];
    }

    /* Shares from cumulative cut points: each is within one alignment unit of its exact
     * value and they add up to len whatever the rounding. The tail (len % 64) is set aside
     * and handed to whichever stripe ends up last. */
    size_t share[RMPI_SCHED_MAX] = {0}, prev = 0;
    size_t tail = len % STRIPE_ALIGN;
    double cum = 0;
    int last = -1;
    for (int i = 0; i < s->nsub; i++)
        if (s->up[i])
            last = i;
    for (int i = 0; i < s->nsub; i++) {
        if (!s->up[i])
            continue;
        cum += w[i];
        size_t c = i == last ? len - tail : cut_at(len, cum / wsum);
        if (c < prev)
            c = prev;
        share[i] = c - prev;
        prev = c;
    }

    /* The keeper is the largest share; ties go to the heavier, then the lower subchannel, so
     * a message too small to split goes whole to the best subchannel. */
    int keep[RMPI_SCHED_MAX] = {0}, nkeep = 0, big = -1;
    for (int i = 0; i < s->nsub; i++) {
        if (!s->up[i])
            continue;
        if (big < 0 || share[i] > share[big] || (share[i] == share[big] && w[i] > w[big]))
            big = i;
    }
    size_t floor_len = s->cfg.min_stripe > 0 ? s->cfg.min_stripe : 1;
    for (int i = 0; i < s->nsub; i++) {
        keep[i] = s->up[i] && (i == big || share[i] >= floor_len);
        nkeep += keep[i];
    }
    /* More stripes than the caller has room for: drop the smallest (lightest, then highest). */
    while (nkeep > max) {
        int drop = -1;
        for (int i = 0; i < s->nsub; i++) {
            if (!keep[i] || i == big)
                continue;
            if (drop < 0 || share[i] < share[drop] || (share[i] == share[drop] && w[i] <= w[drop]))
                drop = i;
        }
        keep[drop] = 0;
        nkeep--;
    }
    for (int i = 0; i < s->nsub; i++) {
        if (s->up[i] && !keep[i]) {
            share[big] += share[i];
            share[i] = 0;
        }
    }

    int n = 0, lastkept = -1;
    for (int i = 0; i < s->nsub; i++)
        if (keep[i])
            lastkept = i;
    share[lastkept] += tail;
    size_t off = 0;
    for (int i = 0; i < s->nsub; i++) {
        if (!keep[i])
            continue;
        out[n].sub = i;
        out[n].off = off;
        out[n].len = share[i];
        off += share[i];
        n++;
    }
    return enqueue(s, out, n);
}

/* alpha of an update: the configured history factor, but 1 while the weights are still
 * the starting guess (not history: the first measurement replaces them). */
static double update_alpha(const rmpi_sched_t *s)
{
    double alpha = s->cfg.alpha;
    if (!(alpha > 0))
        alpha = 0;
    if (alpha > 1 || s->learned == 0)
        alpha = 1;
    return alpha;
}

static void updated(rmpi_sched_t *s)
{
    renormalise(s);
    apply_floor(s, s->cfg.floor);
    s->updates++;
    s->learned++;
}

/* A message one subchannel carried whole says how fast that one delivers, not how the
 * others compare, so the weights move toward the shares of the rates every live
 * subchannel last measured (rate[], each an average of its own stripes), and only once all
 * have one. Whole messages are the rule where one rail is much slower (at 10:1 a 256 KiB
 * message never splits above the smallest stripe), and placement then rests on the weights
 * alone: without this they kept whatever the last split message left. */
static void whole_feedback(rmpi_sched_t *s)
{
    double sum = 0;
    for (int i = 0; i < s->nsub; i++) {
        if (!s->up[i])
            continue;
        if (!(s->rate[i] > 0))
            return;
        sum += s->rate[i];
    }
    if (!(sum > 0))
        return;
    double alpha = update_alpha(s);
    for (int i = 0; i < s->nsub; i++)
        if (s->up[i])
            s->weight[i] = (1 - alpha) * s->weight[i] + alpha * s->rate[i] / sum;
    updated(s);
}

/* The weight update of Liu et al., 'Building Multirail InfiniBand Clusters: MPI-Level
 * Designs and Performance Evaluation', sec. 4.5, written with shares: the target weight is
 * W'_i = W_total * (W_i/t_i) / sum_k (W_k/t_k) and the new weight blends it with the old,
 * (1 - alpha) * W_i + alpha * W'_i. Since stripe i carried len_i = S * W_i / W_total bytes,
 * W_i/t_i is proportional to len_i/t_i, the bandwidth the stripe saw, so the target share
 * is b_i / sum_k b_k. Using the bytes actually sent (after rounding and folding) instead of
 * W_i keeps the estimate exact. A stripe's time runs from its cut, and its subchannel first
 * delivers the `ahead` bytes queued before it (one queue per peer and rail, first in first
 * out), so the rate it saw is (ahead + len) / t; without that a stripe cut behind a long
 * queue would make a fast subchannel look slow. */
void rmpi_sched_feedback(rmpi_sched_t *s, const rmpi_stripe_t *stripes, int n, const uint64_t *t_ns)
{
    /* Several stripes on one subchannel went one after the other: add bytes and times. */
    double bytes[RMPI_SCHED_MAX] = {0}, ns[RMPI_SCHED_MAX] = {0};
    int carried[RMPI_SCHED_MAX] = {0}, ncarried = 0;
    for (int k = 0; k < n; k++) {
        int i = stripes[k].sub;
        if (i < 0 || i >= s->nsub || !s->up[i] || stripes[k].len == 0)
            continue;
        bytes[i] += (double)stripes[k].len + (double)stripes[k].ahead;
        /* A zero time (clock granularity) still means some time: count it as a nanosecond. */
        ns[i] += t_ns[k] > 0 ? (double)t_ns[k] : 1.0;
        ncarried += !carried[i];
        carried[i] = 1;
    }
    /* Every policy keeps each subchannel's delivery rate (the core's eager/rendezvous
     * crossover reads it); only adaptive striping moves weights. */
    for (int i = 0; i < s->nsub; i++)
        if (carried[i]) {
            double r = bytes[i] / ns[i];
            s->rate[i] = s->rate[i] > 0 && s->cfg.alpha > 0 && s->cfg.alpha < 1
                             ? (1 - s->cfg.alpha) * s->rate[i] + s->cfg.alpha * r
                             : r;
        }
    if (s->cfg.stripe_policy != RMPI_STRIPE_POLICY_ADAPTIVE || ncarried < 1)
        return;
    if (ncarried < 2) {
        whole_feedback(s);
        return;
    }

    /* Subchannels that carried nothing keep their share; the measured ones split the rest. */
    double bw[RMPI_SCHED_MAX] = {0}, bwsum = 0, rest = 1.0;
    for (int i = 0; i < s->nsub; i++) {
        if (carried[i]) {
            bw[i] = bytes[i] / ns[i];
            bwsum += bw[i];
        } else if (s->up[i]) {
            rest -= s->weight[i];
        }
    }
    if (!(bwsum > 0) || !(rest > 0))
        return;
    double alpha = update_alpha(s);
    for (int i = 0; i < s->nsub; i++) {
        if (!carried[i])
            continue;
        double target = rest * bw[i] / bwsum;
        s->weight[i] = (1 - alpha) * s->weight[i] + alpha * target;
    }
    updated(s);
}

int rmpi_sched_fail(rmpi_sched_t *s, int sub)
{
    if (sub >= 0 && sub < s->nsub)
        s->asleep[sub] = 0; /* a failed spare is never woken */
    if (sub < 0 || sub >= s->nsub || !s->up[sub])
        return live_count(s);
    s->up[sub] = 0;
    s->weight[sub] = 0;
    s->queued[sub] = 0; /* its stripes move elsewhere (rmpi_sched_stripe_move) */
    /* The credits of smooth WRR balance to zero over the live set; start that afresh. */
    memset(s->credit, 0, sizeof s->credit);
    int live = live_count(s);
    if (live)
        renormalise(s);
    return live;
}

int rmpi_sched_readmit(rmpi_sched_t *s, int sub)
{
    if (sub < 0 || sub >= s->nsub || s->up[sub])
        return live_count(s);
    s->up[sub] = 1;
    s->queued[sub] = 0;
    s->rate[sub] = 0;
    s->learned = 0;
    memset(s->credit, 0, sizeof s->credit);
    int live = live_count(s);
    for (int i = 0; i < s->nsub; i++)
        if (s->up[i])
            s->weight[i] = s->cfg.stripe_policy == RMPI_STRIPE_POLICY_WEIGHTED ? s->hint[i] : 1.0 / live;
    renormalise(s);
    return live;
}

void rmpi_sched_sleep(rmpi_sched_t *s, int sub)
{
    if (sub < 0 || sub >= s->nsub || !s->up[sub] || live_count(s) < 2)
        return;
    s->up[sub] = 0;
    s->asleep[sub] = 1;
    s->weight[sub] = 0;
    memset(s->credit, 0, sizeof s->credit);
    renormalise(s);
    if (s->cfg.small_policy == RMPI_SMALL_POLICY_BINDING)
        s->cur = bind_index(s);
}

int rmpi_sched_wake(rmpi_sched_t *s, int sub)
{
    if (sub < 0 || sub >= s->nsub || !s->asleep[sub])
        return live_count(s);
    /* It joins with the mean share of the live ones (weighted: its hint), so adaptive
     * striping starts it like a sibling and the next feedback corrects it. */
    double sum = 0;
    int live = live_count(s);
    for (int i = 0; i < s->nsub; i++)
        if (s->up[i])
            sum += s->weight[i];
    s->asleep[sub] = 0;
    s->up[sub] = 1;
    s->weight[sub] = s->cfg.stripe_policy == RMPI_STRIPE_POLICY_WEIGHTED ? s->hint[sub] : live ? sum / live : 1.0;
    s->rate[sub] = 0;
    s->queued[sub] = 0;
    memset(s->credit, 0, sizeof s->credit);
    renormalise(s);
    return live + 1;
}
