/* The site map from measured round trips (rt.h, "sites"; seed infiniband-wan 3.4): at
 * MPI_Init, when RMPI_SITES=auto and the job spans several nodes, the lowest rank of each
 * node pings the lowest rank of every other node, the rows of smallest round trips go
 * through the process manager (key srtt-<leader's rank>-<chunk>: the number after the
 * first '-' names the owner, as PMIx needs), and every rank clusters the same matrix. A job on one node
 * measures nothing. Cost: SITE_PROBES rounds of one ping per pair of nodes. */
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

/* My node's row: the smallest round trip (ns) to each other node's leader. Every pair
 * pings both ways at once; a ping is answered as soon as it is seen. */
static void measure(const int *leader, int nn, int my, double *row)
{
    rmpi_req_t **in = rmpi_xcalloc((size_t)nn * 4, sizeof *in), **back = in + nn, **out = in + 2 * nn;
    rmpi_req_t **sent = in + 3 * nn;
    uint64_t *t0 = rmpi_xcalloc((size_t)nn * 3, sizeof *t0), *ping = t0 + nn, *pong = t0 + 2 * nn;
    for (int rep = 0; rep < SITE_PROBES; rep++) {
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
                    if (rep > 0 && (row[j] <= 0 || rtt < row[j]))
                        row[j] = rtt;
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
    /* The kernel's estimate (tcp: timed on the SYN and on data, not in our progress loop)
     * where the provider gives one: on a loaded host the pings also hold the time until
     * a rank is scheduled, which can make a LAN look far. */
    for (int j = 0; j < nn; j++) {
        rmpi_vc_t *vc = j != my && rmpi_vc_table ? rmpi_vc_table[leader[j]] : NULL;
        double k = vc ? rmpi_vc_rtt(vc) : 0;
        if (k > 0 && (row[j] <= 0 || k < row[j]))
            row[j] = k;
    }
    free(in);
    free(t0);
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
