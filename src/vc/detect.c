#include "detect.h"

void rmpi_detect_observe(rmpi_detect_t *d, size_t outstanding, uint64_t moved, uint64_t now, int fresh)
{
    if (d->unheard == 2) { /* the counter's value at the re-admission: only growth counts */
        d->unheard = 1;
        d->moved = moved;
        d->t_since = now;
        d->busy = outstanding > 0;
        return;
    }
    if (moved != d->moved) {
        d->unheard = 0;
        d->moved = moved;
        d->t_moved = now;
        d->t_since = now;
    } else if (fresh || (!d->busy && outstanding)) {
        d->t_since = now; /* the wait starts with the work (or with trustworthy looks) */
    }
    d->busy = outstanding > 0;
}

void rmpi_detect_readmit(rmpi_detect_t *d, uint64_t now, double grace_ns)
{
    *d = (rmpi_detect_t){.unheard = 2, .t_since = now, .grace_end = now + (uint64_t)(grace_ns > 0 ? grace_ns : 0)};
}

double rmpi_detect_timeout(const rmpi_path_t *p, double k, double floor_ns)
{
    double rto = p->srtt > 0 ? k * (p->srtt + 4 * p->rttvar) : 0;
    return rto > floor_ns ? rto : floor_ns;
}

void rmpi_probe_start(rmpi_probe_t *p, uint64_t now, double first_ns)
{
    p->wait = first_ns > 1 ? (uint64_t)first_ns : 1;
    p->at = now + p->wait;
}

uint64_t rmpi_probe_due(rmpi_probe_t *p, uint64_t now, double max_ns)
{
    if (now < p->at)
        return 0;
    uint64_t tmo = p->wait;
    p->at = now + tmo;
    double next = (double)p->wait * 2;
    p->wait = (uint64_t)(next < max_ns ? next : max_ns > (double)tmo ? max_ns : (double)tmo);
    return tmo;
}

/* Another live subchannel made progress after i's wait began and within i's timeout of
 * now: what fails i (rmpi_detect_failed), and what makes a nudge needless. Movement long
 * past does neither: a rail that moved just after i stalled and then went quiet (the job
 * stalls behind i) left the failure a window as long as the gap between the two stops, a
 * few ms that a pause in the looks on a loaded host skips, and then never nudged. */
static int others_moved(const rmpi_detect_t *d, int n, const int *up, int i, const double *timeout_ns, uint64_t now)
{
    for (int j = 0; j < n; j++)
        if (j != i && up[j] && d[j].t_moved > d[i].t_since && (double)(now - d[j].t_moved) <= timeout_ns[i])
            return 1;
    return 0;
}

int rmpi_detect_failed(const rmpi_detect_t *d, int n, const int *up, const double *timeout_ns, uint64_t now)
{
    for (int i = 0; i < n; i++)
        if (up[i] && d[i].busy && (double)(now - d[i].t_since) > timeout_ns[i] &&
            !(d[i].unheard && now < d[i].grace_end) && others_moved(d, n, up, i, timeout_ns, now))
            return i;
    return -1;
}

int rmpi_detect_nudge(rmpi_detect_t *d, int n, const int *up, const double *timeout_ns, uint64_t now)
{
    for (int i = 0; i < n; i++) {
        if (!up[i] || !d[i].busy)
            continue;
        double quarter = timeout_ns[i] / 4;
        if ((double)(now - d[i].t_since) <= quarter || others_moved(d, n, up, i, timeout_ns, now))
            continue;
        if (d[i].t_nudged > d[i].t_since && (double)(now - d[i].t_nudged) < quarter)
            continue;
        d[i].t_nudged = now;
        return i;
    }
    return -1;
}
