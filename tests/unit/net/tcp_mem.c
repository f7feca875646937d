/*
 * TCP provider: receive buffers that follow the traffic (src/net/tcp/README.md, "Receive
 * buffer"), read through the provider's channel accounting (chan_stats: what RMPI_REPORT
 * prints as tcp's dedicated memory), two forked ranks under the harness's PMI:
 *  - grow: small frames leave the receiver at one peer's state plus the first 4 KiB buffer
 *    (the connection's handshake buffer was freed); a largest LAN frame doubles it to
 *    RMPI_TCP_RXBUF; after RMPI_TCP_BUF_IDLE (200 ms) without a byte, and not before, it is
 *    freed (a quiet peer: state only) while the peak keeps the grown size; a burst of small
 *    frames read while it piles up grows it for read-ahead (past 4 KiB with no frame
 *    larger than 1 KiB); the largest frame (1 MiB + 256) takes the largest buffer. A rank
 *    that only sent keeps no buffer. Every frame's bytes are checked.
 *  - churn: with RMPI_TCP_BUF_IDLE=1 both ranks send 3000 frames of sizes around every step
 *    of the buffer (4 KiB .. 64 KiB + 8 KiB, 1 MiB + 256) to each other, with pauses that
 *    let the buffers be freed and grown again; every frame arrives once, in order, intact,
 *    and both ranks saw their buffer freed during the run.
 */
#include "tcp_harness.h"

#include "net/net_mem.h"
#include "net/tcp/tcp.h"

static int got_frames, bad_frames, next_seq;

/* frame: seq (4 bytes, little-endian) then a pattern of sender, seq and position */
static uint8_t pat(int sender, uint32_t seq, size_t i)
{
    return (uint8_t)(seq * 131u + i * 7u + (unsigned)sender * 29u);
}

static void fill(uint8_t *b, size_t len, uint32_t seq)
{
    for (size_t i = 0; i < len; i++)
        b[i] = i < 4 ? (uint8_t)(seq >> (8 * i)) : pat(th_rank, seq, i);
}

static void on_frame(rmpi_rail_t *rail, int peer, const void *frame, size_t len)
{
    const uint8_t *f = frame;
    (void)rail;
    if (len < 4) {
        bad_frames++;
        return;
    }
    uint32_t seq = (uint32_t)f[0] | (uint32_t)f[1] << 8 | (uint32_t)f[2] << 16 | (uint32_t)f[3] << 24;
    if ((int)seq != next_seq)
        th_fail("frame %u from rank %d, expected %d", seq, peer, next_seq);
    for (size_t i = 4; i < len; i++)
        if (f[i] != pat(peer, seq, i))
            th_fail("frame %u (%zu bytes) from rank %d: byte %zu is %u, expected %u", seq, len, peer, i, f[i],
                    pat(peer, seq, i));
    next_seq++;
    got_frames++;
}

static void on_lost(rmpi_rail_t *rail, int peer, const char *why)
{
    (void)rail;
    th_fail("unexpected on_peer_lost(rank %d): %s", peer, why);
}

static rmpi_net_chan_stats_t stats(void)
{
    rmpi_net_chan_stats_t st;
    rmpi_tcp_ops.chan_stats(th_rail, &st);
    return st;
}
static size_t mem_now(void) { return stats().mem[RMPI_NET_CHAN_DEDICATED]; }

static uint8_t *sbuf;
static uint32_t sent_seq;

static void send_frame(int peer, size_t len)
{
    fill(sbuf, len, sent_seq++);
    struct iovec iov = {sbuf, len};
    TH_CHECK(rmpi_tcp_ops.send(th_rail, peer, &iov, 1) == 0, "send of %zu bytes", len);
}

/* Wait for frames up to count; progress keeps both sides' queues moving. */
static void wait_frames(int count, const char *what) { TH_WAIT(got_frames >= count, 30, what); }

static void grow_body(void)
{
    th_open(on_frame, on_lost);
    sbuf = malloc(RMPI_TCP_MAX_FRAME);
    const size_t quiet = rmpi_tcp_peer_bytes(0), small = rmpi_tcp_peer_bytes(1), lan = rmpi_tcp_peer_bytes_max();
    TH_CHECK(small == quiet + RMPI_TCP_RX_MIN && lan == quiet + RMPI_TCP_RXBUF &&
                 rmpi_tcp_peer_bytes(RMPI_TCP_LAN_FRAME) == lan && rmpi_tcp_peer_bytes(4000) == small &&
                 rmpi_tcp_peer_bytes(4096) == quiet + 8192,
             "net_mem sizes: quiet %zu, small %zu, lan %zu", quiet, small, lan);
    int peer = 1 - th_rank;
    if (th_rank == 0) {
        /* the sender: each step waits for the receiver's go (a 4-byte frame) */
        for (int i = 0; i < 10; i++)
            send_frame(peer, 100);
        wait_frames(1, "go 1");
        TH_CHECK(mem_now() == small, "sender after one small frame: %zu bytes, expected %zu", mem_now(), small);
        send_frame(peer, RMPI_TCP_LAN_FRAME);
        wait_frames(2, "go 2");
        for (int i = 0; i < 3000; i++)
            send_frame(peer, 4 + (size_t)(i * 37) % 1000);
        wait_frames(3, "go 3");
        send_frame(peer, RMPI_TCP_MAX_FRAME);
        wait_frames(4, "done");
    } else {
        wait_frames(10, "10 small frames");
        TH_CHECK(mem_now() == small, "receiver after small frames: %zu bytes, expected %zu (quiet %zu)", mem_now(),
                 small, quiet);
        send_frame(peer, 4);
        wait_frames(11, "the largest LAN frame");
        double t0 = th_now();
        TH_CHECK(mem_now() == lan, "receiver after a %d-byte frame: %zu bytes, expected %zu", RMPI_TCP_LAN_FRAME,
                 mem_now(), lan);
        while (mem_now() != quiet && th_now() < t0 + 5)
            th_progress();
        double idle = th_now() - t0;
        TH_CHECK(mem_now() == quiet, "receiver still holds %zu bytes after %.1f s idle (quiet: %zu)", mem_now(), idle,
                 quiet);
        TH_CHECK(idle >= 0.2, "buffer freed after %.3f s, before RMPI_TCP_BUF_IDLE (0.2 s)", idle);
        TH_CHECK(stats().mem_peak[RMPI_NET_CHAN_DEDICATED] >= lan, "peak %zu < %zu",
                 stats().mem_peak[RMPI_NET_CHAN_DEDICATED], lan);
        send_frame(peer, 4);
        /* the burst piles up in the socket while this rank sleeps: reads fill the buffer */
        usleep(200000);
        size_t most = 0;
        while (got_frames < 11 + 3000) {
            th_progress();
            most = RMPI_MAX(most, mem_now());
        }
        TH_CHECK(most > small && most <= lan,
                 "a burst of frames of at most 1003 bytes: buffer grew to %zu (%zu .. %zu)", most, small, lan);
        send_frame(peer, 4);
        wait_frames(11 + 3000 + 1, "the largest frame");
        TH_CHECK(mem_now() == rmpi_tcp_peer_bytes(RMPI_TCP_MAX_FRAME), "after the largest frame: %zu, expected %zu",
                 mem_now(), rmpi_tcp_peer_bytes(RMPI_TCP_MAX_FRAME));
        send_frame(peer, 4);
    }
    /* let the last frame leave before closing */
    double until = th_now() + 0.1;
    while (th_now() < until)
        th_progress();
    TH_CHECK(!bad_frames, "short frames");
    th_finish();
}

/* sizes around every step of the buffer's growth */
static size_t churn_size(uint64_t *x)
{
    static const size_t edge[] = {4,
                                  64,
                                  4080,
                                  4088,
                                  4089,
                                  4096,
                                  8184,
                                  8185,
                                  16376,
                                  16377,
                                  32760,
                                  32761,
                                  65528,
                                  65529,
                                  65792,
                                  73984,
                                  73985,
                                  1 << 20,
                                  RMPI_TCP_MAX_FRAME};
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    size_t e = edge[*x % RMPI_ARRAY_LEN(edge)];
    size_t d = (size_t)(*x >> 32) % 9;
    /* mostly small frames, so the 3000 stay quick; an edge +-4 every 8th */
    if (*x % 8)
        return 4 + (size_t)(*x >> 40) % 2000;
    return e - 4 + d > RMPI_TCP_MAX_FRAME ? RMPI_TCP_MAX_FRAME : RMPI_MAX(e - 4 + d, 4);
}

static void churn_body(void)
{
    th_open(on_frame, on_lost);
    sbuf = malloc(RMPI_TCP_MAX_FRAME);
    const size_t quiet = rmpi_tcp_peer_bytes(0);
    uint64_t x = 0x9e3779b97f4a7c15ull + (uint64_t)th_rank;
    int peer = 1 - th_rank, saw_quiet = 0;
    for (int i = 0; i < 3000; i++) {
        send_frame(peer, churn_size(&x));
        th_progress();
        if (i % 300 == 299) {
            double until = th_now() + 0.02;
            while (th_now() < until) {
                th_progress();
                saw_quiet |= got_frames > 0 && mem_now() <= quiet;
            }
        }
    }
    wait_frames(3000, "3000 frames");
    double until = th_now() + 0.2;
    while (th_now() < until) {
        th_progress();
        saw_quiet |= mem_now() <= quiet;
    }
    TH_CHECK(got_frames == 3000 && !bad_frames, "%d frames, %d short", got_frames, bad_frames);
    TH_CHECK(saw_quiet, "the receive buffer was never freed with RMPI_TCP_BUF_IDLE=1");
    th_finish();
}

int main(void)
{
    int bad = 0;
    const char *idle200[] = {"RMPI_TCP_BUF_IDLE=200", NULL};
    bad |= th_run("grow/n2", 2, idle200, 0, grow_body);
    const char *idle1[] = {"RMPI_TCP_BUF_IDLE=1", NULL};
    bad |= th_run("churn/n2", 2, idle1, 0, churn_body);
    return bad;
}
