/*
 * TCP provider: a stranger on the host gets nowhere (docs/wire/auth.md). Two ranks open
 * their rails; rank 1 first plays a process outside the job that read rank 0's address
 * card and the job's tag (both easy to learn) but not the job key, and tries, on raw
 * sockets: a HELLO as rank 1 answered with a made-up AUTH; a HELLO followed at once by a
 * DATA frame (no AUTH); a DATA frame with no handshake at all. Each connection must be
 * closed without a HELLO_ACK, and rank 0 must deliver nothing of them. Then the real
 * rank 1 streams frames: all arrive, in order, and rank 0 counted the refusals.
 */
#include "tcp_harness.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "net/tcp/tcp.h"

#define NFRAMES 500

static int got, bad;

static void on_frame(rmpi_rail_t *rail, int peer, const void *frame, size_t len)
{
    int v;
    if (peer != 1 || len != 64) {
        bad++;
        return;
    }
    memcpy(&v, frame, sizeof v);
    bad += v != got;
    got++;
}

static void on_lost(rmpi_rail_t *rail, int peer, const char *why) { th_fail("peer %d lost: %s", peer, why); }

static int stranger_connect(uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    TH_CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "stranger cannot connect: %s",
             strerror(errno));
    struct timeval tv = {.tv_sec = 3};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

static void send_bytes(int fd, const void *b, size_t n)
{
    TH_CHECK(send(fd, b, n, MSG_NOSIGNAL) == (ssize_t)n, "stranger send: %s", strerror(errno));
}

static size_t hello(uint8_t *h)
{
    size_t hl = rmpi_tcp_hdr(h, RMPI_TCP_HELLO, 0);
    uint8_t *e = h + RMPI_TCP_BASE_HDR;
    memset(e, 0, RMPI_TCP_HELLO_EXT);
    rmpi_tcp_st32(e, RMPI_TCP_MAGIC);
    rmpi_tcp_st16(e + 4, RMPI_TCP_WIRE_VERSION);
    rmpi_tcp_st32(e + 8, 1);  /* from: rank 1 */
    rmpi_tcp_st32(e + 12, 0); /* to: rank 0 */
    rmpi_tcp_st32(e + 16, 2); /* the world's size */
    /* job tags: the harness's world tag (0), as a stranger would compute from ps */
    return hl;
}

static size_t data_frame(uint8_t *f)
{
    size_t hl = rmpi_tcp_hdr(f, RMPI_TCP_DATA, 64);
    memset(f + hl, 0x77, 64);
    return hl + 64;
}

/* Reads until EOF; fails if a HELLO_ACK (or anything but an optional CHALLENGE) comes. */
static void expect_closed(int fd, const char *what)
{
    uint8_t buf[256];
    size_t have = 0;
    for (;;) {
        ssize_t n = recv(fd, buf + have, sizeof buf - have, 0);
        TH_CHECK(n >= 0, "%s: the connection was neither answered nor closed (%s)", what, strerror(errno));
        if (n == 0)
            break;
        have += (size_t)n;
        TH_CHECK(buf[0] == RMPI_TCP_CHALLENGE, "%s: got frame type %u instead of a closed connection", what, buf[0]);
        if (have >= RMPI_TCP_BASE_HDR + RMPI_AUTH_NONCE_BYTES + RMPI_AUTH_MAC_BYTES)
            have = 0; /* the challenge: keep reading for the close */
    }
    close(fd);
}

static void stranger(void)
{
    char card[1024];
    TH_CHECK(rmpi_pmi_get("tcp-0", card, sizeof card) == 0, "no card of rank 0");
    const char *colon = strrchr(card, ':');
    TH_CHECK(colon, "card '%s'", card);
    uint16_t port = (uint16_t)atoi(colon + 1);
    uint8_t h[RMPI_TCP_HDR_MAX + 80], f[RMPI_TCP_BASE_HDR + 64];

    /* 1: HELLO as rank 1, then a made-up AUTH. */
    int fd = stranger_connect(port);
    send_bytes(fd, h, hello(h));
    uint8_t ch[RMPI_TCP_BASE_HDR + RMPI_AUTH_NONCE_BYTES + RMPI_AUTH_MAC_BYTES];
    TH_CHECK(recv(fd, ch, sizeof ch, MSG_WAITALL) == (ssize_t)sizeof ch && ch[0] == RMPI_TCP_CHALLENGE,
             "no challenge for the stranger's HELLO");
    size_t al = rmpi_tcp_hdr(h, RMPI_TCP_AUTH, 0);
    memset(h + RMPI_TCP_BASE_HDR, 0x42, RMPI_AUTH_MAC_BYTES);
    send_bytes(fd, h, al);
    send_bytes(fd, f, data_frame(f));
    expect_closed(fd, "forged AUTH");

    /* 2: HELLO, then DATA without answering the challenge. */
    fd = stranger_connect(port);
    send_bytes(fd, h, hello(h));
    send_bytes(fd, f, data_frame(f));
    expect_closed(fd, "DATA before AUTH");

    /* 3: DATA with no handshake. */
    fd = stranger_connect(port);
    send_bytes(fd, f, data_frame(f));
    expect_closed(fd, "DATA without HELLO");
}

static void body(void)
{
    th_open(on_frame, on_lost);
    if (th_rank == 1) {
        stranger();
        uint8_t f[64];
        for (int i = 0; i < NFRAMES; i++) {
            memset(f, 0, sizeof f);
            memcpy(f, &i, sizeof i);
            struct iovec iov = {f, sizeof f};
            TH_CHECK(rmpi_tcp_ops.send(th_rail, 0, &iov, 1) == 0, "send %d", i);
            th_progress();
        }
        TH_WAIT(!rmpi_tcp_ops.backlog || rmpi_tcp_ops.backlog(th_rail, 0) == 0, 30, "the frames to leave");
    } else {
        TH_WAIT(got == NFRAMES, 30, "every frame of the real rank 1");
        TH_CHECK(bad == 0, "%d frames not from the real rank 1, or out of order", bad);
        TH_CHECK(rmpi_net_sec_stats.refused == 3, "rank 0 counted %llu refusals",
                 (unsigned long long)rmpi_net_sec_stats.refused);
    }
    TH_CHECK(rmpi_pmi_fence() == 0, "fence");
    th_finish();
}

int main(void) { return th_run("stranger", 2, NULL, 0, body); }
