#include "path.h"

#include <math.h>

int rmpi_path_observe(rmpi_path_t *p, double r, int src, uint64_t now)
{
    if (src < 0 || src >= RMPI_PATH_NSRC || !(r > 0 && r <= RMPI_PATH_RTT_MAX))
        return 0;
    if (!p->wstart || now - p->wstart >= RMPI_PATH_WINDOW_NS) {
        p->wmin_prev = p->wstart && now - p->wstart < 2 * RMPI_PATH_WINDOW_NS ? p->wmin : 0;
        p->wmin = 0;
        p->wstart = now ? now : 1;
    }
    if (p->wmin <= 0 || r < p->wmin)
        p->wmin = r;
    p->n[src]++;
    p->last[src] = r;
    if (p->min[src] <= 0 || r < p->min[src])
        p->min[src] = r;
    if (p->min_rtt <= 0 || r < p->min_rtt)
        p->min_rtt = r;
    return 1;
}

int rmpi_path_sample(rmpi_path_t *p, double r, int src, uint64_t now)
{
    if (!rmpi_path_observe(p, r, src, now))
        return 0;
    int restart = p->srtt <= 0 || (src != 0 && !p->measured);
    if (src != 0)
        p->measured = 1;
    if (restart) {
        p->srtt = r;
        p->rttvar = r / 2;
        return 1;
    }
    p->rttvar = 0.75 * p->rttvar + 0.25 * (r > p->srtt ? r - p->srtt : p->srtt - r);
    p->srtt = 0.875 * p->srtt + 0.125 * r;
    return 1;
}

double rmpi_path_base(const rmpi_path_t *p)
{
    return p->wmin_prev > 0 && p->wmin_prev < p->wmin ? p->wmin_prev : p->wmin;
}

/* The crossover (seed infiniband-wan, 3.4: the rendezvous threshold must follow the delay).
 * For an s-byte message:
 *   eager       T_e(s) = s/C + s/B1        one frame on one rail, copied once at the receiver
 *                                          (out of the receive buffer into the user's, or
 *                                          into an unexpected-message buffer)
 *   rendezvous  T_r(s) = RTT + s/B         RTS and CTS first, then zero-copy data striped
 *                                          over every rail (B = sum of the rails' rates)
 * (the one-way latency and the header frames are common to both and cancel). Eager wins
 * while s (1/C + 1/B1 - 1/B) < RTT, so the crossover is s* = RTT / (1/C + 1/B1 - 1/B).
 * On one rail B1 = B and s* = RTT * C: the rate cancels, only the copy is left to weigh
 * against the round trip. On several rails the rendezvous also wins the other rails'
 * bandwidth; on two equal rails with a fast copy s* is about RTT * 2 B1, twice the
 * bandwidth-delay product of one rail. */
double rmpi_path_crossover(double rtt, double copy, double one, double all)
{
    if (!(rtt > 0) || !(copy > 0) || !isfinite(rtt) || !isfinite(copy))
        return 0;
    double k = 1 / copy;
    if (one > 0 && all > one && isfinite(all))
        k += 1 / one - 1 / all;
    return rtt / k;
}

/* Parallel streams. One TCP connection keeps at most `window` bytes in flight, so it
 * carries at most window / RTT; a path whose bandwidth-delay product is larger needs
 * ceil(BDP / window) of them. The BDP is rate x RTT, but the rate measured on cur
 * window-bound streams is cur x window / RTT whatever the path could carry: when the
 * measured BDP fills 80% or more of the cur windows, the streams are the bottleneck and
 * one more is asked for (the next measurement tells whether it helped: once the path
 * itself limits, the BDP stays below the windows in use and the count stays). A capacity
 * that is known bounds the count from above. Counts only grow: a stream woken and idle
 * costs nothing, and one put to sleep would strand the frames queued on it. */
/* ceil(x) for 0 <= x, at most max (the library keeps off libm). */
static int up_to(double x, int max)
{
    if (!(x < max))
        return max;
    int n = (int)x;
    return n < x ? n + 1 : n;
}

int rmpi_path_streams(double rate, double rtt, double window, double cap_rate, int cur, int max)
{
    if (cur < 1)
        cur = 1;
    if (max < cur)
        return cur;
    if (!(rate > 0) || !(window > 0) || !(rtt >= RMPI_PATH_FAR_NS) || !isfinite(rate) || !isfinite(rtt))
        return cur;
    double bdp = rate * rtt;
    int need = up_to(bdp / window, max);
    if (bdp >= 0.8 * cur * window && need < cur + 1)
        need = cur + 1;
    if (cap_rate > 0 && isfinite(cap_rate)) {
        int cap = up_to(cap_rate * rtt / window, max);
        need = need < cap ? need : cap;
    }
    if (need > max)
        need = max;
    return need > cur ? need : cur;
}
