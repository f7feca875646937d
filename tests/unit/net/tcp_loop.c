/*
 * TCP provider over loopback (and over the first non-loopback interface when there is one),
 * 2 and 3 forked ranks under the harness's PMI server:
 *  - stream: thousands of frames of random sizes (0 .. max_frame) between every pair, both
 *    ways at once, the first burst sent before any progress (connect race: every rank
 *    connects to every other at the same time); order and every byte checked.
 *  - rdma: 16 MiB get and put with byte checks, several gets in flight, zero-length ops,
 *    put data in place before the frame sent after it, bad rkey / out of bounds /
 *    deregistered region -> -EFAULT, a put much larger than the socket buffers to a bad
 *    rkey -> -EFAULT (a small one is in tcp_fail.c: it ends the connection).
 *  - mixed: hundreds of small puts and gets (0 .. 6 KiB) between small frames, so their
 *    payloads arrive whole or in part inside a read of the frames around them; put data
 *    checked in place when the frame sent after it arrives, get data on completion.
 */
#include "tcp_harness.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>

static void st32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static uint32_t ld32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static void st64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static uint64_t ld64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

#define MAXF (1024 * 1024 + 256) /* the largest frame (an eager limit raised for a long link) */
#define LANF (64 * 1024 + 256)   /* the largest the core sends otherwise */

static int lost_calls;
static uint32_t bar_seen[TH_MAX_RANKS], bar_epoch;

static void on_lost(rmpi_rail_t *rail, int peer, const char *why)
{
    lost_calls++;
    th_fail("unexpected on_peer_lost(rank %d): %s", peer, why);
}

static void send_frame(int peer, const void *buf, size_t len)
{
    struct iovec iov = {(void *)buf, len};
    int rc = rmpi_tcp_ops.send(th_rail, peer, &iov, 1);
    TH_CHECK(rc == 0, "send to %d returned %d", peer, rc);
}

static void barrier(void)
{
    uint8_t f[8] = {'B'};
    st32(f + 4, ++bar_epoch);
    for (int p = 0; p < th_size; p++)
        if (p != th_rank)
            send_frame(p, f, sizeof f);
    for (int p = 0; p < th_size; p++)
        if (p != th_rank)
            TH_WAIT(bar_seen[p] >= bar_epoch, 30, "barrier");
}

static int on_barrier(int peer, const uint8_t *f, size_t len)
{
    if (f[0] != 'B')
        return 0;
    TH_CHECK(len == 8 && ld32(f + 4) == bar_seen[peer] + 1, "barrier frame out of order from %d", peer);
    bar_seen[peer]++;
    return 1;
}

/* ---------------- stream ---------------- */
#define NFRAMES 3000
#define BURST 400
static uint32_t rx_seq[TH_MAX_RANKS];
static uint64_t rng_tx[TH_MAX_RANKS], rng_rx[TH_MAX_RANKS];

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static uint64_t seed(int src, int dst)
{
    return 0x9e3779b97f4a7c15ull ^ ((uint64_t)src * 7919 + (uint64_t)dst * 104729 + 1);
}

static size_t frame_payload(uint64_t *s)
{
    uint64_t r = xorshift(s);
    switch (r % 16) {
    case 14: return ((r >> 20) % 8 ? LANF : MAXF) - 16 - (size_t)((r >> 8) % 64);
    case 15: return 0;
    case 10:
    case 11:
    case 12:
    case 13: return (size_t)((r >> 8) % 16384);
    default: return (size_t)((r >> 8) % 200);
    }
}

static uint8_t pat_s(int src, uint32_t seq, size_t i) { return (uint8_t)(src * 131 + seq * 7 + i * 13); }

static void stream_on_frame(rmpi_rail_t *rail, int peer, const void *frame, size_t len)
{
    const uint8_t *f = frame;
    TH_CHECK(len >= 1, "empty frame from %d", peer);
    if (on_barrier(peer, f, len))
        return;
    TH_CHECK(f[0] == 'S' && len >= 16, "unexpected frame kind %#x len %zu from %d", f[0], len, peer);
    uint32_t src = ld32(f + 4), seq = ld32(f + 8), plen = ld32(f + 12);
    TH_CHECK((int)src == peer, "frame from %d says it comes from %u", peer, src);
    TH_CHECK(seq == rx_seq[peer], "frame %u from %d arrived when %u was due", seq, peer, rx_seq[peer]);
    size_t want = frame_payload(&rng_rx[peer]);
    TH_CHECK(plen == want && len == 16 + want, "frame %u from %d: %zu bytes, expected %zu", seq, peer, len, 16 + want);
    for (size_t i = 0; i < plen; i++)
        if (f[16 + i] != pat_s(peer, seq, i))
            th_fail("frame %u from %d: byte %zu corrupt", seq, peer, i);
    rx_seq[peer]++;
}

static void stream_body(void)
{
    th_open(stream_on_frame, on_lost);
    static uint8_t hdr[16], payload[MAXF];
    for (int p = 0; p < th_size; p++) {
        rng_tx[p] = seed(th_rank, p);
        rng_rx[p] = seed(p, th_rank);
    }
    for (uint32_t seq = 0; seq < NFRAMES; seq++) {
        for (int p = 0; p < th_size; p++) {
            if (p == th_rank)
                continue;
            size_t plen = frame_payload(&rng_tx[p]);
            hdr[0] = 'S';
            st32(hdr + 4, (uint32_t)th_rank);
            st32(hdr + 8, seq);
            st32(hdr + 12, (uint32_t)plen);
            for (size_t i = 0; i < plen; i++)
                payload[i] = pat_s(th_rank, seq, i);
            /* Three pieces: header, two payload halves (gathered by the provider). */
            struct iovec iov[3] = {{hdr, 16}, {payload, plen / 2}, {payload + plen / 2, plen - plen / 2}};
            int rc = rmpi_tcp_ops.send(th_rail, p, iov, 3);
            TH_CHECK(rc == 0, "send returned %d", rc);
            /* The iov is reusable at once: scribble over it. */
            memset(payload, 0xee, plen);
        }
        if (seq >= BURST && seq % 4 == 0)
            rmpi_tcp_ops.progress(th_rail);
    }
    for (int p = 0; p < th_size; p++)
        if (p != th_rank)
            TH_WAIT(rx_seq[p] == NFRAMES, 60, "all stream frames");
    barrier();
    TH_CHECK(lost_calls == 0, "peer lost");
    th_finish();
}

/* ---------------- rdma ---------------- */
static size_t rlen;
static uint8_t *src, *put_src, *get_dst[TH_MAX_RANKS], *put_tgt[TH_MAX_RANKS];
static rmpi_mr_t mr_src, mr_tgt[TH_MAX_RANKS];
static struct key {
    int have;
    uint64_t src, src_rkey, tgt, tgt_rkey, len;
} keys[TH_MAX_RANKS];
static int put_seen[TH_MAX_RANKS];

struct top {
    rmpi_net_op_t op;
    int done;
};

static void op_cb(rmpi_net_op_t *op)
{
    struct top *t = (struct top *)op;
    t->done++;
}

#define MIX_SLOT 6144
static int mix_seen[TH_MAX_RANKS];
static uint8_t pat_m(int rank, uint32_t k, uint32_t i) { return (uint8_t)(k * 29 + i * 3 + (uint32_t)rank * 71 + 5); }

static uint8_t pat_g(int rank, size_t i) { return (uint8_t)(i * 31 + (size_t)rank * 17 + (i >> 12)); }
static uint8_t pat_p(int rank, size_t i) { return (uint8_t)(i * 7 + (size_t)rank * 101 + (i >> 16) * 3 + 1); }

static void rdma_on_frame(rmpi_rail_t *rail, int peer, const void *frame, size_t len)
{
    const uint8_t *f = frame;
    if (on_barrier(peer, f, len))
        return;
    if (f[0] == 'K') {
        TH_CHECK(len == 48, "key frame length");
        keys[peer] = (struct key){1, ld64(f + 8), ld64(f + 16), ld64(f + 24), ld64(f + 32), ld64(f + 40)};
        return;
    }
    if (f[0] == 'F')
        return; /* filler: shifts where the small ops fall inside a read */
    if (f[0] == 'Q') {
        TH_CHECK(len == 12, "mixed put frame length");
        uint32_t k = ld32(f + 4), n = ld32(f + 8);
        for (uint32_t i = 0; i < n; i++)
            if (put_tgt[peer][(size_t)k * MIX_SLOT + i] != pat_m(peer, k, i))
                th_fail("small put %u (%u bytes) from %d not in place when the next frame arrived "
                        "(byte %u)",
                        k, n, peer, i);
        mix_seen[peer]++;
        return;
    }
    TH_CHECK(f[0] == 'P', "unexpected frame %#x", f[0]);
    /* The frame was sent right after the put was posted: its data must be in place. */
    for (size_t i = 0; i < rlen; i++)
        if (put_tgt[peer][i] != pat_p(peer, i))
            th_fail("put data from %d not in place when the next frame arrived (byte %zu)", peer, i);
    put_seen[peer]++;
}

static void post_get(struct top *t, int peer, void *dst, size_t len, uint64_t raddr, uint64_t rkey)
{
    memset(t, 0, sizeof *t);
    t->op.complete = op_cb;
    int rc = rmpi_tcp_ops.get(th_rail, peer, dst, len, raddr, rkey, &t->op);
    TH_CHECK(rc == 0, "get returned %d", rc);
}

static void post_put(struct top *t, int peer, const void *from, size_t len, uint64_t raddr, uint64_t rkey)
{
    memset(t, 0, sizeof *t);
    t->op.complete = op_cb;
    int rc = rmpi_tcp_ops.put(th_rail, peer, from, len, raddr, rkey, &t->op);
    TH_CHECK(rc == 0, "put returned %d", rc);
}

static void wait_op(struct top *t, int status, const char *what)
{
    TH_WAIT(t->done, 60, what);
    TH_CHECK(t->done == 1, "%s completed %d times", what, t->done);
    TH_CHECK(t->op.status == status, "%s: status %d, expected %d", what, t->op.status, status);
    TH_CHECK(t->op.t_post && t->op.t_done >= t->op.t_post && t->op.rail == th_rail, "%s: timestamps", what);
}

static void rdma_body(void)
{
    th_open(rdma_on_frame, on_lost);
    src = malloc(rlen);
    put_src = malloc(rlen);
    TH_CHECK(src && put_src, "out of memory");
    for (size_t i = 0; i < rlen; i++) {
        src[i] = pat_g(th_rank, i);
        put_src[i] = pat_p(th_rank, i);
    }
    TH_CHECK(rmpi_tcp_ops.mr_reg(th_rail, src, rlen, &mr_src) == 0, "mr_reg");
    TH_CHECK(mr_src.rkey != (uint64_t)(uintptr_t)src && mr_src.rkey != 0, "rkey looks like an address");
    for (int p = 0; p < th_size; p++) {
        if (p == th_rank)
            continue;
        get_dst[p] = calloc(1, rlen);
        put_tgt[p] = calloc(1, rlen);
        TH_CHECK(get_dst[p] && put_tgt[p], "out of memory");
        TH_CHECK(rmpi_tcp_ops.mr_reg(th_rail, put_tgt[p], rlen, &mr_tgt[p]) == 0, "mr_reg");
        uint8_t f[48] = {'K'};
        st64(f + 8, (uint64_t)(uintptr_t)src);
        st64(f + 16, mr_src.rkey);
        st64(f + 24, (uint64_t)(uintptr_t)put_tgt[p]);
        st64(f + 32, mr_tgt[p].rkey);
        st64(f + 40, rlen);
        send_frame(p, f, sizeof f);
    }
    for (int p = 0; p < th_size; p++)
        if (p != th_rank)
            TH_WAIT(keys[p].have, 30, "keys");

    /* Phase 1: whole-buffer get and put, small gets in flight with them, zero-length ops. */
    static struct top g[TH_MAX_RANKS], gs[TH_MAX_RANKS][3], pu[TH_MAX_RANKS], z[TH_MAX_RANKS][2];
    static uint8_t small[TH_MAX_RANKS][3][8192];
    size_t soff[3] = {0, rlen / 3 + 5, rlen - 4097}, slen[3] = {1, 4097, 4097};
    for (int p = 0; p < th_size; p++) {
        if (p == th_rank)
            continue;
        struct key *k = &keys[p];
        TH_CHECK(k->len == rlen, "peer buffer length");
        post_get(&g[p], p, get_dst[p], rlen, k->src, k->src_rkey);
        for (int i = 0; i < 3; i++)
            post_get(&gs[p][i], p, small[p][i], slen[i], k->src + soff[i], k->src_rkey);
        post_put(&pu[p], p, put_src, rlen, k->tgt, k->tgt_rkey);
        uint8_t f[8] = {'P'};
        send_frame(p, f, sizeof f);
        post_get(&z[p][0], p, small[p][0] + 100, 0, k->src + 10, k->src_rkey);
        post_put(&z[p][1], p, put_src, 0, k->tgt + rlen, k->tgt_rkey);
    }
    for (int p = 0; p < th_size; p++) {
        if (p == th_rank)
            continue;
        wait_op(&g[p], 0, "16 MiB get");
        for (int i = 0; i < 3; i++)
            wait_op(&gs[p][i], 0, "small get");
        wait_op(&pu[p], 0, "put");
        wait_op(&z[p][0], 0, "zero-length get");
        wait_op(&z[p][1], 0, "zero-length put");
        TH_WAIT(put_seen[p] == 1, 30, "put-done frame");
        for (size_t i = 0; i < rlen; i++)
            if (get_dst[p][i] != pat_g(p, i))
                th_fail("get from %d: byte %zu is %#x, expected %#x", p, i, get_dst[p][i], pat_g(p, i));
        for (int i = 0; i < 3; i++)
            for (size_t j = 0; j < slen[i]; j++)
                if (small[p][i][j] != pat_g(p, soff[i] + j))
                    th_fail("small get %d from %d: byte %zu", i, p, j);
    }
    barrier();

    /* Mixed: small puts (each into its own slot, then a frame naming it) and small gets
     * between filler frames of random sizes, all in flight at once. */
    {
        uint32_t nmix = (uint32_t)RMPI_MIN(rlen / MIX_SLOT, (size_t)600);
        uint8_t *msrc = malloc((size_t)nmix * MIX_SLOT), *mdst = malloc((size_t)nmix * MIX_SLOT);
        struct top *mops = calloc(2 * (size_t)nmix, sizeof *mops);
        uint32_t *glen = calloc(nmix, sizeof *glen);
        TH_CHECK(msrc && mdst && mops && glen, "out of memory");
        uint64_t rs = seed(th_rank, 99);
        static uint8_t filler[3000] = {'F'};
        for (int p = 0; p < th_size; p++) {
            if (p == th_rank)
                continue;
            struct key *k = &keys[p];
            for (uint32_t i = 0; i < nmix; i++) {
                uint64_t x = xorshift(&rs);
                uint32_t n = (uint32_t)(x % (MIX_SLOT + 1)), gl = (uint32_t)((x >> 20) % (MIX_SLOT + 1));
                if (x % 7 == 0)
                    n = (uint32_t)((x >> 40) % 64);
                uint8_t *from = msrc + (size_t)i * MIX_SLOT;
                for (uint32_t j = 0; j < n; j++)
                    from[j] = pat_m(th_rank, i, j);
                post_put(&mops[2 * i], p, from, n, k->tgt + (uint64_t)i * MIX_SLOT, k->tgt_rkey);
                uint8_t f[12] = {'Q'};
                st32(f + 4, i);
                st32(f + 8, n);
                send_frame(p, f, sizeof f);
                glen[i] = gl;
                post_get(&mops[2 * i + 1], p, mdst + (size_t)i * MIX_SLOT, gl, k->src + (uint64_t)i * 4099,
                         k->src_rkey);
                send_frame(p, filler, (size_t)((x >> 32) % sizeof filler) + 1);
                if (i % 8 == 0)
                    rmpi_tcp_ops.progress(th_rail);
            }
            for (uint32_t i = 0; i < nmix; i++) {
                wait_op(&mops[2 * i], 0, "small put");
                wait_op(&mops[2 * i + 1], 0, "small get");
                for (uint32_t j = 0; j < glen[i]; j++)
                    if (mdst[(size_t)i * MIX_SLOT + j] != pat_g(p, (size_t)i * 4099 + j))
                        th_fail("small get %u (%u bytes) from %d: byte %u", i, glen[i], p, j);
            }
            TH_WAIT(mix_seen[p] == (int)nmix, 30, "small put frames");
        }
        free(msrc);
        free(mdst);
        free(mops);
        free(glen);
    }
    barrier();

    /* Phase 2: refused accesses complete with -EFAULT; the connection stays usable. */
    for (int p = 0; p < th_size; p++) {
        if (p == th_rank)
            continue;
        struct key *k = &keys[p];
        struct top e[4], ok;
        post_get(&e[0], p, get_dst[p], 64, k->src, k->src_rkey ^ (1ull << 32));
        post_get(&e[1], p, get_dst[p], 64, k->src, 0xffffull);
        post_get(&e[2], p, get_dst[p], 100, k->src + rlen - 10, k->src_rkey);
        post_get(&e[3], p, get_dst[p], 64, k->src - 1, k->src_rkey);
        memset(get_dst[p], 0, 1000);
        post_get(&ok, p, get_dst[p], 1000, k->src + 12345, k->src_rkey);
        for (int i = 0; i < 4; i++)
            wait_op(&e[i], -EFAULT, "bad get");
        wait_op(&ok, 0, "get after refused gets");
        for (size_t i = 0; i < 1000; i++)
            TH_CHECK(get_dst[p][i] == pat_g(p, 12345 + i), "get after refused gets: byte %zu", i);
    }
    /* A put much larger than the socket buffers (RMPI_TCP_SNDBUF) to a bad rkey: the target
     * refuses its first frame, and the refusal arrives before the last byte leaves. Only
     * one direction: a target busy with its own bulk data would answer too late. */
    if (th_rank == 0) {
        struct top bp;
        post_put(&bp, 1, put_src, rlen, keys[1].tgt, keys[1].tgt_rkey + 1);
        wait_op(&bp, -EFAULT, "put to a bad rkey");
    }
    barrier();

    /* Phase 3: a deregistered region refuses reads. */
    rmpi_tcp_ops.mr_dereg(th_rail, &mr_src);
    barrier();
    for (int p = 0; p < th_size; p++) {
        if (p == th_rank)
            continue;
        struct top e;
        post_get(&e, p, get_dst[p], 64, keys[p].src, keys[p].src_rkey);
        wait_op(&e, -EFAULT, "get from a deregistered region");
    }
    barrier();
    for (int p = 0; p < th_size; p++)
        if (p != th_rank)
            rmpi_tcp_ops.mr_dereg(th_rail, &mr_tgt[p]);
    TH_CHECK(lost_calls == 0, "peer lost");
    th_finish();
}

static const char *first_non_loopback(void)
{
    static char ip[INET_ADDRSTRLEN];
    struct ifaddrs *all, *ifa;
    if (getifaddrs(&all) != 0)
        return NULL;
    const char *found = NULL;
    for (ifa = all; ifa && !found; ifa = ifa->ifa_next)
        if (ifa->ifa_addr && ifa->ifa_addr->sa_family == AF_INET && (ifa->ifa_flags & IFF_UP) &&
            (ifa->ifa_flags & IFF_RUNNING) && !(ifa->ifa_flags & IFF_LOOPBACK))
            found = inet_ntop(AF_INET, &((struct sockaddr_in *)ifa->ifa_addr)->sin_addr, ip, sizeof ip);
    freeifaddrs(all);
    return found;
}

int main(void)
{
    int bad = 0;
    const char *none[] = {NULL};
    const char *small_buf[] = {"RMPI_TCP_SNDBUF=16k", NULL};
    const char *lo[] = {"RMPI_TCP_IFACES=lo", NULL};
    bad |= th_run("stream/n2", 2, none, 0, stream_body);
    bad |= th_run("stream/n3/sndbuf16k", 3, small_buf, 0, stream_body);
    bad |= th_run("stream/n2/ifaces=lo", 2, lo, 0, stream_body);
    const char *ip = first_non_loopback();
    if (ip) {
        static char knob[64];
        snprintf(knob, sizeof knob, "RMPI_TCP_IFACES=%s", ip);
        const char *eth[] = {knob, NULL};
        bad |= th_run("stream/n2/ifaces=first-non-loopback", 2, eth, 0, stream_body);
    }
    rlen = 16u << 20;
    const char *chunk[] = {"RMPI_TCP_CHUNK=64k", "RMPI_TCP_SNDBUF=256k", NULL};
    bad |= th_run("rdma/n2/16MiB", 2, chunk, 0, rdma_body);
    rlen = 4u << 20;
    const char *sndbuf[] = {"RMPI_TCP_SNDBUF=256k", NULL}; /* default chunk: 256 KiB */
    bad |= th_run("rdma/n3/4MiB", 3, sndbuf, 0, rdma_body);
    return bad;
}
