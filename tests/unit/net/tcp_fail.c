/*
 * TCP provider: connection life cycle and failures, forked ranks under the harness's PMI:
 *  - race: 4 ranks send their first frame to every other rank at the same moment (every
 *    pair connects both ways at once), repeated; each frame arrives exactly once.
 *  - goodbye: a rank that closes is not reported lost; sending to it afterwards fails.
 *  - kill: a peer killed with SIGKILL while a get to it is outstanding -> on_peer_lost
 *    ("connection reset by peer"), the get completes with -ECONNRESET, later sends fail,
 *    a later put completes with -ECONNRESET through its callback.
 *  - refused connect: a peer whose listener is gone -> on_peer_lost after
 *    RMPI_CONNECT_TIMEOUT ("could not connect ...").
 *  - small put to a bad rkey (one rail: a put completes when written): it has left before
 *    the refusal returns, so the connection ends with a reason naming the refused write
 *    (the peer sees a reset). With several rails it completes with -EFAULT (tcp_rails.c).
 */
#include "tcp_harness.h"

static int lost_peer = -1, lost_calls, frames_from[TH_MAX_RANKS];
static char lost_why[256];
static uint64_t key_addr, key_rkey;

static void on_lost(rmpi_rail_t *rail, int peer, const char *why)
{
    lost_calls++;
    lost_peer = peer;
    snprintf(lost_why, sizeof lost_why, "%s", why);
}

static void on_lost_fatal(rmpi_rail_t *rail, int peer, const char *why)
{
    th_fail("unexpected on_peer_lost(rank %d): %s", peer, why);
}

static void on_frame(rmpi_rail_t *rail, int peer, const void *frame, size_t len)
{
    const uint8_t *f = frame;
    if (len == 17 && f[0] == 'K') {
        memcpy(&key_addr, f + 1, 8);
        memcpy(&key_rkey, f + 9, 8);
    }
    frames_from[peer]++;
}

static int send1(int peer, const void *buf, size_t len)
{
    struct iovec iov = {(void *)buf, len};
    return rmpi_tcp_ops.send(th_rail, peer, &iov, 1);
}

struct top {
    rmpi_net_op_t op;
    int done;
};
static void op_cb(rmpi_net_op_t *op) { ((struct top *)op)->done++; }

static void race_body(void)
{
    th_open(on_frame, on_lost_fatal);
    char msg[64];
    snprintf(msg, sizeof msg, "hello from %d", th_rank);
    for (int p = 0; p < th_size; p++)
        if (p != th_rank)
            TH_CHECK(send1(p, msg, strlen(msg)) == 0, "send");
    for (int p = 0; p < th_size; p++)
        if (p != th_rank)
            TH_WAIT(frames_from[p] >= 1, 20, "the first frame of every peer");
    /* Everyone got everything before anyone closes: a second round proves the links. */
    for (int p = 0; p < th_size; p++)
        if (p != th_rank)
            TH_CHECK(send1(p, msg, 1) == 0, "send");
    for (int p = 0; p < th_size; p++)
        if (p != th_rank)
            TH_WAIT(frames_from[p] >= 2, 20, "the second frame of every peer");
    double until = th_now() + 0.05;
    while (th_now() < until)
        rmpi_tcp_ops.progress(th_rail);
    for (int p = 0; p < th_size; p++)
        TH_CHECK(p == th_rank || frames_from[p] == 2, "%d frames from %d, expected 2", frames_from[p], p);
    th_finish();
}

static void goodbye_body(void)
{
    th_open(on_frame, on_lost);
    int peer = 1 - th_rank;
    TH_CHECK(send1(peer, "x", 1) == 0, "send");
    TH_WAIT(frames_from[peer] == 1, 20, "a frame");
    if (th_rank == 0)
        th_finish(); /* orderly close while rank 1 still runs */
    double until = th_now() + 0.5;
    while (th_now() < until)
        rmpi_tcp_ops.progress(th_rail);
    TH_CHECK(lost_calls == 0, "a peer that closed was reported lost: %s", lost_why);
    TH_CHECK(send1(peer, "y", 1) != 0, "send to a closed peer succeeded");
    th_finish();
}

static void kill_body(void)
{
    th_open(on_frame, on_lost);
    static char buf[1 << 20];
    if (th_rank == 1) {
        rmpi_mr_t mr;
        TH_CHECK(rmpi_tcp_ops.mr_reg(th_rail, buf, sizeof buf, &mr) == 0, "mr_reg");
        uint8_t f[17] = {'K'};
        uint64_t a = (uint64_t)(uintptr_t)buf;
        memcpy(f + 1, &a, 8);
        memcpy(f + 9, &mr.rkey, 8);
        TH_CHECK(send1(0, f, sizeof f) == 0, "send");
        TH_WAIT(frames_from[0] == 1, 20, "rank 0's go-ahead");
        /* Stop serving, and say so (a small frame on an idle connection is written at once):
         * rank 0 asks for its read only then, so the request stays unanswered until we die.
         * A read posted before this could be answered whole by the wait's own progress. */
        TH_CHECK(send1(0, "s", 1) == 0, "send");
        usleep(300 * 1000);
        raise(SIGKILL);
    }
    TH_WAIT(frames_from[1] == 1, 20, "rank 1's key");
    TH_CHECK(send1(1, "go", 2) == 0, "send");
    TH_WAIT(frames_from[1] == 2, 20, "rank 1's word that it stopped serving");
    static char dst[1 << 20];
    struct top g = {.op.complete = op_cb};
    TH_CHECK(rmpi_tcp_ops.get(th_rail, 1, dst, sizeof dst, key_addr, key_rkey, &g.op) == 0, "get");
    TH_WAIT(lost_calls == 1, 20, "on_peer_lost after the peer was killed");
    TH_CHECK(lost_peer == 1 && strcmp(lost_why, "connection reset by peer") == 0, "on_peer_lost(%d, \"%s\")", lost_peer,
             lost_why);
    TH_WAIT(g.done == 1, 5, "the outstanding get to fail");
    TH_CHECK(g.op.status == -ECONNRESET, "get to a dead peer: status %d", g.op.status);
    TH_CHECK(send1(1, "z", 1) != 0, "send to a lost peer succeeded");
    struct top p2 = {.op.complete = op_cb};
    TH_CHECK(rmpi_tcp_ops.put(th_rail, 1, dst, 8, key_addr, key_rkey, &p2.op) == 0, "put to a lost peer");
    TH_CHECK(p2.done == 0, "a put's callback ran inside put()");
    TH_WAIT(p2.done == 1, 5, "the put to a lost peer to complete");
    TH_CHECK(p2.op.status == -ECONNRESET, "put to a lost peer: status %d", p2.op.status);
    double until = th_now() + 0.1;
    while (th_now() < until)
        rmpi_tcp_ops.progress(th_rail);
    TH_CHECK(lost_calls == 1, "on_peer_lost called %d times", lost_calls);
    th_finish();
}

static void refused_body(void)
{
    th_open_nofence(on_frame, on_lost);
    if (th_rank == 1) {
        /* Published a card, then went away before anyone connected. */
        rmpi_tcp_ops.close(th_rail);
        TH_CHECK(rmpi_pmi_fence() == 0, "fence");
        rmpi_pmi_finalize();
        _exit(0);
    }
    TH_CHECK(rmpi_pmi_fence() == 0, "fence");
    double t0 = th_now();
    TH_CHECK(send1(1, "hello?", 6) == 0, "send is queued while connecting");
    TH_WAIT(lost_calls == 1, 20, "on_peer_lost for a peer that refuses connections");
    double took = th_now() - t0;
    TH_CHECK(lost_peer == 1 && strstr(lost_why, "could not connect to rank 1") &&
                 strstr(lost_why, "RMPI_CONNECT_TIMEOUT"),
             "on_peer_lost(%d, \"%s\")", lost_peer, lost_why);
    TH_CHECK(took > 0.9 && took < 10, "gave up after %.2f s with RMPI_CONNECT_TIMEOUT=1", took);
    th_finish();
}

static void badput_body(void)
{
    th_open(on_frame, on_lost);
    static char buf[4096];
    if (th_rank == 1) {
        rmpi_mr_t mr;
        TH_CHECK(rmpi_tcp_ops.mr_reg(th_rail, buf, sizeof buf, &mr) == 0, "mr_reg");
        uint8_t f[17] = {'K'};
        uint64_t a = (uint64_t)(uintptr_t)buf;
        memcpy(f + 1, &a, 8);
        memcpy(f + 9, &mr.rkey, 8);
        TH_CHECK(send1(0, f, sizeof f) == 0, "send");
        TH_WAIT(lost_calls == 1, 20, "the initiator to drop the connection");
        TH_CHECK(lost_peer == 0 && strcmp(lost_why, "connection reset by peer") == 0, "on_peer_lost(%d, \"%s\")",
                 lost_peer, lost_why);
        th_finish();
    }
    TH_WAIT(frames_from[1] == 1, 20, "rank 1's key");
    struct top pu = {.op.complete = op_cb};
    TH_CHECK(rmpi_tcp_ops.put(th_rail, 1, buf, 1024, key_addr, key_rkey + 1, &pu.op) == 0, "put");
    TH_WAIT(pu.done == 1, 20, "the put to complete");
    if (pu.op.status == 0) {
        TH_WAIT(lost_calls == 1, 20, "on_peer_lost for the refused write");
        TH_CHECK(lost_peer == 1 && strstr(lost_why, "refused an emulated RDMA write"), "on_peer_lost(%d, \"%s\")",
                 lost_peer, lost_why);
    } else {
        TH_CHECK(pu.op.status == -EFAULT, "put status %d", pu.op.status);
        TH_CHECK(send1(1, "bye", 3) == 0, "send");
    }
    th_finish();
}

int main(void)
{
    int bad = 0;
    const char *none[] = {NULL};
    for (int i = 0; i < 10 && !bad; i++)
        bad |= th_run("race/n4", 4, none, 0, race_body);
    bad |= th_run("race/n2", 2, none, 0, race_body);
    bad |= th_run("goodbye/n2", 2, none, 0, goodbye_body);
    bad |= th_run("kill/n2", 2, none, 1u << 1, kill_body);
    const char *t1[] = {"RMPI_CONNECT_TIMEOUT=1", NULL};
    bad |= th_run("refused/n2", 2, t1, 0, refused_body);
    bad |= th_run("badput/n2", 2, none, 0, badput_body);
    return bad;
}
