/* The libfabric provider alone (rmpi_ofi_ops, no layers above net): 2 ranks under our
 * mpiexec (the test re-runs itself through build/bin/mpiexec), over tcp;ofi_rxm and shm,
 * each with native RDMA and with RMPI_OFI_RMA=emulate (get/put over control frames).
 * Frames of random sizes (0 .. max_frame, 3 iovecs scribbled after send) both ways, the
 * first 300 before any progress, checked in order; 4 MiB get and put with byte checks,
 * put data in place when the frame sent after it arrives, zero-length get/put; a bad key
 * (emulated: out of bounds too; a short put refused after it completed loses the peer, a
 * long one refused while still being cut fails). Built and registered only with
 * libfabric (tests/CMakeLists.txt). */
#include <limits.h>
#include <stdio.h>
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/net.h"
#include "net/ofi/ofi.h"

extern const struct rmpi_net_ops rmpi_ofi_ops;

#define NFRAMES 2000
#define BIG (4u << 20)

static int me, peer, nrails;
static rmpi_rail_t *rails[RMPI_NET_MAX_RAILS]; /* the rails that reach the peer */
static rmpi_rail_t *all[RMPI_NET_MAX_RAILS];   /* every rail opened */
static int nall;
static unsigned rx_next; /* next frame sequence expected */
static uint64_t peer_addr, peer_rkey[RMPI_NET_MAX_RAILS];
static int got_keys, put_checked, put_bad = -1, peer_done;
static unsigned char *big;

#define CHECK(c, ...)                                                                   \
    do {                                                                                \
        if (!(c)) {                                                                     \
            fprintf(stderr, "[ofi_loop rank %d] FAIL %s:%d: ", me, __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                               \
            fputc('\n', stderr);                                                        \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

static unsigned char pat(unsigned seq, size_t i) { return (unsigned char)(seq * 131u + i * 7u + 1u); }

enum { F_DATA = 1, F_KEYS, F_PUTDONE, F_OPSDONE, F_AGAIN };
static unsigned rx_again; /* F_AGAIN frames (after a connection was made again) */

static void on_frame(rmpi_rail_t *rail, int src, const void *frame, size_t len)
{
    CHECK(src == peer, "frame from %d", src);
    CHECK(len >= 8, "frame of %zu bytes", len);
    uint32_t kind, seq;
    memcpy(&kind, frame, 4);
    memcpy(&seq, (const char *)frame + 4, 4);
    const unsigned char *p = (const unsigned char *)frame + 8;
    if (kind == F_DATA) {
        CHECK(seq == rx_next, "frame %u arrived, expected %u", seq, rx_next);
        for (size_t i = 0; i < len - 8; i++)
            CHECK(p[i] == pat(seq, i), "frame %u byte %zu", seq, i);
        rx_next++;
    } else if (kind == F_KEYS) {
        memcpy(&peer_addr, p, 8);
        memcpy(peer_rkey, p + 8, (size_t)nrails * 8);
        got_keys = 1;
    } else if (kind == F_PUTDONE) {
        /* The peer's put on this rail (share seq) was issued before this frame: its data
         * must be in place. */
        size_t share = BIG / 2 / (size_t)nrails, off = share * seq;
        size_t n = (int)seq == nrails - 1 ? BIG / 2 - off : share;
        for (size_t i = off; i < off + n; i++)
            if (big[BIG / 2 + i] != (unsigned char)(i * 13 + peer)) {
                put_bad = (int)seq;
                break;
            }
        put_checked++;
    } else if (kind == F_OPSDONE) {
        peer_done++;
    } else if (kind == F_AGAIN) {
        CHECK(seq == rx_again, "frame %u arrived after the rejoin, expected %u", seq, rx_again);
        for (size_t i = 0; i < len - 8; i++)
            CHECK(p[i] == pat(seq, i), "frame %u byte %zu after the rejoin", seq, i);
        rx_again++;
    }
}

static int expect_lost, nlost;
static char lost_why[128]; /* the last reason reported (the provider keeps it only until then) */
static void on_lost(rmpi_rail_t *rail, int p, const char *why)
{
    CHECK(expect_lost, "peer %d lost: %s", p, why);
    snprintf(lost_why, sizeof lost_why, "%s", why ? why : "(null)");
    nlost++;
}

static int nup;
static uint32_t up_epoch;
static void on_up(rmpi_rail_t *rail, int p, uint32_t epoch)
{
    CHECK(p == peer && rail == rails[0], "connection up to %d on %s", p, rail->hints.name);
    nup++;
    up_epoch = epoch;
}

static int progress(void)
{
    int n = 0;
    for (int i = 0; i < nall; i++)
        n += rmpi_ofi_ops.progress(all[i]);
    return n;
}

static int ndone;
static void op_done(rmpi_net_op_t *op)
{
    CHECK(op->status == 0, "RDMA op failed: %d", op->status);
    CHECK(op->t_done >= op->t_post && op->t_post, "timestamps %llu %llu", (unsigned long long)op->t_post,
          (unsigned long long)op->t_done);
    ndone++;
}

static int nbad;
static void op_bad(rmpi_net_op_t *op) { nbad++; }

static void wait_ops(int n)
{
    double t0 = (double)rmpi_time_ns();
    while (ndone < n) {
        progress();
        CHECK((double)rmpi_time_ns() - t0 < 30e9, "RDMA ops did not complete (%d of %d)", ndone, n);
    }
}

static void send_frame(rmpi_rail_t *rail, uint32_t kind, uint32_t seq, const void *body, size_t len)
{
    unsigned char hdr[8];
    memcpy(hdr, &kind, 4);
    memcpy(hdr + 4, &seq, 4);
    /* three pieces, scribbled after send: the provider must have copied them */
    unsigned char *copy = malloc(len + 1);
    memcpy(copy, body, len);
    size_t a = len / 3;
    struct iovec iov[3] = {{hdr, 8}, {copy, a}, {copy + a, len - a}};
    CHECK(rmpi_ofi_ops.send(rail, peer, iov, 3) == 0, "send of %zu bytes", len);
    memset(hdr, 0xee, sizeof hdr);
    memset(copy, 0xee, len);
    free(copy);
}

/* Emulated, the peer's get and put are served by our progress: keep it going until the
 * peer is done too (a fence alone would stop it). */
static void sync_peer(void)
{
    static int n;
    send_frame(rails[0], F_OPSDONE, (uint32_t)n++, "", 0);
    double t0 = (double)rmpi_time_ns();
    while (peer_done < n) {
        progress();
        CHECK((double)rmpi_time_ns() - t0 < 30e9, "the peer did not finish its get/put");
    }
}

/* The VC's failure detector on rail (both ends, as RAIL_DOWN makes it): abandon reports
 * the peer lost at the next progress, sends and RDMA to it fail, watch sees nothing; the
 * lower rank's rejoin makes the connection again (HELLO, HELLO_ACK) and both ends report
 * it up in epoch 1; frames flow again, numbered anew, and a PING's answer leaves nothing
 * waiting. */
static void give_up_and_rejoin(rmpi_rail_t *rail, unsigned char *buf)
{
    uint64_t moved0, moved;
    rmpi_ofi_ops.watch(rail, peer, &moved0);
    expect_lost = 1;
    int lost = nlost;
    rmpi_ofi_ops.abandon(rail, peer, "test: the detector gave up");
    CHECK(nlost == lost, "abandon reported the loss inside the call");
    rmpi_net_op_t g = {.complete = op_bad};
    int before = nbad;
    CHECK(rmpi_ofi_ops.get(rail, peer, buf, 4096, peer_addr, peer_rkey[0], &g) == 0, "get after abandon");
    double t0 = (double)rmpi_time_ns();
    while (nlost == lost || nbad == before) {
        progress();
        CHECK((double)rmpi_time_ns() - t0 < 10e9, "abandon: lost %d, get completed %d", nlost - lost, nbad - before);
    }
    CHECK(nlost == lost + 1 && g.status == -ECONNRESET, "abandon: lost %d time(s), get status %d", nlost - lost,
          g.status);
    CHECK(!strcmp(lost_why, "test: the detector gave up"), "abandon's reason arrived as '%s'", lost_why);
    CHECK(rmpi_ofi_ops.watch(rail, peer, &moved) == 0, "watch of a connection given up");
    unsigned char hdr[8] = {F_DATA};
    struct iovec iov = {hdr, sizeof hdr};
    CHECK(rmpi_ofi_ops.send(rail, peer, &iov, 1) != 0, "a send on a connection given up was taken");
    expect_lost = 0;
    nlost = lost;
    nbad = before;
    CHECK(rmpi_pmi_fence() == 0, "fence"); /* both ends gave up before the HELLO */
    CHECK(rmpi_ofi_ops.rejoin(rail, peer, 5000000000ull) == 0, "rejoin");
    CHECK(rmpi_ofi_ops.rejoin(rail, peer, 5000000000ull) == (me == 0 ? -1 : 0), "a second rejoin while the first runs");
    t0 = (double)rmpi_time_ns();
    while (!nup) {
        progress();
        CHECK((double)rmpi_time_ns() - t0 < 10e9, "the connection did not come back");
    }
    CHECK(nup == 1 && up_epoch == 1, "up %d time(s), epoch %u", nup, up_epoch);
    unsigned char body[200];
    for (unsigned k = 0; k < 50; k++) {
        for (size_t i = 0; i < sizeof body; i++)
            body[i] = pat(k, i);
        send_frame(rail, F_AGAIN, k, body, k % 2 ? sizeof body : 10);
    }
    t0 = (double)rmpi_time_ns();
    size_t out = 1;
    while (rx_again < 50 || out) {
        progress();
        out = rmpi_ofi_ops.watch(rail, peer, &moved);
        CHECK((double)rmpi_time_ns() - t0 < 10e9, "after the rejoin: %u of 50 frames, %zu bytes waiting", rx_again,
              out);
    }
    CHECK(moved > moved0, "the progress counter did not grow (%llu, %llu)", (unsigned long long)moved0,
          (unsigned long long)moved);
    sync_peer(); /* the peer answers PINGs until we are both done */
    printf("ofi_loop rank %d: %s given up, back in epoch %u, 50 frames each way: ok\n", me, rail->hints.name, up_epoch);
}

static void rank_main(void)
{
    rmpi_pm_info_t pm;
    rmpi_knobs_init();
    CHECK(rmpi_pmi_init(&pm) == 0 && pm.size == 2, "PMI");
    CHECK(rmpi_topo_init(&pm) == 0, "topology");
    me = pm.rank;
    peer = 1 - me;
    rmpi_net_env_t env = {me, pm.size, pm.kvsname, on_frame, on_lost, NULL, on_up};
    nrails = rmpi_ofi_ops.open(&env, rails, RMPI_NET_MAX_RAILS);
    CHECK(nrails >= 1, "open returned %d", nrails);
    CHECK(rmpi_pmi_fence() == 0, "fence");
    /* RMPI_OFI_DOMAINS=*: every domain reaches the peer (striping over all of them is
     * tested below); unset: within a node only the loopback domain, when there is one. */
    const char *doms = getenv("RMPI_OFI_DOMAINS");
    int every = doms && !strcmp(doms, "*"), lo = -1;
    nall = nrails;
    for (int i = 0; i < nall; i++) {
        all[i] = rails[i];
        if (!strcmp(all[i]->hints.name, "ofi:lo"))
            lo = i;
    }
    nrails = 0;
    for (int i = 0; i < nall; i++) {
        int reach = rmpi_ofi_ops.reaches(all[i], peer);
        if (every || lo < 0)
            CHECK(reach, "%s does not reach the peer", all[i]->hints.name);
        else
            CHECK(reach == (i == lo), "%s %s the peer of this node (the loopback domain alone should)",
                  all[i]->hints.name, reach ? "reaches" : "does not reach");
        CHECK(!rmpi_ofi_ops.reaches(all[i], me), "%s reaches self", all[i]->hints.name);
        if (reach)
            rails[nrails++] = all[i];
        /* both ranks on this node: a rail that reaches nobody is not polled */
        CHECK(rmpi_ofi_ops.ready(all[i], 0) == 0, "ready on %s", all[i]->hints.name);
        CHECK(rmpi_ofi_rail_of(all[i])->idle == !reach, "%s: idle %d, reaches the peer %d", all[i]->hints.name,
              rmpi_ofi_rail_of(all[i])->idle, reach);
    }
    /* What another program that reaches the endpoint could send (docs/wire/auth.md): a
     * frame naming rank 1 without the job's cookie, and one shorter than the header. Rank 1
     * injects them raw (no sequence number taken); rank 0 must drop and count both, and
     * the real frames behind them must still arrive in order. */
    if (me == 1)
        for (int i = 0; i < nrails; i++) {
            rmpi_ofi_rail_t *r = rmpi_ofi_rail_of(rails[i]);
            fi_addr_t a;
            CHECK(rmpi_ofi_peer_addr(r, peer, &a) == 0, "address of the peer on %s", rails[i]->hints.name);
            char fake[64] = {0};
            rmpi_ofi_hdr_t h = {htole32(1), 0, htole64(0x1234567890abcdefull)};
            memcpy(fake, &h, sizeof h);
            ssize_t rc;
            while ((rc = fi_inject(r->ep, fake, sizeof fake, a)) == -FI_EAGAIN)
                progress();
            CHECK(rc == 0, "fi_inject of the forged frame: %zd", rc);
            while ((rc = fi_inject(r->ep, fake, 4, a)) == -FI_EAGAIN)
                progress();
            CHECK(rc == 0, "fi_inject of the short frame: %zd", rc);
        }
    /* send_zc over a rail that does not reach the peer: the op fails at the next progress
     * (never inside the call) and the peer is reported lost on that rail. */
    for (int i = 0; i < nall; i++) {
        if (rmpi_ofi_ops.reaches(all[i], peer) || !all[i]->hints.zc_min)
            continue;
        static char zbody[4096];
        unsigned char zh[8] = {0};
        struct iovec ziov[2] = {{zh, sizeof zh}, {zbody, sizeof zbody}};
        rmpi_net_op_t zop = {.complete = op_bad, .status = 1};
        int before = nbad, lost = nlost;
        expect_lost = 1;
        CHECK(rmpi_ofi_ops.send_zc(all[i], peer, ziov, 2, &zop) != 0,
              "send_zc over %s, which does not reach the "
              "peer, returned 0",
              all[i]->hints.name);
        CHECK(nbad == before, "send_zc completed its op inside the call");
        progress();
        CHECK(nbad == before + 1 && zop.status < 0 && nlost == lost + 1,
              "failed send_zc over %s: completed %d time(s), status %d, peer lost %d time(s)", all[i]->hints.name,
              nbad - before, zop.status, nlost - lost);
        expect_lost = 0;
        nbad = before;
        nlost = lost;
        printf("ofi_loop rank %d: send_zc over %s (no route) failed at progress: ok\n", me, all[i]->hints.name);
    }
    rmpi_rail_t *r0 = rails[0];
    const char *rma = getenv("RMPI_OFI_RMA");
    int emulated = rma && !strcmp(rma, "emulate");
    for (int i = 0; i < nrails; i++)
        CHECK(rails[i]->hints.rdma_native == !emulated, "%s: rdma_native %d under RMPI_OFI_RMA=%s",
              rails[i]->hints.name, rails[i]->hints.rdma_native, rma ? rma : "");
    size_t maxf = r0->hints.max_frame - 8;
    srand(77 + (unsigned)me);
    unsigned char *body = malloc(maxf);
    for (unsigned seq = 0; seq < NFRAMES; seq++) {
        size_t len = seq % 97 == 0 ? maxf : seq % 5 == 0 ? (size_t)rand() % maxf : (size_t)rand() % 300;
        for (size_t i = 0; i < len; i++)
            body[i] = pat(seq, i);
        send_frame(r0, F_DATA, seq, body, len);
        if (seq >= 300)
            progress();
    }
    double t0 = (double)rmpi_time_ns();
    while (rx_next < NFRAMES) {
        progress();
        CHECK((double)rmpi_time_ns() - t0 < 60e9, "only %u of %d frames arrived", rx_next, NFRAMES);
    }

    /* RDMA: the first half of big is read by the peer, the second half written by it. */
    big = aligned_alloc(4096, BIG);
    for (size_t i = 0; i < BIG / 2; i++)
        big[i] = (unsigned char)(i * 11 + me);
    memset(big + BIG / 2, 0, BIG / 2);
    rmpi_mr_t mr[RMPI_NET_MAX_RAILS];
    unsigned char keys[8 + 8 * RMPI_NET_MAX_RAILS];
    uint64_t a = (uintptr_t)big;
    memcpy(keys, &a, 8);
    for (int i = 0; i < nrails; i++) {
        CHECK(rmpi_ofi_ops.mr_reg(rails[i], big, BIG, &mr[i]) == 0, "mr_reg on %s", rails[i]->hints.name);
        memcpy(keys + 8 + 8 * i, &mr[i].rkey, 8);
    }
    send_frame(r0, F_KEYS, 0, keys, 8 + 8 * (size_t)nrails);
    while (!got_keys)
        progress();
    unsigned char *mine = aligned_alloc(4096, BIG / 2);
    for (size_t i = 0; i < BIG / 2; i++)
        mine[i] = (unsigned char)(i * 13 + me);
    unsigned char *got = aligned_alloc(4096, BIG / 2);
    memset(got, 0, BIG / 2);
    rmpi_net_op_t ops[4 * RMPI_NET_MAX_RAILS];
    memset(ops, 0, sizeof ops);
    int nops = 0;
    size_t share = BIG / 2 / (size_t)nrails;
    for (int i = 0; i < nrails; i++) {
        size_t off = share * (size_t)i, len = i == nrails - 1 ? BIG / 2 - off : share;
        rmpi_net_op_t *g = &ops[nops++], *p = &ops[nops++], *z = &ops[nops++];
        g->complete = p->complete = z->complete = op_done;
        CHECK(rmpi_ofi_ops.get(rails[i], peer, got + off, len, peer_addr + off, peer_rkey[i], g) == 0, "get");
        CHECK(rmpi_ofi_ops.put(rails[i], peer, mine + off, len, peer_addr + BIG / 2 + off, peer_rkey[i], p) == 0,
              "put");
        CHECK(rmpi_ofi_ops.put(rails[i], peer, mine, 0, peer_addr, peer_rkey[i], z) == 0, "zero put");
        CHECK(ndone == 0, "an op completed inside get/put");
    }
    /* Sent right after the puts, on every rail: the data must be there when it arrives. */
    for (int i = 0; i < nrails; i++)
        send_frame(rails[i], F_PUTDONE, (uint32_t)i, "", 0);
    wait_ops(nops);
    for (size_t i = 0; i < BIG / 2; i++)
        CHECK(got[i] == (unsigned char)(i * 11 + peer), "get byte %zu: %u", i, got[i]);
    t0 = (double)rmpi_time_ns();
    while (put_checked < nrails) {
        progress();
        CHECK((double)rmpi_time_ns() - t0 < 30e9, "no frame after the put");
    }
    CHECK(put_bad < 0, "a frame sent after a put on rail %d arrived before the put's data", put_bad);
    sync_peer();
    give_up_and_rejoin(rails[0], got);
    /* both sides done before anyone closes */
    CHECK(rmpi_pmi_fence() == 0, "fence");
    char name[64];
    snprintf(name, sizeof name, "%s", r0->hints.name);
    /* Last, a get under a key the peer never issued (the high bits: with offset addressing
     * the low ones carry the region base, which the initiator checks itself): the target
     * rejects it, the op completes with -EFAULT, and the rail reports the peer lost (its
     * connection may drop later frames). */
    rmpi_net_op_t bad = {.complete = op_bad};
    expect_lost = 1;
    CHECK(rmpi_ofi_ops.get(rails[0], peer, got, 4096, peer_addr, peer_rkey[0] ^ (UINT64_C(0x5a5a) << 48), &bad) == 0,
          "bad get");
    const char *prov = getenv("RMPI_OFI_PROVIDER");
    int checked = emulated || rmpi_ofi_checks_keys(prov ? prov : "");
    t0 = (double)rmpi_time_ns();
    while ((!nbad || (checked && !emulated && !nlost)) && (double)rmpi_time_ns() - t0 < 30e9)
        progress();
    if (emulated) {
        /* The emulating target checks every access and answers; the rail goes on. */
        while (!nbad && (double)rmpi_time_ns() - t0 < 30e9)
            progress();
        CHECK(nbad == 1 && bad.status == -EFAULT, "a get with a bad key completed %d time(s) with status %d", nbad,
              bad.status);
        rmpi_net_op_t oob = {.complete = op_bad};
        CHECK(rmpi_ofi_ops.get(rails[0], peer, got, 8192, peer_addr + BIG - 4096, peer_rkey[0], &oob) == 0, "oob get");
        while (nbad < 2 && (double)rmpi_time_ns() - t0 < 30e9)
            progress();
        CHECK(nbad == 2 && oob.status == -EFAULT, "a get out of bounds completed with status %d", oob.status);
        CHECK(nlost == 0, "a refused emulated get reported the peer lost");
        for (size_t i = 0; i < 100; i++)
            body[i] = pat(NFRAMES, i);
        send_frame(r0, F_DATA, NFRAMES, body, 100);
        while (rx_next <= NFRAMES && (double)rmpi_time_ns() - t0 < 30e9)
            progress();
        CHECK(rx_next == NFRAMES + 1, "no frame after the refused gets");
        /* A short put is out of the local buffer at once: the refusal comes after it
         * completed, so the rail loses the peer (the contract's rule). */
        rmpi_net_op_t bput = {.complete = op_bad};
        CHECK(rmpi_ofi_ops.put(rails[0], peer, mine, 64, peer_addr, peer_rkey[0] ^ (UINT64_C(0x5a5a) << 48), &bput) ==
                  0,
              "bad put");
        while ((nbad < 3 || !nlost) && (double)rmpi_time_ns() - t0 < 30e9)
            progress();
        CHECK(nbad == 3 && (bput.status == -EFAULT || (bput.status == 0 && nlost == 1)),
              "a put with a bad key: completed %d, status %d, peer lost %d time(s)", nbad - 2, bput.status, nlost);
        /* A long one is refused while still being cut (65 pieces, 32 in flight at most):
         * it fails with -EFAULT, unless all its pieces were out first. */
        int lost = nlost;
        rmpi_net_op_t lput = {.complete = op_bad};
        CHECK(rmpi_ofi_ops.put(rails[0], peer, big, BIG, peer_addr + BIG / 2, peer_rkey[0], &lput) == 0, "long put");
        while ((nbad < 4 || (lput.status == 0 && nlost == lost)) && (double)rmpi_time_ns() - t0 < 30e9)
            progress();
        CHECK(nbad == 4 && (lput.status == -EFAULT || nlost == lost + 1),
              "a long put out of bounds: completed %d, status %d, peer lost %d time(s)", nbad - 3, lput.status,
              nlost - lost);
        printf("ofi_loop rank %d: long put out of bounds %s\n", me,
               lput.status ? "failed while pending" : "completed, then the peer was lost");
        sync_peer();
    } else if (checked) {
        CHECK(nbad == 1 && bad.status == -EFAULT, "a get with a bad key completed %d time(s) with status %d", nbad,
              bad.status);
        CHECK(nlost >= 1, "the rail did not report the peer lost after a failed get");
    } else {
        /* the capability table says this provider reads without checking keys */
        CHECK(nbad == 1, "a get with an unchecked key completed %d time(s)", nbad);
    }
    if (me == 0)
        CHECK(rmpi_net_sec_stats.refused == 2 * (uint64_t)nrails, "%llu forged frames dropped, %d expected",
              (unsigned long long)rmpi_net_sec_stats.refused, 2 * nrails);
    CHECK(rmpi_pmi_fence() == 0, "fence");
    for (int i = 0; i < nrails; i++)
        rmpi_ofi_ops.mr_dereg(rails[i], &mr[i]);
    for (int i = 0; i < nall; i++)
        rmpi_ofi_ops.close(all[i]);
    printf("ofi_loop rank %d: %d of %d rail(s) reach the peer (%s), %d frames, get/put %u bytes: ok\n", me, nrails,
           nall, name, NFRAMES, BIG / 2);
    rmpi_pmi_finalize();
}

int main(int argc, char **argv)
{
    if (getenv("PMI_FD") || getenv("PMI_PORT")) {
        rank_main();
        return 0;
    }
    char self[PATH_MAX], mpiexec[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(n > 0, "readlink /proc/self/exe");
    self[n] = 0;
    snprintf(mpiexec, sizeof mpiexec, "%.*s/../../bin/mpiexec", (int)(strrchr(self, '/') - self), self);
    /* Every domain (RMPI_OFI_DOMAINS=*), then tcp;ofi_rxm with the default choice. */
    const char *provs[] = {"tcp;ofi_rxm", "shm"}, *rma[] = {"auto", "emulate"};
    for (int i = 0; i < 5; i++) {
        char cmd[3 * PATH_MAX];
        const char *doms = i < 4 ? "*" : "";
        snprintf(cmd, sizeof cmd, "timeout 120 '%s' -n 2 -genv RMPI_OFI_PROVIDER '%s' -genv RMPI_OFI_RMA %s%s%s%s '%s'",
                 mpiexec, provs[i / 2 % 2], rma[i % 2], *doms ? " -genv RMPI_OFI_DOMAINS '" : "", doms,
                 *doms ? "'" : "", self);
        printf("== %s, RMPI_OFI_RMA=%s, RMPI_OFI_DOMAINS=%s\n", provs[i / 2 % 2], rma[i % 2], doms);
        fflush(stdout);
        CHECK(system(cmd) == 0, "ofi_loop over %s with RMPI_OFI_RMA=%s failed", provs[i / 2 % 2], rma[i % 2]);
    }
    return 0;
}
