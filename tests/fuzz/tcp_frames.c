/*
 * libFuzzer harness of the TCP provider's frame parser (rmpi_tcp_read and what it calls:
 * the buffered reader, rx_parse, the control-frame handlers of emulated RDMA in
 * tcp_rdma.c, the registration checks). The input is the byte stream a peer sends on an
 * established connection (docs/wire/tcp.md "Frames"), fed through a socketpair to a rail
 * made by hand: only its receive side is real, nothing connects or listens. The peer may
 * aim at a 64 KiB registered region at 0x5a0000000000 whose rkey it writes as
 * 0x100000001 (the harness puts the real rkey wherever those 8 bytes appear, so the corpus
 * stays valid however rkeys are made) and answer a 4 KiB get this side posted (id 1).
 * Handshake frames (HELLO, HELLO_ACK) are not allowed on an established connection and
 * end it like any protocol error. Nothing may crash, hang, exit or read out of bounds.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/tcp/tcp.h"

#define REGION_ADDR 0x5a0000000000ull
#define REGION_LEN 65536

static rmpi_tcp_rail_t rail;
static rmpi_tcp_prov_t prov;
static char *region;
static rmpi_mr_t region_mr;
static char get_local[4096];
static unsigned long long frames, bytes, lost;

static void on_frame(rmpi_rail_t *r, int peer, const void *frame, size_t len)
{
    const unsigned char *f = frame;
    frames++;
    for (size_t i = 0; i < len; i++) /* every byte must be readable */
        bytes += f[i];
}

static void on_lost(rmpi_rail_t *r, int peer, const char *why) { lost++; }

static void op_done(rmpi_net_op_t *op) { op->ctx = NULL; }

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    rmpi_tcp_rail_t *r = &rail;
    r->pub.ops = &rmpi_tcp_ops;
    snprintf(r->pub.hints.name, sizeof r->pub.hints.name, "tcp:fuzz");
    r->prov = &prov;
    prov.npeers = 2;
    r->env.rank = 0;
    r->env.size = 2;
    r->env.on_frame = on_frame;
    r->env.on_peer_lost = on_lost;
    r->epfd = epoll_create1(EPOLL_CLOEXEC);
    r->peers = calloc(2, sizeof *r->peers);
    rmpi_list_t *lists[] = {&r->handshaking, &r->estab, &r->timed, &r->dead, &r->lostq};
    for (size_t i = 0; i < sizeof lists / sizeof *lists; i++)
        rmpi_list_init(lists[i]);
    r->chunk = 256 * 1024;
    r->timeout_ns = 1000000000ull;
    void *want = (void *)(uintptr_t)REGION_ADDR;
    region = mmap(want, REGION_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (region == MAP_FAILED)
        region = mmap(NULL, REGION_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    rmpi_net_mrtab_reg(&r->mr, region, REGION_LEN, &region_mr);
    return 0;
}

/* An established connection to rank 1 over one end of a socketpair; the other is returned. */
static rmpi_tcp_conn_t *connect_peer(int *other)
{
    rmpi_tcp_rail_t *r = &rail;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv))
        abort();
    *other = sv[1];
    rmpi_tcp_peer_t *p = rmpi_tcp_peer_get(r, 1);
    rmpi_tcp_conn_t *c = rmpi_xcalloc(1, sizeof *c);
    c->kind = RMPI_TCP_OBJ_CONN;
    c->fd = sv[0];
    c->state = RMPI_TCP_CONN_ESTABLISHED;
    c->rail = r;
    c->peer = p;
    c->rx_phase = RMPI_TCP_RX_FRAME;
    rmpi_list_init(&c->link);
    rmpi_list_push_back(&r->estab, &c->link);
    r->nconn++;
    r->nestab++;
    p->conn = c;
    p->state = RMPI_TCP_PEER_ESTABLISHED;
    rmpi_tcp_set_events(r, c, EPOLLIN);
    return c;
}

/* The input with the placeholder rkey replaced by the region's. */
static uint8_t *with_rkey(const uint8_t *data, size_t size)
{
    uint8_t *d = malloc(size ? size : 1), ph[8], key[8];
    memcpy(d, data, size);
    rmpi_tcp_st64(ph, 0x100000001ull);
    rmpi_tcp_st64(key, region_mr.rkey);
    for (size_t i = 0; i + 8 <= size; i++)
        if (!memcmp(d + i, ph, 8))
            memcpy(d + i, key, 8);
    return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *input, size_t size)
{
    rmpi_tcp_rail_t *r = &rail;
    uint8_t *data = with_rkey(input, size);
    int other;
    rmpi_tcp_conn_t *c = connect_peer(&other);
    rmpi_tcp_peer_t *p = c->peer;
    r->next_id = 0;
    rmpi_net_op_t get_op = {op_done, 0, 0, 0, &r->pub, &get_op};
    rmpi_tcp_get(&r->pub, 1, get_local, sizeof get_local, REGION_ADDR, region_mr.rkey, &get_op);
    size_t sent = 0;
    char sink[65536];
    for (int round = 0; round < 10000; round++) {
        if (sent < size) {
            ssize_t w = write(other, data + sent, size - sent);
            if (w > 0)
                sent += (size_t)w;
            if (sent == size)
                shutdown(other, SHUT_WR); /* then the reader sees the end of the stream */
        } else if (size == 0) {
            shutdown(other, SHUT_WR);
        }
        if (p->conn != c || c->state != RMPI_TCP_CONN_ESTABLISHED)
            break;
        rmpi_tcp_read(r, c);
        if (p->conn == c && c->state == RMPI_TCP_CONN_ESTABLISHED)
            rmpi_tcp_flush(r, p);
        while (read(other, sink, sizeof sink) > 0) /* the answers this side wrote */
            ;
        rmpi_tcp_run_completions(r);
    }
    rmpi_tcp_peer_fail(r, p, "end of the fuzz input");
    rmpi_tcp_reap(r);
    rmpi_tcp_run_completions(r);
    rmpi_tcp_peer_free(r, p);
    r->peers[1] = NULL;
    rmpi_tcp_reap(r);
    close(other);
    free(data);
    return 0;
}
