/*
 * TCP provider: dynamic peers (net.h card/peer_add), two forked processes that play two
 * different one-process jobs (world tags 100 and 101, rank 0 of size 1 each), opened late
 * (no PMI card). Each gives the other its card through the harness's PMI, adds it as peer
 * 1 and streams frames to it at once (both connect at the same time: the race rule by
 * (job, rank)); in "later" the process of job 101 adds its peer only after a pause, so the
 * other's HELLO is answered "later" and retried; "smallbuf" is "later" with 4 KiB socket
 * buffers. Every frame arrives once and in order. In "wrongkey" the two were given
 * different keys (what a stranger that knows a card but not the key looks like): no frame
 * is delivered and both count refused connections.
 */
#include "tcp_harness.h"

#define NFRAMES 3000

static int got, bad_order;

static void on_frame(rmpi_rail_t *rail, int peer, const void *frame, size_t len)
{
    int v;
    if (peer != 1 || len < sizeof v) {
        bad_order++;
        return;
    }
    memcpy(&v, frame, sizeof v);
    bad_order += v != got;
    for (size_t i = sizeof v; i < len; i++)
        bad_order += ((const unsigned char *)frame)[i] != (unsigned char)(v + i);
    got++;
}

static int wrong_key;
static void on_lost(rmpi_rail_t *rail, int peer, const char *why)
{
    if (!wrong_key)
        th_fail("peer %d lost: %s", peer, why);
}

static void dyn_body(int later)
{
    th_rt_init();
    static rmpi_net_env_t env;
    env.rank = 0;
    env.size = 1;
    env.jobid = th_rank ? "job-101" : "job-100";
    env.world = 100u + (unsigned)th_rank;
    env.late = 1;
    env.on_frame = on_frame;
    env.on_peer_lost = on_lost;
    th_nrails = rmpi_tcp_ops.open(&env, th_rails, RMPI_NET_MAX_RAILS);
    TH_CHECK(th_nrails >= 1, "open returned %d rails", th_nrails);
    th_rail = th_rails[0];
    char card[1024], key[32], other[1024];
    TH_CHECK(rmpi_tcp_ops.card(th_rail, card, sizeof card) > 0, "card");
    snprintf(key, sizeof key, "dyn-%d", th_rank);
    TH_CHECK(rmpi_pmi_put(key, card) == 0 && rmpi_pmi_fence() == 0, "put/fence");
    snprintf(key, sizeof key, "dyn-%d", !th_rank);
    TH_CHECK(rmpi_pmi_get(key, other, sizeof other) == 0, "get of the other card");
    TH_CHECK(!rmpi_tcp_ops.reaches(th_rail, 1), "reaches a peer not added yet");
    if (later && th_rank == 1) {
        double end = th_now() + 0.3;
        while (th_now() < end)
            th_progress(); /* the other's HELLOs arrive and are answered "later" */
    }
    rmpi_net_id_t id = {100u + (unsigned)!th_rank, 0};
    uint8_t link_key[RMPI_AUTH_KEY_BYTES];
    memset(link_key, 0x5a, sizeof link_key);
    if (wrong_key && th_rank == 1)
        link_key[7] ^= 1;
    TH_CHECK(rmpi_tcp_ops.peer_add(th_rail, 1, &id, 1, other, link_key) == 0, "peer_add");
    TH_CHECK(rmpi_tcp_ops.reaches(th_rail, 1), "does not reach the added peer");
    unsigned char f[300];
    for (int i = 0; i < NFRAMES; i++) {
        size_t len = sizeof(int) + (size_t)(i * 7919) % (sizeof f - sizeof(int));
        memcpy(f, &i, sizeof i);
        for (size_t k = sizeof i; k < len; k++)
            f[k] = (unsigned char)(i + k);
        struct iovec iov = {f, len};
        TH_CHECK(rmpi_tcp_ops.send(th_rail, 1, &iov, 1) == 0, "send %d", i);
        if (i % 64 == 0)
            th_progress();
    }
    if (wrong_key) {
        double end = th_now() + 1.0;
        while (th_now() < end)
            th_progress();
        TH_CHECK(got == 0, "%d frames delivered from a process with another key", got);
        TH_CHECK(rmpi_net_sec_stats.refused > 0, "no connection refused");
        TH_CHECK(rmpi_pmi_fence() == 0, "fence");
        th_finish();
    }
    TH_WAIT(got == NFRAMES, 30, "every frame of the other job");
    TH_CHECK(bad_order == 0, "%d frames out of order or damaged", bad_order);
    /* The fence blocks without progress: frames still queued here (the socket's buffer was
     * full) would never leave, and the other process would wait for them. "later" failed so
     * about once in 13 runs beside a CI run's load: the late process had all of the other's
     * frames before its own had left. */
    TH_WAIT(rmpi_tcp_ops.backlog(th_rail, 1) == 0, 30, "our frames to leave");
    TH_CHECK(rmpi_pmi_fence() == 0, "fence");
    th_finish();
}

static void now_body(void) { dyn_body(0); }
static void later_body(void) { dyn_body(1); }
static void wrongkey_body(void)
{
    wrong_key = 1;
    dyn_body(0);
}

int main(void)
{
    int bad = 0;
    const char *none[] = {NULL};
    /* The connection log (each attempt, race and LATER answer) goes with the output, so a
     * failure shows how the two processes tried to meet (ctest shows it only when the test
     * fails). */
    setenv("RMPI_DEBUG", "2", 0);
    (void)th_open; /* the harness's world-peer opening is not used here */
    for (int i = 0; i < 5 && !bad; i++)
        bad |= th_run("dyn/race", 2, none, 0, now_body);
    bad |= th_run("dyn/later", 2, none, 0, later_body);
    /* Socket buffers of 4 KiB (RMPI_TCP_SNDBUF): most frames still wait in each process's
     * queue when the other's have all arrived, so a fence before they left hangs (without
     * the wait for our frames this failed every time). */
    setenv("RMPI_TCP_SNDBUF", "4096", 1);
    bad |= th_run("dyn/smallbuf", 2, none, 0, later_body);
    unsetenv("RMPI_TCP_SNDBUF");
    bad |= th_run("dyn/wrongkey", 2, none, 0, wrongkey_body);
    return bad;
}
