/* Sites: groups of nodes joined to each other by long links (seed infiniband-wan, 3.4: a
 * cluster of clusters, where a collective should cross the long link once). Pure logic
 * here: the RMPI_SITES syntax and the clustering of a round-trip matrix; topo.c keeps the
 * job's map and core_sites.c measures the matrix. */
#include "rt.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((format(printf, 3, 4))) static int err(char *msg, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* An item that is digits or digits-digits names ranks; anything else is a host name,
 * matched whole, or as a prefix when it ends in '*'. */
static int parse_ranks(const char *item, long *lo, long *hi)
{
    char *end;
    if (*item < '0' || *item > '9')
        return 0;
    *lo = *hi = strtol(item, &end, 10);
    if (*end == '-' && end[1] >= '0' && end[1] <= '9')
        *hi = strtol(end + 1, &end, 10);
    return *end == '\0' ? 1 : -1;
}

static int host_match(const char *pat, const char *host)
{
    size_t n = strlen(pat);
    if (n && pat[n - 1] == '*')
        return !strncmp(pat, host, n - 1);
    return !strcmp(pat, host);
}

int rmpi_site_parse(const char *spec, int nranks, const char *const *hosts, int *site_of, char *msg, size_t len)
{
    for (int r = 0; r < nranks; r++)
        site_of[r] = -1;
    size_t sl = strlen(spec);
    char *copy = rmpi_xmalloc(sl + 1);
    memcpy(copy, spec, sl + 1);
    int nsites = 0, rc = 0;
    char *site = copy;
    for (;;) {
        size_t n = strcspn(site, ":;");
        char sep = site[n];
        site[n] = '\0';
        if (!*site) {
            rc = err(msg, len, "site %d is empty", nsites + 1);
            break;
        }
        char *item = site;
        while (item && !rc) {
            char *comma = strchr(item, ',');
            if (comma)
                *comma = '\0';
            long lo, hi;
            int kind = parse_ranks(item, &lo, &hi);
            if (!*item) {
                rc = err(msg, len, "site %d has an empty item", nsites + 1);
            } else if (kind < 0) {
                rc = err(msg, len, "'%s' is neither a rank, a range A-B nor a host name", item);
            } else if (kind > 0) {
                if (lo > hi)
                    rc = err(msg, len, "range '%s' runs backwards", item);
                else if (hi >= nranks)
                    rc = err(msg, len, "'%s' names a rank past the job's last (%d)", item, nranks - 1);
                for (long r = lo; !rc && r <= hi; r++) {
                    if (site_of[r] >= 0 && site_of[r] != nsites)
                        rc = err(msg, len, "rank %ld is in two sites", r);
                    site_of[r] = nsites;
                }
            } else if (!hosts) {
                rc = err(msg, len, "'%s' is a host name, and no host names are known here", item);
            } else {
                int found = 0;
                for (int r = 0; !rc && r < nranks; r++) {
                    if (!host_match(item, hosts[r]))
                        continue;
                    if (site_of[r] >= 0 && site_of[r] != nsites)
                        rc = err(msg, len, "rank %d is in two sites", r);
                    site_of[r] = nsites;
                    found = 1;
                }
                if (!rc && !found)
                    rc = err(msg, len, "host '%s' runs no rank of the job", item);
            }
            item = comma ? comma + 1 : NULL;
        }
        if (rc)
            break;
        nsites++;
        if (!sep)
            break;
        site += n + 1;
    }
    for (int r = 0; !rc && r < nranks; r++)
        if (site_of[r] < 0)
            rc = err(msg, len, "rank %d is in no site", r);
    free(copy);
    return rc ? -1 : nsites;
}

/* Prim's minimum spanning tree on the clamped weights: single linkage at any threshold t
 * joins exactly the items its tree edges below t join. */
static double weight(const double *rtt, int n, int i, int j, double floor)
{
    double a = rtt[i * n + j], b = rtt[j * n + i], w;
    if (!(a > 0) || !isfinite(a))
        w = b;
    else if (!(b > 0) || !isfinite(b))
        w = a;
    else
        w = a < b ? a : b;
    if (!(w > 0) || !isfinite(w))
        return INFINITY; /* never measured: no evidence that they are near */
    return w < floor ? floor : w;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int find(int *up, int i)
{
    while (up[i] != i)
        i = up[i] = up[up[i]];
    return i;
}

int rmpi_site_doubt(double rtt, double lo, double hi, double prev, double far)
{
    if (!(rtt >= far))
        return 0;
    return hi > 1.25 * lo || (prev > 0 && rtt < 0.9 * prev);
}

int rmpi_site_cluster(const double *rtt, int n, double floor, double gap, int *site_of)
{
    if (n <= 0)
        return 0;
    if (!(floor > 0))
        floor = 1;
    double *best = rmpi_xmalloc((size_t)n * sizeof *best), *seq = rmpi_xmalloc(((size_t)n + 1) * sizeof *seq);
    int *from = rmpi_xmalloc((size_t)n * sizeof *from), *in = rmpi_xcalloc((size_t)n, sizeof *in);
    int *eu = rmpi_xmalloc((size_t)n * sizeof *eu), *ev = rmpi_xmalloc((size_t)n * sizeof *ev);
    double *ew = rmpi_xmalloc((size_t)n * sizeof *ew);
    int m = 0;
    in[0] = 1;
    for (int j = 1; j < n; j++)
        best[j] = weight(rtt, n, 0, j, floor), from[j] = 0;
    for (int k = 1; k < n; k++) {
        int pick = -1;
        for (int j = 0; j < n; j++)
            if (!in[j] && (pick < 0 || best[j] < best[pick]))
                pick = j;
        in[pick] = 1;
        eu[m] = from[pick], ev[m] = pick, ew[m++] = best[pick];
        for (int j = 0; j < n; j++) {
            double w = in[j] ? 0 : weight(rtt, n, pick, j, floor);
            if (!in[j] && w < best[j])
                best[j] = w, from[j] = pick;
        }
    }
    /* The cut: the largest ratio between consecutive tree edges, the floor counted as the
     * first (so a job of two nodes far apart is two sites). Unmeasured pairs (infinite)
     * never join. */
    seq[0] = floor;
    memcpy(seq + 1, ew, (size_t)m * sizeof *seq);
    qsort(seq + 1, (size_t)m, sizeof *seq, cmp_double);
    double cut = INFINITY, ratio = 0;
    for (int k = 0; k < m; k++) {
        if (!isfinite(seq[k + 1]))
            break;
        double q = seq[k + 1] / seq[k];
        if (q > ratio)
            ratio = q, cut = seq[k + 1];
    }
    if (ratio < gap)
        cut = INFINITY;
    int *up = from;
    for (int i = 0; i < n; i++)
        up[i] = i;
    for (int e = 0; e < m; e++)
        if (ew[e] < cut) {
            int a = find(up, eu[e]), b = find(up, ev[e]);
            if (a != b)
                up[a > b ? a : b] = a < b ? a : b;
        }
    /* sites numbered in order of their lowest item */
    int nsites = 0;
    for (int i = 0; i < n; i++)
        site_of[i] = -1;
    for (int i = 0; i < n; i++) {
        int root = find(up, i);
        site_of[i] = root == i ? nsites++ : site_of[root];
    }
    free(best), free(seq), free(from), free(in), free(eu), free(ev), free(ew);
    return nsites;
}

size_t rmpi_site_format(const int *site_of, int n, char *buf, size_t len)
{
    size_t at = 0;
    int nsites = 0;
    for (int r = 0; r < n; r++)
        nsites = site_of[r] >= nsites ? site_of[r] + 1 : nsites;
    if (len)
        buf[0] = '\0';
    for (int s = 0; s < nsites; s++) {
        int first = 1;
        for (int r = 0; r < n; r++) {
            if (site_of[r] != s || (r > 0 && site_of[r - 1] == s))
                continue;
            int end = r;
            while (end + 1 < n && site_of[end + 1] == s)
                end++;
            char item[48];
            if (end == r)
                snprintf(item, sizeof item, "%s%d", first ? (s ? ":" : "") : ",", r);
            else
                snprintf(item, sizeof item, "%s%d-%d", first ? (s ? ":" : "") : ",", r, end);
            first = 0;
            size_t il = strlen(item);
            if (at + il < len)
                memcpy(buf + at, item, il + 1);
            at += il;
        }
    }
    return at;
}

int rmpi_site_runs(const int *node, const int *site, int n)
{
    /* the last site seen, and every site whose run has ended */
    int last = -1, ok = 1, nended = 0;
    int *ended = rmpi_xmalloc((size_t)(n > 0 ? n : 1) * sizeof *ended);
    for (int i = 0; i < n && ok; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = node[j] == node[i];
        if (seen) { /* a node belongs to one site */
            for (int j = 0; j < i; j++)
                ok &= node[j] != node[i] || site[j] == site[i];
            continue;
        }
        if (site[i] == last)
            continue;
        for (int k = 0; k < nended; k++)
            ok &= ended[k] != site[i];
        if (last >= 0)
            ended[nended++] = last;
        last = site[i];
    }
    free(ended);
    return ok;
}
