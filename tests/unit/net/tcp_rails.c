/*
 * TCP provider with several rails on one host: RMPI_TCP_IFACES=lo,<first non-loopback
 * interface> gives two rails (two interfaces, each with its own listener, connections,
 * registrations), forked ranks under the harness's PMI:
 *  - rails: names in interface-name order, symmetric (a frame sent on rail i arrives on the
 *    peer's rail i), 500 frames of random sizes per rail both ways with order and bytes
 *    checked, 16 MiB get and put on every rail at once (rkeys are per rail: a key of rail 1
 *    used on rail 0 fails with -EFAULT; a small put to a bad rkey fails with -EFAULT, since
 *    with several rails a put completes on the target's answer); a frame sent right after a
 *    16 MiB put arrives before the put's last 4 KiB (it passes the put's unsent rest);
 *  - streams: RMPI_TCP_STREAMS=2 -> four rails tcp:<if>#0/#1, symmetric, data on each;
 *  - kill: rail 1's socket shut underneath with a 16 MiB get and put outstanding on it, and
 *    a 4 KiB put that is all written but not yet acknowledged by the target -> all three
 *    complete with -ECONNRESET, their callbacks after on_peer_lost(rail 1), which is
 *    called once on each side; rail 0 goes on; rail 1 never reconnects, later ops on it
 *    complete with -ECONNRESET;
 *  - idle: RMPI_RAIL_TIMEOUT=0.3 and 1.5 s without traffic: nothing is reported;
 *  - busy peer: RMPI_RAIL_TIMEOUT=1.5, small socket buffers, a peer that does not call
 *    progress for 4 s while a put and a get to it wait: its kernel still answers, so no
 *    rail is declared lost and both complete with the right bytes;
 *  - routed: rank 0 lists lo, rank 1 its other interface with two streams: no subnet in
 *    common, so one routed pair; the address of rank 1's paired rail is served refused, so
 *    rank 0 reaches rank 1's other listener, which hands the socket to the paired rail.
 * Skipped (with a message) when the host has no up non-loopback IPv4 interface.
 */
#include "tcp_harness.h"

#include <ifaddrs.h>
#include <net/if.h>

#include "net/tcp/tcp.h"

static char eth[IFNAMSIZ];
static char knob_ifaces[64], knob_only_eth[64];

#define REGION (32u << 20) /* per rail: [0, 16 MiB) is read by the peer, the rest it writes */
#define HALF (16u << 20)
#define NFR 500

static void st64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static uint64_t ld64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
static void st32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static uint32_t ld32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint8_t pat(int rank, int rail, size_t i)
{
    return (uint8_t)(i * 131 + (i >> 13) + (size_t)rank * 7 + (size_t)rail * 29 + 1);
}

static int rail_index(rmpi_rail_t *rail)
{
    for (int i = 0; i < th_nrails; i++)
        if (th_rails[i] == rail)
            return i;
    th_fail("a callback named a rail that open() did not return");
}

/* ---- callbacks and received state ---- */
struct key {
    int have;
    uint64_t addr, rkey;
};
static struct key keys[RMPI_NET_MAX_RAILS];
static int names_ok[RMPI_NET_MAX_RAILS], ctl[256];
static uint32_t rx_seq[RMPI_NET_MAX_RAILS];
static uint8_t *region[RMPI_NET_MAX_RAILS];
static int puts_checked[RMPI_NET_MAX_RAILS], passed[RMPI_NET_MAX_RAILS];
static int lost_calls, lost_rail = -1, lost_peer = -1;
static char lost_why[256];

static void on_lost(rmpi_rail_t *rail, int peer, const char *why)
{
    lost_calls++;
    lost_rail = rail_index(rail);
    lost_peer = peer;
    snprintf(lost_why, sizeof lost_why, "%s", why);
}

static void on_lost_fatal(rmpi_rail_t *rail, int peer, const char *why)
{
    th_fail("unexpected on_peer_lost(%s, rank %d): %s", rail->hints.name, peer, why);
}

static void on_frame(rmpi_rail_t *rail, int peer, const void *frame, size_t len)
{
    int i = rail_index(rail);
    const uint8_t *f = frame;
    TH_CHECK(len >= 1, "empty frame");
    switch (f[0]) {
    case 'N': /* the sender's name of the rail it used: ours must be the same */
        TH_CHECK(len - 1 == strlen(rail->hints.name) && !memcmp(f + 1, rail->hints.name, len - 1),
                 "a frame sent on the peer's rail '%.*s' arrived on %s", (int)len - 1, (const char *)f + 1,
                 rail->hints.name);
        names_ok[i]++;
        break;
    case 'S': {
        TH_CHECK(len >= 5 && ld32(f + 1) == rx_seq[i], "%s: frame %u arrived, expected %u", rail->hints.name,
                 len >= 5 ? ld32(f + 1) : 0, rx_seq[i]);
        for (size_t k = 5; k < len; k++)
            TH_CHECK(f[k] == (uint8_t)(k * 7 + rx_seq[i] + (unsigned)i), "%s: frame %u byte %zu", rail->hints.name,
                     rx_seq[i], k);
        rx_seq[i]++;
        break;
    }
    case 'K':
        TH_CHECK(len == 17, "key frame");
        keys[i] = (struct key){1, ld64(f + 1), ld64(f + 9)};
        break;
    case 'P': /* the peer's put on this rail has completed: its data is in place */
        for (size_t k = 0; k < HALF; k++)
            TH_CHECK(region[i][HALF + k] == pat(th_rank, i, k), "%s: put byte %zu of rank %d", rail->hints.name, k,
                     peer);
        puts_checked[i]++;
        break;
    case 'Q': { /* sent right after the peer's 16 MiB put on this rail: ahead of its end */
        int landed = 1;
        for (size_t k = HALF - 4096; k < HALF; k++)
            landed &= region[i][HALF + k] == pat(th_rank, i, k);
        TH_CHECK(!landed, "%s: a frame sent after a 16 MiB put waited for all of it", rail->hints.name);
        passed[i]++;
        break;
    }
    default: ctl[f[0]]++; break;
    }
}

static void send_on(int rail, int peer, const void *buf, size_t len)
{
    struct iovec iov = {(void *)buf, len};
    int rc = rmpi_tcp_ops.send(th_rails[rail], peer, &iov, 1);
    TH_CHECK(rc == 0, "send on %s returned %d", th_rails[rail]->hints.name, rc);
}

static void ctl_send(int rail, int peer, char c) { send_on(rail, peer, &c, 1); }

struct top {
    rmpi_net_op_t op;
    int done, lost_seen;
};
static void op_cb(rmpi_net_op_t *op)
{
    struct top *t = (struct top *)op;
    t->done++;
    t->lost_seen = lost_calls;
}

/* Register a region on every rail (the pattern in its first half) and send its key on it. */
static void publish_regions(int peer)
{
    for (int i = 0; i < th_nrails; i++) {
        region[i] = malloc(REGION);
        TH_CHECK(region[i] != NULL, "out of memory");
        for (size_t k = 0; k < HALF; k++)
            region[i][k] = pat(th_rank, i, k);
        memset(region[i] + HALF, 0, HALF);
        rmpi_mr_t mr;
        TH_CHECK(rmpi_tcp_ops.mr_reg(th_rails[i], region[i], REGION, &mr) == 0, "mr_reg");
        uint8_t f[17] = {'K'};
        st64(f + 1, (uint64_t)(uintptr_t)region[i]);
        st64(f + 9, mr.rkey);
        send_on(i, peer, f, sizeof f);
    }
}

static void check_names(int peer)
{
    for (int i = 0; i < th_nrails; i++) {
        char f[80];
        int n = snprintf(f, sizeof f, "N%s", th_rails[i]->hints.name);
        send_on(i, peer, f, (size_t)n);
    }
    for (int i = 0; i < th_nrails; i++)
        TH_WAIT(names_ok[i] == 1, 20, "the peer's rail names");
}

/* ---------------- rails and streams ---------------- */
static void rails_body(void)
{
    th_open(on_frame, on_lost_fatal);
    int peer = 1 - th_rank;
    check_names(peer);
    if (th_nrails == 2)
        TH_CHECK(!strcmp(th_rails[strcmp(eth, "lo") < 0 ? 1 : 0]->hints.name, "tcp:lo"), "rail order");

    static uint8_t buf[64 * 1024 + 256];
    uint64_t rng = 0x1234567ull + (uint64_t)th_rank;
    for (uint32_t k = 0; k < NFR; k++)
        for (int i = 0; i < th_nrails; i++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            size_t len = 5 + (size_t)((rng >> 33) % (sizeof buf - 5));
            buf[0] = 'S';
            st32(buf + 1, k);
            for (size_t j = 5; j < len; j++)
                buf[j] = (uint8_t)(j * 7 + k + (unsigned)i);
            send_on(i, peer, buf, len);
            if (k % 16 == 0)
                th_progress();
        }
    for (int i = 0; i < th_nrails; i++)
        TH_WAIT(rx_seq[i] == NFR, 60, "every frame on every rail");

    publish_regions(peer);
    for (int i = 0; i < th_nrails; i++)
        TH_WAIT(keys[i].have, 20, "the peer's key on every rail");
    /* Keys are per rail: rail 1's key names nothing valid on rail 0. */
    if (th_nrails > 1) {
        static uint8_t small[64];
        struct top g = {.op.complete = op_cb};
        TH_CHECK(rmpi_tcp_ops.get(th_rails[0], peer, small, sizeof small, keys[1].addr, keys[1].rkey, &g.op) == 0,
                 "get");
        TH_WAIT(g.done, 20, "the get with another rail's key");
        TH_CHECK(g.op.status == -EFAULT, "a key of rail 1 used on rail 0: status %d", g.op.status);
    }
    /* With several rails a put completes on the target's answer, so a small refused one
     * fails with -EFAULT (alone on its rail it would already have completed). */
    for (int i = 0; i < th_nrails; i++) {
        static uint8_t small[1024];
        struct top b = {.op.complete = op_cb};
        TH_CHECK(rmpi_tcp_ops.put(th_rails[i], peer, small, sizeof small, keys[i].addr + HALF, keys[i].rkey + 1,
                                  &b.op) == 0,
                 "put");
        TH_WAIT(b.done, 20, "a refused put");
        TH_CHECK(b.op.status == -EFAULT, "put with a bad rkey on %s: status %d", th_rails[i]->hints.name, b.op.status);
    }
    /* A get and a put of 16 MiB on every rail at once, both directions. */
    uint8_t *dst[RMPI_NET_MAX_RAILS];
    struct top g[RMPI_NET_MAX_RAILS], p[RMPI_NET_MAX_RAILS];
    memset(g, 0, sizeof g);
    memset(p, 0, sizeof p);
    for (int i = 0; i < th_nrails; i++) {
        dst[i] = malloc(HALF);
        TH_CHECK(dst[i] != NULL, "out of memory");
        g[i].op.complete = op_cb;
        TH_CHECK(rmpi_tcp_ops.get(th_rails[i], peer, dst[i], HALF, keys[i].addr, keys[i].rkey, &g[i].op) == 0, "get");
    }
    for (int i = 0; i < th_nrails; i++) {
        TH_WAIT(g[i].done, 60, "the 16 MiB gets");
        TH_CHECK(g[i].op.status == 0 && g[i].op.rail == th_rails[i], "get on %s: status %d", th_rails[i]->hints.name,
                 g[i].op.status);
        for (size_t k = 0; k < HALF; k++)
            TH_CHECK(dst[i][k] == pat(peer, i, k), "%s: get byte %zu", th_rails[i]->hints.name, k);
        /* Write back what the peer expects to find in its second half. */
        for (size_t k = 0; k < HALF; k++)
            dst[i][k] = pat(peer, i, k);
        p[i].op.complete = op_cb;
        TH_CHECK(rmpi_tcp_ops.put(th_rails[i], peer, dst[i], HALF, keys[i].addr + HALF, keys[i].rkey, &p[i].op) == 0,
                 "put");
        /* A frame sent now passes the put's unsent rest (it completes on PUT_ACK): the
         * put wrote at most the sockets' buffers, so its last 4 KiB land after the frame. */
        ctl_send(i, peer, 'Q');
    }
    for (int i = 0; i < th_nrails; i++) {
        TH_WAIT(p[i].done, 60, "the 16 MiB puts");
        TH_CHECK(p[i].op.status == 0, "put on %s: status %d", th_rails[i]->hints.name, p[i].op.status);
        ctl_send(i, peer, 'P');
    }
    for (int i = 0; i < th_nrails; i++)
        TH_WAIT(puts_checked[i] == 1 && passed[i] == 1, 60, "the peer's puts on every rail");
    ctl_send(0, peer, 'E');
    TH_WAIT(ctl['E'] == 1, 20, "the end");
    th_finish();
}

/* ---------------- kill: a rail's socket shut underneath ---------------- */
static void progress_rail0_until(int *flag, double secs, const char *what)
{
    double end = th_now() + secs;
    while (!*flag) {
        rmpi_tcp_ops.progress(th_rails[0]);
        if (th_now() > end)
            th_fail("timed out waiting for %s", what);
    }
}

static void kill_body(void)
{
    th_open(on_frame, on_lost);
    int peer = 1 - th_rank;
    check_names(peer);
    if (th_rank == 1) {
        publish_regions(peer);
        TH_WAIT(ctl['A'] == 1, 20, "rank 0's keys ack");
        /* From now on rail 1 is not served: rank 0's ops on it stay outstanding. */
        ctl_send(0, peer, 'R');
        progress_rail0_until(&ctl['X'], 30, "rank 0 to cut rail 1");
        TH_WAIT(lost_calls == 1, 20, "on_peer_lost for rail 1");
        TH_CHECK(lost_rail == 1 && lost_peer == 0 && !strcmp(lost_why, "connection reset by peer"),
                 "on_peer_lost(rail %d, rank %d, \"%s\")", lost_rail, lost_peer, lost_why);
        struct iovec iov = {"z", 1};
        TH_CHECK(rmpi_tcp_ops.send(th_rails[1], peer, &iov, 1) != 0, "send on a lost rail succeeded");
        ctl_send(0, peer, 'Y');
        TH_WAIT(ctl['Z'] == 1, 30, "rank 0's end");
        TH_CHECK(lost_calls == 1, "on_peer_lost called %d times", lost_calls);
        th_finish();
    }
    for (int i = 0; i < th_nrails; i++)
        TH_WAIT(keys[i].have, 20, "rank 1's keys");
    ctl_send(0, peer, 'A');
    TH_WAIT(ctl['R'] == 1, 20, "rank 1 to stop serving rail 1");
    static uint8_t dst[HALF], src[HALF];
    struct top g = {.op.complete = op_cb}, p = {.op.complete = op_cb}, s = {.op.complete = op_cb};
    TH_CHECK(rmpi_tcp_ops.put(th_rails[1], peer, src, 4096, keys[1].addr + HALF, keys[1].rkey, &s.op) == 0, "put");
    TH_CHECK(rmpi_tcp_ops.get(th_rails[1], peer, dst, HALF, keys[1].addr, keys[1].rkey, &g.op) == 0, "get");
    TH_CHECK(rmpi_tcp_ops.put(th_rails[1], peer, src, HALF, keys[1].addr + HALF, keys[1].rkey, &p.op) == 0, "put");
    double until = th_now() + 0.2;
    while (th_now() < until)
        th_progress();
    TH_CHECK(!g.done && !p.done && !s.done, "the ops on rail 1 finished before the cut (get %d, puts %d %d)", g.done,
             p.done, s.done);
    TH_CHECK(rmpi_list_empty(&rmpi_tcp_rail_of(th_rails[1])->peers[peer]->puts) == 0,
             "the small put is not waiting for its acknowledgement");
    /* The test hook: shut the socket under the provider, as a reset would. */
    rmpi_tcp_rail_t *r1 = rmpi_tcp_rail_of(th_rails[1]);
    TH_CHECK(r1->peers[peer] && r1->peers[peer]->conn, "rail 1 has no connection to cut");
    shutdown(r1->peers[peer]->conn->fd, SHUT_RDWR);
    TH_WAIT(lost_calls == 1 && g.done && p.done && s.done, 20, "on_peer_lost and the ops' completions");
    TH_CHECK(lost_rail == 1 && lost_peer == 1 && !strcmp(lost_why, "connection reset by peer"),
             "on_peer_lost(rail %d, rank %d, \"%s\")", lost_rail, lost_peer, lost_why);
    TH_CHECK(g.op.status == -ECONNRESET && p.op.status == -ECONNRESET && s.op.status == -ECONNRESET,
             "statuses: get %d, puts %d %d", g.op.status, p.op.status, s.op.status);
    TH_CHECK(g.lost_seen == 1 && p.lost_seen == 1 && s.lost_seen == 1, "an op's callback ran before on_peer_lost");
    ctl_send(0, peer, 'X');
    /* Rail 0 goes on. */
    TH_WAIT(ctl['Y'] == 1, 20, "rank 1's frame on rail 0");
    struct top g0 = {.op.complete = op_cb};
    TH_CHECK(rmpi_tcp_ops.get(th_rails[0], peer, dst, HALF, keys[0].addr, keys[0].rkey, &g0.op) == 0, "get");
    TH_WAIT(g0.done, 30, "a 16 MiB get on rail 0");
    TH_CHECK(g0.op.status == 0, "get on rail 0 after rail 1 failed: status %d", g0.op.status);
    for (size_t k = 0; k < HALF; k++)
        TH_CHECK(dst[k] == pat(peer, 0, k), "rail 0 get byte %zu", k);
    /* Rail 1 stays down: ops on it fail through their callbacks, nothing reconnects. */
    struct top g1 = {.op.complete = op_cb};
    TH_CHECK(rmpi_tcp_ops.get(th_rails[1], peer, dst, 8, keys[1].addr, keys[1].rkey, &g1.op) == 0, "get");
    TH_CHECK(!g1.done, "a get's callback ran inside get()");
    struct iovec iov = {"z", 1};
    TH_CHECK(rmpi_tcp_ops.send(th_rails[1], peer, &iov, 1) != 0, "send on a lost rail succeeded");
    until = th_now() + 0.3;
    while (th_now() < until)
        th_progress();
    TH_CHECK(g1.done == 1 && g1.op.status == -ECONNRESET, "get on the lost rail: done %d status %d", g1.done,
             g1.op.status);
    TH_CHECK(lost_calls == 1, "on_peer_lost called %d times", lost_calls);
    TH_CHECK(r1->peers[peer]->state == RMPI_TCP_PEER_LOST && !r1->peers[peer]->conn && !r1->peers[peer]->pending &&
                 r1->nconn == 0,
             "rail 1 reconnected");
    ctl_send(0, peer, 'Z');
    th_finish();
}

/* ---------------- idle and busy peers under RMPI_RAIL_TIMEOUT ---------------- */
static void idle_body(void)
{
    th_open(on_frame, on_lost_fatal);
    int peer = 1 - th_rank;
    check_names(peer);
    double until = th_now() + 1.5;
    while (th_now() < until)
        th_progress();
    for (int i = 0; i < th_nrails; i++)
        ctl_send(i, peer, 'I');
    TH_WAIT(ctl['I'] == th_nrails, 20, "frames after the idle time");
    ctl_send(0, peer, 'E');
    TH_WAIT(ctl['E'] == 1, 20, "the end");
    th_finish();
}

static void busy_body(void)
{
    th_open(on_frame, on_lost_fatal);
    int peer = 1 - th_rank;
    check_names(peer);
    if (th_rank == 1) {
        publish_regions(peer);
        TH_WAIT(ctl['A'] == 1, 20, "rank 0's go");
        usleep(4 * 1000 * 1000); /* no progress: rank 0's put and get wait */
        TH_WAIT(puts_checked[0] == 1, 60, "rank 0's put");
        ctl_send(0, peer, 'E');
        TH_WAIT(ctl['F'] == 1, 20, "the end");
        th_finish();
    }
    for (int i = 0; i < th_nrails; i++)
        TH_WAIT(keys[i].have, 20, "rank 1's keys");
    static uint8_t dst[HALF], src[HALF];
    for (size_t k = 0; k < HALF; k++)
        src[k] = pat(peer, 0, k);
    ctl_send(0, peer, 'A');
    double t0 = th_now();
    struct top p = {.op.complete = op_cb}, g = {.op.complete = op_cb};
    TH_CHECK(rmpi_tcp_ops.put(th_rails[0], peer, src, HALF, keys[0].addr + HALF, keys[0].rkey, &p.op) == 0, "put");
    TH_CHECK(rmpi_tcp_ops.get(th_rails[1], peer, dst, HALF, keys[1].addr, keys[1].rkey, &g.op) == 0, "get");
    TH_WAIT(p.done && g.done, 60, "the put and the get to a busy peer");
    double took = th_now() - t0;
    TH_CHECK(took > 3, "the peer did not keep the ops waiting (%.2f s)", took);
    TH_CHECK(p.op.status == 0 && g.op.status == 0, "statuses: put %d, get %d", p.op.status, g.op.status);
    for (size_t k = 0; k < HALF; k++)
        TH_CHECK(dst[k] == pat(peer, 1, k), "get byte %zu", k);
    ctl_send(0, peer, 'P');
    TH_WAIT(ctl['E'] == 1, 60, "rank 1's check of the put");
    ctl_send(0, peer, 'F');
    th_finish();
}

/* ---------------- routed pair and the hand-over of an accepted socket ---------------- */
/* Rank 0 is told rank 1's first rail listens on a refused port. */
static void refuse_first(int asker, const char *key, char *val, size_t len)
{
    if (asker != 0 || strcmp(key, "tcp-1") != 0)
        return;
    char *colon = strchr(val, ':'), *comma = colon ? strchr(colon, ',') : NULL;
    if (!colon || !comma)
        return;
    char rest[1024];
    snprintf(rest, sizeof rest, "%s", comma);
    snprintf(colon, len - (size_t)(colon - val), ":1%s", rest);
}

static void routed_body(void)
{
    th_want_rails = th_rank == 0 ? 1 : 2;
    th_open_nofence(on_frame, on_lost_fatal);
    TH_CHECK(rmpi_pmi_fence() == 0, "fence");
    int peer = 1 - th_rank;
    TH_CHECK(rmpi_tcp_ops.reaches(th_rails[0], peer), "rail 0 does not reach the peer");
    if (th_rank == 1) {
        TH_CHECK(!rmpi_tcp_ops.reaches(th_rails[1], peer), "a second routed rail");
        TH_WAIT(ctl['H'] == 1, 20, "rank 0's frame");
        rmpi_tcp_rail_t *r0 = rmpi_tcp_rail_of(th_rails[0]), *r1 = rmpi_tcp_rail_of(th_rails[1]);
        TH_CHECK(r0->nestab == 1 && r1->nestab == 0 && r1->nconn == 0,
                 "the socket was not handed to the paired rail (%d / %d established)", r0->nestab, r1->nestab);
        ctl_send(0, peer, 'H');
    } else {
        ctl_send(0, peer, 'H');
        TH_WAIT(ctl['H'] == 1, 20, "rank 1's answer");
    }
    th_finish();
}

static int find_eth(void)
{
    struct ifaddrs *all;
    if (getifaddrs(&all) != 0)
        return 0;
    for (struct ifaddrs *ifa = all; ifa; ifa = ifa->ifa_next)
        if (ifa->ifa_addr && ifa->ifa_addr->sa_family == AF_INET && (ifa->ifa_flags & IFF_UP) &&
            (ifa->ifa_flags & IFF_RUNNING) && !(ifa->ifa_flags & IFF_LOOPBACK) && strlen(ifa->ifa_name) < 16) {
            snprintf(eth, sizeof eth, "%s", ifa->ifa_name);
            break;
        }
    freeifaddrs(all);
    return eth[0] != 0;
}

int main(void)
{
    if (!find_eth()) {
        printf("tcp_rails: skipped (no up non-loopback IPv4 interface for a second rail)\n");
        return 0;
    }
    snprintf(knob_ifaces, sizeof knob_ifaces, "RMPI_TCP_IFACES=lo,%s", eth);
    snprintf(knob_only_eth, sizeof knob_only_eth, "@1:RMPI_TCP_IFACES=%s", eth);
    int bad = 0;
    th_want_rails = 2;
    const char *two[] = {knob_ifaces, NULL};
    bad |= th_run("rails/n2", 2, two, 0, rails_body);
    bad |= th_run("kill/n2", 2, two, 0, kill_body);
    const char *idle[] = {knob_ifaces, "RMPI_RAIL_TIMEOUT=0.3", NULL};
    bad |= th_run("idle/n2", 2, idle, 0, idle_body);
    const char *busy[] = {knob_ifaces, "RMPI_RAIL_TIMEOUT=1.5", "RMPI_TCP_SNDBUF=64k", NULL};
    bad |= th_run("busy-peer/n2", 2, busy, 0, busy_body);
    th_want_rails = 4;
    const char *streams[] = {knob_ifaces, "RMPI_TCP_STREAMS=2", NULL};
    bad |= th_run("streams/n2", 2, streams, 0, rails_body);
    const char *routed[] = {"@0:RMPI_TCP_IFACES=lo", knob_only_eth, "@1:RMPI_TCP_STREAMS=2", NULL};
    th_card_hook = refuse_first;
    bad |= th_run("routed/n2", 2, routed, 0, routed_body);
    th_card_hook = NULL;
    return bad;
}
