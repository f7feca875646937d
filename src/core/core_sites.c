/* The site map from measured round trips (rt.h, "sites"; seed infiniband-wan 3.4): at
 * MPI_Init, when RMPI_SITES=auto and the job spans several nodes, the lowest rank of each
 * node pings the lowest rank of every other node, the rows of smallest round trips go
 * through the process manager (key srtt-<leader's rank>-<chunk>: the number after the
 * first '-' names the owner, as PMIx needs), and every rank clusters the same matrix. A job on one node
 * measures nothing. Cost: SITE_PROBES rounds of one ping per pair of nodes, and up to
 * (SITE_BATCHES - 1) * SITE_MORE more while a far round trip is in doubt (measure). */
#include "core_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SITE_PROBES 5 /* rounds; the first (which opens the connections) is not counted */
#define ROW_CHUNK 64  /* entries per PMI value (12 digits each: well under PMI-2's 1024 bytes) */

static rmpi_req_t *post(int recv, int peer, int tag, void *buf)
{
    rmpi_req_t *r = rmpi_req_alloc(recv ? RMPI_REQ_RECV : RMPI_REQ_SEND);
    r->rank = peer, r->ctx = RMPI_CTX_SITES, r->tag = tag, r->src = rmpi_core_rank;
    r->buf = buf, r->len = sizeof(uint64_t);
    if (recv)
        rmpi_core_irecv(r);
    else
        rmpi_core_isend(r);
    return r;
}

/* Round trips to each other node's leader in rounds [from, to): the smallest counted one
 * into row (round 0, which opens the connections, is not counted), and each node's
 * smallest and largest of these rounds into lo and hi. Every pair pings both ways at once;
 * a ping is answered as soon as it is seen. */
static void rounds(const int *leader, int nn, int my, int from, int to, double *row, double *lo, double *hi)
{
    rmpi_req_t **in = rmpi_xcalloc((size_t)nn * 4, sizeof *in), **back = in + nn, **out = in + 2 * nn;
    rmpi_req_t **sent = in + 3 * nn;
    uint64_t *t0 = rmpi_xcalloc((size_t)nn * 3, sizeof *t0), *ping = t0 + nn, *pong = t0 + 2 * nn;
    for (int j = 0; j < nn; j++)
        lo[j] = hi[j] = 0;
    for (int rep = from; rep < to; rep++) {
        int pending = 0;
        for (int j = 0; j < nn; j++) {
            if (j == my)
                continue;
            in[j] = post(1, leader[j], 2 * rep, &ping[j]);
            back[j] = post(1, leader[j], 2 * rep + 1, &pong[j]);
            pending += 2;
        }
        for (int j = 0; j < nn; j++)
            if (j != my) {
                t0[j] = rmpi_time_ns();
                sent[j] = post(0, leader[j], 2 * rep, &t0[j]);
            }
        unsigned idle = 0;
        while (pending) {
            rmpi_core_wait_step(&idle);
            for (int j = 0; j < nn; j++) {
                if (in[j] && in[j]->done) {
                    rmpi_req_release(in[j]);
                    in[j] = NULL;
                    out[j] = post(0, leader[j], 2 * rep + 1, &ping[j]);
                    pending--;
                }
                if (back[j] && back[j]->done) {
                    double rtt = (double)(rmpi_time_ns() - t0[j]);
                    if (rep > 0) {
                        if (row[j] <= 0 || rtt < row[j])
                            row[j] = rtt;
                        if (lo[j] <= 0 || rtt < lo[j])
                            lo[j] = rtt;
                        if (rtt > hi[j])
                            hi[j] = rtt;
                    }
                    rmpi_req_release(back[j]);
                    back[j] = NULL;
                    pending--;
                }
            }
        }
        for (int j = 0; j < 2 * nn; j++)
            if (out[j]) { /* out[] and sent[] */
                rmpi_core_wait(out[j]);
                rmpi_req_release(out[j]);
                out[j] = NULL;
            }
    }
    free(in);
    free(t0);
}

/* Every leader's flag to every other leader; 1 if any is set (each leader gets the same
 * flags, so all decide alike). */
static int any_leader(const int *leader, int nn, int my, int tag, uint64_t mine)
{
    uint64_t *got = rmpi_xcalloc((size_t)nn, sizeof *got);
    rmpi_req_t **rq = rmpi_xcalloc((size_t)nn * 2, sizeof *rq);
    for (int j = 0; j < nn; j++)
        if (j != my) {
            rq[2 * j] = post(1, leader[j], tag, &got[j]);
            rq[2 * j + 1] = post(0, leader[j], tag, &mine);
        }
    int any = mine != 0;
    for (int j = 0; j < 2 * nn; j++)
        if (rq[j]) {
            rmpi_core_wait(rq[j]);
            rmpi_req_release(rq[j]);
        }
    for (int j = 0; j < nn; j++)
        any |= got[j] != 0;
    free(rq);
    free(got);
    return any;
}

/* My node's row: the smallest round trip (ns) to each other node's leader.
 *
 * A round trip that could split two nodes into two sites (at least RMPI_SITE_GAP times
 * RMPI_SITE_RTT_MIN) is believed only when the rounds agree on it: on a loaded host a ping
 * also holds the time until the peer leader is scheduled, which varies from round to round
 * (4 ranks and a CPU hog on 2 cores: every round of 5 above 400 us, and two pretend nodes
 * of one host made two sites, once in 12 runs), while a long link's rounds are within a few
 * percent of each other. While some leader sees such a round trip whose rounds spread by
 * more than a quarter, or whose minimum still fell by a tenth in the last batch, every
 * leader runs another batch of SITE_MORE rounds, at most SITE_BATCHES; whether to is
 * agreed by a flag every leader sends every other, so all run the same rounds. A job whose
 * long links are steady pays nothing more. */
#define SITE_MORE 4
#define SITE_BATCHES 4

/* The provider's round trip to node j's leader (0: none; rmpi_vc_rtt). */
static double kernel_rtt(const int *leader, int j, int my)
{
    rmpi_vc_t *vc = j != my && rmpi_vc_table ? rmpi_vc_table[leader[j]] : NULL;
    return vc ? rmpi_vc_rtt(vc) : 0;
}

static void measure(const int *leader, int nn, int my, double *row)
{
    double *lo = rmpi_xcalloc((size_t)nn * 3, sizeof *lo), *hi = lo + nn, *prev = lo + 2 * nn;
    double far = rmpi_knobs.SITE_RTT_MIN * 1e3 * rmpi_knobs.SITE_GAP;
    int rep = 0, batch = 0;
    for (;;) {
        int n = batch ? SITE_MORE : SITE_PROBES;
        memcpy(prev, row, (size_t)nn * sizeof *row);
        rounds(leader, nn, my, rep, rep + n, row, lo, hi);
        rep += n;
        batch++;
        uint64_t doubt = 0;
        for (int j = 0; j < nn; j++) {
            double k = kernel_rtt(leader, j, my); /* near by the provider's own measure: settled */
            if (j != my && !(k > 0 && k < far))
                doubt |= (uint64_t)rmpi_site_doubt(row[j], lo[j], hi[j], batch > 1 ? prev[j] : 0, far);
        }
        if (batch == SITE_BATCHES || !any_leader(leader, nn, my, 1 << 20 | batch, doubt))
            break;
    }
    rmpi_log(1, "site probe: %d rounds in %d batch%s", rep, batch, batch > 1 ? "es" : "");
    free(lo);
    /* The kernel's estimate (tcp: timed on the SYN and on data, not in our progress loop)
     * where the provider gives one: on a loaded host the pings also hold the time until
     * a rank is scheduled, which can make a LAN look far. */
    for (int j = 0; j < nn; j++) {
        double k = kernel_rtt(leader, j, my);
        if (k > 0 && (row[j] <= 0 || k < row[j]))
            row[j] = k;
    }
}

int rmpi_core_sites_probe(void)
{
    int nn = rmpi_topo_nnodes(), my = rmpi_topo_my_node(), me = rmpi_core_rank;
    int *leader = rmpi_xmalloc((size_t)nn * sizeof *leader);
    for (int j = 0; j < nn; j++)
        leader[j] = -1;
    for (int r = rmpi_core_size - 1; r >= 0; r--)
        leader[rmpi_topo_node_of(r)] = r;
    double *rtt = rmpi_xcalloc((size_t)nn * (size_t)nn, sizeof *rtt);
    char key[64], val[ROW_CHUNK * 13 + 1];
    int rc = 0;
    if (leader[my] == me) {
        measure(leader, nn, my, rtt + (size_t)my * (size_t)nn);
        /* My last pong may be held for a bundle (coalescing: the probe's own frames made
         * the link busy), and the fence below blocks without progress: sent now, or the
         * peer leader waits for it forever (seen at 10 ms with 4 ranks per host). */
        rmpi_core_coal_poll(1);
        /* Likewise a frame a provider queued after a refusal (ofi's pending queue: a pong
         * refused with -FI_EAGAIN while a channel switch was under way hung 1 run in 6 of
         * tests/mpi/chan switch over two pretend nodes): handed on before the fence, for
         * at most 2 s. */
        uint64_t until = rmpi_time_ns() + 2000000000ull;
        unsigned idle = 0;
        while (rmpi_net_queued() && rmpi_time_ns() < until)
            rmpi_core_wait_step(&idle);
        for (int c = 0; c * ROW_CHUNK < nn && !rc; c++) {
            size_t at = 0;
            for (int j = c * ROW_CHUNK; j < nn && j < (c + 1) * ROW_CHUNK; j++)
                at += (size_t)snprintf(val + at, sizeof val - at, "%s%.0f", at ? "," : "", rtt[(size_t)my * nn + j]);
            snprintf(key, sizeof key, "srtt-%d-%d", me, c);
            rc = rmpi_pmi_put(key, val);
        }
    }
    if (!rc)
        rc = rmpi_pmi_fence();
    for (int i = 0; i < nn && !rc; i++)
        for (int c = 0; c * ROW_CHUNK < nn && !rc; c++) {
            snprintf(key, sizeof key, "srtt-%d-%d", leader[i], c);
            if (rmpi_pmi_get(key, val, sizeof val))
                rmpi_fatal("the process manager has no round trips of node %d (rank %d) for RMPI_SITES=auto; "
                           "set RMPI_SITES to a map or to one.",
                           i, leader[i]);
            char *p = val;
            for (int j = c * ROW_CHUNK; j < nn && j < (c + 1) * ROW_CHUNK; j++) {
                char *end;
                rtt[(size_t)i * nn + j] = strtod(p, &end);
                p = *end == ',' ? end + 1 : end;
            }
        }
    if (!rc)
        rmpi_topo_sites_measured(rtt);
    free(rtt);
    free(leader);
    return rc;
}
