/* Peers and sockets: on-demand connect with retries, accept, the HELLO handshake and its
 * race rule, orderly close and failure (docs/wire/tcp.md, "Connection establishment"). */
#include "tcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

/* A single attempt on one address gives up after this long, so a dead address does not
 * use up the whole connect timeout while another address of the peer would work. */
#define ATTEMPT_NS (5ull * 1000000000ull)
#define BACKOFF_MIN_MS 5
#define BACKOFF_MAX_MS 500

static const char *addr_str(const struct sockaddr_in *a, char *buf, size_t len)
{
    char ip[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
    snprintf(buf, len, "%s:%u", ip, ntohs(a->sin_port));
    return buf;
}

static int linked(const rmpi_list_t *e) { return e->next != e; }

static void timer_arm(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p)
{
    if (!linked(&p->timer_link))
        rmpi_list_push_back(&r->timed, &p->timer_link);
}

void rmpi_tcp_set_events(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c, uint32_t events)
{
    if (c->state == RMPI_TCP_CONN_DEAD || c->events == events)
        return;
    struct epoll_event ev = {.events = events, .data.ptr = c};
    int op = c->events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    if (epoll_ctl(c->rail->epfd, op, c->fd, &ev) != 0)
        rmpi_fatal("tcp: epoll_ctl failed on a socket (%s).", strerror(errno));
    c->events = events;
}

/* Sets congestion control name on fd: 0, or -errno when the kernel refuses it; a refusal is
 * warned about once per *warned (NULL: not at all), naming the knob it came from. */
static int set_congestion(int fd, const char *name, const char *knob, int *warned)
{
    if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, (socklen_t)strlen(name)) == 0)
        return 0;
    int err = errno;
    if (warned && !*warned) {
        *warned = 1;
        rmpi_warn("RMPI_%s=%s: the kernel refused it (%s; see /proc/sys/net/ipv4/tcp_allowed_congestion_control); "
                  "its default congestion control is used.",
                  knob, name, strerror(err));
    }
    return -err;
}

/* The kernel's default congestion control, read from the first socket before any choice of
 * ours (every socket of the process lives in one network namespace): where a near peer's
 * socket returns to (far_congestion). "" until read. */
static char kernel_cc[16];

/* Whether congestion control is chosen per path (far_congestion decides at the handshake). */
static int path_choice(void)
{
    const char *set = rmpi_knobs.TCP_CONGESTION_CONTROL;
    return rmpi_knobs.WAN_TUNE && !(set && *set) && rmpi_knobs.TCP_FAR_RTT > 0;
}

/* Whether sockets are born with RMPI_TCP_FAR_CONGESTION. */
static int far_choice(void)
{
    const char *want = rmpi_knobs.TCP_FAR_CONGESTION;
    return path_choice() && want && *want;
}

/* RMPI_TCP_NEAR_CONGESTION, or NULL: a near socket takes the kernel's default. */
static const char *near_choice(void)
{
    const char *want = rmpi_knobs.TCP_NEAR_CONGESTION;
    return path_choice() && want && *want ? want : NULL;
}

/* RMPI_TCP_CONGESTION_CONTROL: the kernel's congestion control for every data socket. Why a
 * knob: on a long path BBR paces the bursts of a window-per-round-trip pattern at the rate it
 * measured on the earlier, smaller windows (1gbit@10ms, 32 messages of 128 B-8 KiB per window:
 * 1,030-1,440 msg/s with bbr against 1,450-1,575 with cubic, every MPI alike;
 * docs/results/wan.md). A name the kernel refuses is reported once and the default kept.
 * Empty, sockets are born with RMPI_TCP_FAR_CONGESTION instead, and a near peer's returns to
 * the kernel's default at the handshake (far_congestion). Born, not switched later: BBR's
 * start turns on the kernel's own pacing of the socket, and no later switch turns it off, so a
 * socket established under bbr and switched to cubic keeps pacing at cubic's rate estimate
 * (about 1.2-2 x cwnd per round trip): one stream at 1gbit@10ms spread a 16 KiB window over
 * 3.6 ms and took 23.8 ms per round trip of 20, against 0 ms and 20.4 when born cubic
 * (docs/results/wan.md, "Pacing left by bbr"). A listener's choice passes to the sockets it
 * accepts, established before accept() returns. */
static void congestion(int fd)
{
    static int warned;
    const char *cc = rmpi_knobs.TCP_CONGESTION_CONTROL;
    if (cc && *cc) {
        (void)set_congestion(fd, cc, "TCP_CONGESTION_CONTROL", &warned);
        return;
    }
    if (!path_choice())
        return;
    if (!kernel_cc[0]) {
        socklen_t len = sizeof kernel_cc - 1;
        if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, kernel_cc, &len) != 0)
            memset(kernel_cc, 0, sizeof kernel_cc);
    }
    /* a refusal keeps the default; far_congestion tries again and reports it */
    if (far_choice())
        (void)set_congestion(fd, rmpi_knobs.TCP_FAR_CONGESTION, "TCP_FAR_CONGESTION", NULL);
}

void rmpi_tcp_sockopts(rmpi_tcp_rail_t *r, int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    congestion(fd);
    if (r->sndbuf > 0) {
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &r->sndbuf, sizeof(r->sndbuf));
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &r->sndbuf, sizeof(r->sndbuf));
    }
}

rmpi_tcp_peer_t *rmpi_tcp_peer_get(rmpi_tcp_rail_t *r, int rank)
{
    rmpi_tcp_peer_t *p = r->peers[rank];
    if (RMPI_LIKELY(p != NULL))
        return p;
    p = rmpi_xcalloc(1, sizeof(*p));
    rmpi_tcp_mem_add(r->prov, sizeof(*p), 0);
    p->rank = rank;
    p->state = RMPI_TCP_PEER_IDLE;
    rmpi_list_init(&p->txq);
    rmpi_list_init(&p->rdq);
    rmpi_list_init(&p->ackq);
    rmpi_list_init(&p->cutq);
    rmpi_list_init(&p->gets);
    rmpi_list_init(&p->puts);
    rmpi_list_init(&p->timer_link);
    rmpi_list_init(&p->lost_link);
    rmpi_list_init(&p->back_link);
    r->peers[rank] = p;
    return p;
}

void rmpi_tcp_peer_free(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p)
{
    rmpi_tcp_conn_kill(r, p->conn);
    rmpi_tcp_conn_kill(r, p->pending);
    rmpi_list_t *lists[] = {&p->txq, &p->cutq, &p->rdq, &p->ackq, &p->gets, &p->puts};
    for (size_t i = 0; i < RMPI_ARRAY_LEN(lists); i++)
        while (!rmpi_list_empty(lists[i])) {
            rmpi_list_t *e = lists[i]->next;
            rmpi_list_remove(e);
            if (i < 2) /* frames */
                rmpi_tcp_tx_free((rmpi_tcp_tx_t *)(void *)e);
            else
                free(e);
        }
    rmpi_tcp_tx_free(p->cur_chunk);
    rmpi_list_remove(&p->timer_link);
    rmpi_list_remove(&p->lost_link);
    rmpi_list_remove(&p->back_link);
    rmpi_tcp_mem_add(r->prov, 0, sizeof(*p));
    free(p);
}

static rmpi_tcp_conn_t *conn_new(rmpi_tcp_rail_t *r, int fd, int state)
{
    rmpi_tcp_conn_t *c = rmpi_xcalloc(1, sizeof(*c));
    rmpi_tcp_mem_add(r->prov, sizeof(*c), 0);
    c->kind = RMPI_TCP_OBJ_CONN;
    c->fd = fd;
    c->state = state;
    c->rail = r;
    c->rx_phase = RMPI_TCP_RX_FRAME;
    c->rx_hs = 1;
    rmpi_list_init(&c->link);
    r->nconn++;
    return c;
}

void rmpi_tcp_conn_kill(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c)
{
    if (!c || c->state == RMPI_TCP_CONN_DEAD)
        return;
    r = c->rail;  /* an accepted socket may have moved to a sibling rail */
    close(c->fd); /* also leaves the epoll set */
    c->fd = -1;
    r->nconn--;
    r->nestab -= c->state == RMPI_TCP_CONN_ESTABLISHED;
    c->state = RMPI_TCP_CONN_DEAD;
    if (c->peer) {
        if (c->peer->conn == c)
            c->peer->conn = NULL;
        if (c->peer->pending == c)
            c->peer->pending = NULL;
    }
    rmpi_list_remove(&c->link);
    rmpi_list_push_back(&r->dead, &c->link);
}

static void attempt_start(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p);

/* Where to connect for p: the address of the peer's rail paired with this one (bound to
 * this rail's address, so the socket uses this rail's interface). A routed pair (no shared
 * subnet) lets the kernel pick the source and tries the peer's other eligible addresses
 * after it; whichever listener answers hands the socket to the paired rail. */
static int peer_card(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p)
{
    const rmpi_tcp_link_t *l = rmpi_tcp_link(r->prov, p->rank);
    if (!l || l->partner[r->idx] < 0)
        return -1;
    const rmpi_tcp_card_t *c = &l->card;
    p->target = l->partner[r->idx];
    p->naddr = 0;
    memset(&p->src, 0, sizeof(p->src));
    for (int k = -1; k < c->n; k++) {
        int j = k < 0 ? p->target : k;
        if (k >= 0 && (!l->routed || j == p->target || c->e[j].loopback))
            continue;
        struct sockaddr_in *a = &p->addr[p->naddr++];
        memset(a, 0, sizeof(*a));
        a->sin_family = AF_INET;
        a->sin_addr = c->e[j].addr;
        a->sin_port = htons(c->e[j].port);
    }
    if (!l->routed) {
        p->src.sin_family = AF_INET;
        p->src.sin_addr = r->me->addr;
    }
    p->have_card = 1;
    return 0;
}

static void kick(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, uint64_t timeout_ns)
{
    p->state = RMPI_TCP_PEER_CONNECTING;
    p->deadline = rmpi_time_ns() + timeout_ns;
    p->backoff_ms = BACKOFF_MIN_MS;
    p->retry_at = 0;
    attempt_start(r, p);
}

void rmpi_tcp_peer_kick(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p)
{
    if (p->state == RMPI_TCP_PEER_IDLE)
        kick(r, p, r->timeout_ns);
}

/* An attempt ended without a connection. advance: that address failed, try the next one;
 * otherwise the peer is alive (it refused in the race) and we retry the same address. */
static void attempt_failed(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, int err, int advance)
{
    uint64_t now = rmpi_time_ns();
    char a[64];
    addr_str(&p->addr[p->addr_next % p->naddr], a, sizeof(a));
    rmpi_log(2, "tcp: connection to rank %d at %s: %s", p->rank, a,
             advance ? (err ? strerror(err) : "not that rank") : "refused in the connect race");
    if (!advance)
        p->deadline = now + r->timeout_ns;
    if (now >= p->deadline) {
        rmpi_tcp_peer_fail(r, p,
                           "could not connect to rank %d at %s within %llu s (%s); is that rank alive? "
                           "Check that RMPI_TCP_IFACES names interfaces that reach it, or raise "
                           "RMPI_CONNECT_TIMEOUT",
                           p->rank, a, (unsigned long long)(r->timeout_ns / 1000000000ull),
                           err ? strerror(err) : "no answer");
        return;
    }
    int wrapped = 1;
    if (advance) {
        p->addr_next = (p->addr_next + 1) % p->naddr;
        wrapped = p->addr_next == 0;
    }
    /* Back off only after every address was tried once, or when told to wait. */
    if (wrapped) {
        p->retry_at = now + (uint64_t)p->backoff_ms * 1000000ull;
        p->backoff_ms = RMPI_MIN(p->backoff_ms * 2, (unsigned)BACKOFF_MAX_MS);
    } else {
        p->retry_at = now;
    }
    timer_arm(r, p);
}

static void attempt_start(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p)
{
    if (!p->have_card && peer_card(r, p) != 0) {
        rmpi_tcp_peer_fail(r, p,
                           "rank %d published no TCP address that rail %s can use (PMI key tcp-%d); "
                           "check RMPI_TCP_IFACES on both hosts",
                           p->rank, r->pub.hints.name, p->rank);
        return;
    }
    int idx = p->addr_next % p->naddr;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        attempt_failed(r, p, errno, 1); /* out of descriptors: retry until the timeout */
        return;
    }
    rmpi_tcp_sockopts(r, fd);
    if (p->src.sin_family == AF_INET) {
        /* The port is chosen at connect(), so bound sockets do not use up ephemeral ports. */
        int one = 1;
        setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
        (void)bind(fd, (const struct sockaddr *)&p->src, sizeof(p->src));
    }
    if (connect(fd, (const struct sockaddr *)&p->addr[idx], sizeof(p->addr[idx])) != 0 && errno != EINPROGRESS) {
        int err = errno;
        close(fd);
        attempt_failed(r, p, err, 1);
        return;
    }
    rmpi_tcp_conn_t *c = conn_new(r, fd, RMPI_TCP_CONN_CONNECTING);
    c->peer = p;
    c->deadline = RMPI_MIN(rmpi_time_ns() + ATTEMPT_NS, p->deadline);
    p->pending = c;
    rmpi_tcp_set_events(r, c, EPOLLOUT);
    timer_arm(r, p);
}

/* The key a connection with peer proves: the job key within this world, the key its
 * connect/accept exchange agreed for a dynamic peer (docs/wire/auth.md). */
static const uint8_t *peer_key(rmpi_tcp_rail_t *r, int peer)
{
    if (peer < r->env.size)
        return rmpi_rt_job_key();
    const rmpi_tcp_link_t *l = peer < r->prov->npeers ? r->prov->links[peer] : NULL;
    return l && l->has_key ? l->key : NULL;
}

/* A handshake that did not prove the key: the socket is closed before any frame of it is
 * read. Warned a few times (a stranger could flood the log), always counted. */
static void refused(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c, const char *who, const char *why)
{
    if (rmpi_net_sec_stats.refused++ < 3)
        rmpi_warn("tcp: rank %d refused a connection on rail %s with %s: %s%s.", r->env.rank, r->pub.hints.name, who,
                  why, rmpi_net_sec_stats.refused == 3 ? " (further refusals are only counted: RMPI_REPORT)" : "");
    rmpi_tcp_conn_kill(r, c);
}

static void send_hello(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c)
{
    uint8_t h[RMPI_TCP_HDR_MAX];
    size_t hl = rmpi_tcp_hdr(h, RMPI_TCP_HELLO, 0);
    uint8_t *e = h + RMPI_TCP_BASE_HDR;
    memset(e, 0, RMPI_TCP_HELLO_EXT);
    rmpi_tcp_st32(e, RMPI_TCP_MAGIC);
    rmpi_tcp_st16(e + 4, RMPI_TCP_WIRE_VERSION);
    e[6] = (uint8_t)c->peer->target; /* the acceptor's rail this connection is for */
    e[7] = (uint8_t)r->idx;          /* the connector's rail */
    const rmpi_tcp_link_t *l = rmpi_tcp_link(r->prov, c->peer->rank);
    rmpi_tcp_st32(e + 8, (uint32_t)r->env.rank);
    rmpi_tcp_st32(e + 12, (uint32_t)l->id.rank);
    rmpi_tcp_st32(e + 16, (uint32_t)r->env.size);
    rmpi_tcp_st32(e + 20, r->job_tag);
    rmpi_tcp_st32(e + 24, l->id.world);
    /* above every epoch either side used: a new connection supersedes the old at the peer */
    c->peer->try_epoch = RMPI_MAX(c->peer->try_epoch, c->peer->epoch) + 1;
    rmpi_tcp_st32(e + 28, c->peer->try_epoch);
    if (rmpi_auth_random(e + 32, RMPI_AUTH_NONCE_BYTES))
        rmpi_fatal("getrandom failed: no nonce for the TCP handshake.");
    memcpy(c->hs, e, RMPI_TCP_HELLO_EXT);
    /* A fresh socket always has room for a header; anything else means it is broken. */
    if (rmpi_tcp_writev(c->fd, h, hl, NULL, 0) != (ssize_t)hl) {
        rmpi_tcp_peer_t *p = c->peer;
        rmpi_tcp_conn_kill(r, c);
        attempt_failed(r, p, ECONNRESET, 1);
        return;
    }
    c->hs_t = rmpi_time_ns();
    c->state = RMPI_TCP_CONN_HELLO_SENT;
    rmpi_tcp_set_events(r, c, EPOLLIN);
}

static void send_ack(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c, uint32_t status)
{
    uint8_t h[RMPI_TCP_HDR_MAX];
    size_t hl = rmpi_tcp_hdr(h, RMPI_TCP_HELLO_ACK, 0);
    rmpi_tcp_st32(h + RMPI_TCP_BASE_HDR, status);
    rmpi_tcp_st32(h + RMPI_TCP_BASE_HDR + 4, (uint32_t)r->env.rank);
    if (status == RMPI_TCP_ACK_ACCEPT) {
        /* Ahead of every queued frame: the connector reads nothing else before it. */
        rmpi_tcp_queue_ctrl(r, c->peer, h, hl, 1);
    } else {
        (void)rmpi_tcp_writev(c->fd, h, hl, NULL, 0);
        rmpi_tcp_conn_kill(r, c);
    }
}

static void established(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, rmpi_tcp_conn_t *c)
{
    /* Keepalive (switched on only while the socket waits, see rmpi_tcp_stall_check) makes
     * a live peer's kernel answer every second, which tells a busy peer from a dead path. */
    int idle = 1, intvl = 1, cnt = 127;
    setsockopt(c->fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    setsockopt(c->fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
    setsockopt(c->fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
    c->mark_ns = rmpi_time_ns();
    rmpi_list_remove(&c->link);
    rmpi_list_push_back(&r->estab, &c->link);
    r->nestab++;
    c->state = RMPI_TCP_CONN_ESTABLISHED;
    p->conn = c;
    p->cc = c->cc;
    p->state = RMPI_TCP_PEER_ESTABLISHED;
    p->retry_at = 0;
    r->pub.hints.down = 0; /* its link is up now: channels opened from here on start it live */
    rmpi_list_remove(&p->timer_link);
    if (!linked(&p->back_link))
        rmpi_list_push_back(&r->backq, &p->back_link);
    rmpi_log(2, "tcp: connected to rank %d (epoch %u)", p->rank, p->epoch);
}

/* An accepted socket whose HELLO names a sibling rail (a routed pair, which may reach any
 * of our listeners) moves to that rail's epoll set and lists. */
static rmpi_tcp_rail_t *conn_move(rmpi_tcp_rail_t *from, rmpi_tcp_rail_t *to, rmpi_tcp_conn_t *c)
{
    epoll_ctl(from->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    c->events = 0;
    rmpi_list_remove(&c->link);
    from->nconn--;
    c->rail = to;
    to->nconn++;
    rmpi_list_push_back(&to->handshaking, &c->link);
    rmpi_tcp_set_events(to, c, EPOLLIN);
    return to;
}

void rmpi_tcp_on_hello(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c, const uint8_t *e)
{
    uint32_t magic = rmpi_tcp_ld32(e), ver = rmpi_tcp_ld16(e + 4);
    unsigned target = e[6], src_rail = e[7];
    uint32_t from = rmpi_tcp_ld32(e + 8), to = rmpi_tcp_ld32(e + 12), size = rmpi_tcp_ld32(e + 16);
    uint32_t job = rmpi_tcp_ld32(e + 20), to_job = rmpi_tcp_ld32(e + 24);
    if (magic != RMPI_TCP_MAGIC || ver != RMPI_TCP_WIRE_VERSION) {
        rmpi_warn("tcp: rank %d refused a connection speaking TCP wire version %u (magic %#x); "
                  "this build speaks version %d. Run the same RailMPI build on every host.",
                  r->env.rank, ver, magic, RMPI_TCP_WIRE_VERSION);
        send_ack(r, c, RMPI_TCP_ACK_BADVER);
        return;
    }
    int peer = (int)from;
    if (to != (uint32_t)r->env.rank || to_job != r->job_tag) {
        send_ack(r, c, RMPI_TCP_ACK_NOTME);
        return;
    }
    if (job == r->job_tag && (size != (uint32_t)r->env.size || from >= size || from == (uint32_t)r->env.rank)) {
        send_ack(r, c, RMPI_TCP_ACK_NOTME);
        return;
    }
    if (job != r->job_tag && (peer = rmpi_tcp_find(r->prov, job, (int)from)) < 0) {
        /* A process of another job that this one has not added yet (it will, as part of
         * the same connect/accept): the connector retries. */
        send_ack(r, c, RMPI_TCP_ACK_LATER);
        return;
    }
    if (target != (unsigned)r->idx) {
        rmpi_tcp_rail_t *t = target < (unsigned)r->prov->nrails ? r->prov->rails[target] : NULL;
        if (!t || t->closing) {
            send_ack(r, c, RMPI_TCP_ACK_NOTME);
            return;
        }
        r = conn_move(r, t, c);
    }
    /* Both ends must agree on the pairing; a mismatch means the cards disagree. */
    const rmpi_tcp_link_t *l = rmpi_tcp_link(r->prov, peer);
    if (!l || l->partner[r->idx] != (int)src_rail) {
        rmpi_log(1, "tcp: rank %d's connection for its rail %u does not pair with rail %s here; refused", peer,
                 src_rail, r->pub.hints.name);
        send_ack(r, c, RMPI_TCP_ACK_NOTME);
        return;
    }
    const uint8_t *key = peer_key(r, peer);
    if (!key) {
        refused(r, c, "a process of another job", "no key was agreed with it");
        return;
    }
    /* Nothing is decided on a claim: the connector proves the key first (and we prove it
     * too, so it never trusts an impostor at our address). */
    memcpy(c->hs, e, RMPI_TCP_HELLO_EXT);
    c->hs_peer = peer;
    uint8_t h[RMPI_TCP_HDR_MAX];
    size_t hl = rmpi_tcp_hdr(h, RMPI_TCP_CHALLENGE, 0);
    uint8_t *nonce = c->hs + RMPI_TCP_HELLO_EXT;
    if (rmpi_auth_random(nonce, RMPI_AUTH_NONCE_BYTES))
        rmpi_fatal("getrandom failed: no nonce for the TCP handshake.");
    memcpy(h + RMPI_TCP_BASE_HDR, nonce, RMPI_AUTH_NONCE_BYTES);
    rmpi_auth_mac(key, "rmpi-tcp-acceptor", c->hs, sizeof c->hs, h + RMPI_TCP_BASE_HDR + RMPI_AUTH_NONCE_BYTES);
    if (rmpi_tcp_writev(c->fd, h, hl, NULL, 0) != (ssize_t)hl) {
        rmpi_tcp_conn_kill(r, c);
        return;
    }
    c->hs_t = rmpi_time_ns();
    c->state = RMPI_TCP_CONN_CHALLENGED;
}

/* The kernel's view of c's socket; 0, or -1 without TCP_INFO. */
static int tcp_info_of(const rmpi_tcp_conn_t *c, struct tcp_info *ti)
{
    socklen_t len = sizeof(*ti);
    memset(ti, 0, sizeof(*ti));
    return getsockopt(c->fd, IPPROTO_TCP, TCP_INFO, ti, &len);
}

/* The kernel's smoothed round trip of c's socket (TCP_INFO), ns; 0 when unknown. */
static uint64_t kernel_rtt(const rmpi_tcp_conn_t *c)
{
    struct tcp_info ti;
    return tcp_info_of(c, &ti) == 0 ? (uint64_t)ti.tcpi_rtt * 1000u : 0;
}

/* A far peer's socket (the same test as far_congestion's, without needing a congestion
 * choice): a send buffer fixed at twice the path's BDP (RMPI_TCP_FAR_SNDBUF). Autotuning
 * starts at tcp_wmem's default (16 KiB) and grows the buffer with the congestion window;
 * a pipelined stream of 16 KiB Bcasts across a 2 ms round trip then waits in our queue for
 * the buffer, and a fixed 8 MiB one was 1.06x faster (docs/results/wan.md). Only the send
 * side: the receive buffer's autotuning already reaches tcp_rmem's maximum. Near sockets,
 * RMPI_TCP_SNDBUF (which sets every socket) and RMPI_WAN_TUNE=0 leave it alone. */
static void far_sndbuf(rmpi_tcp_conn_t *c, int peer)
{
    rmpi_tcp_cc_t *cc = &c->cc;
    cc->sndbuf = 0;
    double far_ns = rmpi_knobs.TCP_FAR_RTT * 1e3;
    if (!rmpi_knobs.WAN_TUNE || c->rail->sndbuf > 0 || far_ns <= 0 || !cc->rtt || (double)cc->rtt < far_ns)
        return;
    const rmpi_tcp_rail_t *r = c->rail;
    int want = rmpi_tcp_far_sndbuf((double)cc->rtt, (double)r->speed, rmpi_knobs.TCP_FAR_SNDBUF, r->wmem_max);
    if (want <= 0 || setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &want, sizeof want) != 0)
        return;
    socklen_t len = sizeof cc->sndbuf;
    if (getsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &cc->sndbuf, &len) != 0)
        cc->sndbuf = want;
    rmpi_log(1, "tcp: rank %d's path round trip %.1f us at connect: send buffer %d bytes", peer, (double)cc->rtt * 1e-3,
             cc->sndbuf);
}

/* Once the handshake has timed the path, before the first data frame: a far peer's socket
 * keeps RMPI_TCP_FAR_CONGESTION, which it was born with (congestion()), a near peer's takes
 * RMPI_TCP_NEAR_CONGESTION (cubic, which it was born with: no switch) or, that empty, the
 * kernel's default (a socket may switch at any time; bbr's start then turns its pacing on, as
 * for any bbr socket). Near and cubic: bbr drains a flow that never idles to 4 packets for
 * 200 ms every 10 s (ProbeRTT), and a stream striped over rails waits for the rail that
 * probes, so every probe dips the whole stream (docs/results/multirail.md, "Steady
 * variation: bbr's probes"). The round trip is the kernel's smallest sample (SYN and
 * handshake segments): load on either host only inflates it, and a near peer taken for far
 * loses nothing on a short path, where cubic and bbr fill the window alike. Far: the
 * window-per-round-trip bursts of message rate that bbr paces slowly (see congestion();
 * docs/results/wan.md, "Congestion control per path"). */
static void far_congestion(rmpi_tcp_conn_t *c, int peer)
{
    rmpi_tcp_cc_t *cc = &c->cc;
    cc->rtt = rmpi_tcp_min_rtt_ns(c->fd);
    if (!cc->rtt)
        cc->rtt = kernel_rtt(c);
    const char *want = rmpi_knobs.TCP_FAR_CONGESTION;
    double far_ns = rmpi_knobs.TCP_FAR_RTT * 1e3;
    cc->far = 0;
    cc->near = 0;
    int far = cc->rtt && (double)cc->rtt >= far_ns;
    if (far_choice() && far) {
        /* Set again (the socket was born with it, unless the kernel refused): the refusal's
         * reason, for RMPI_REPORT. The default's refusal (an unprivileged process where the
         * kernel does not allow cubic) is only shown there; a name the user chose is warned
         * about once. */
        static int warned;
        int err = set_congestion(c->fd, want, "TCP_FAR_CONGESTION", strcmp(want, "cubic") ? &warned : NULL);
        cc->far = err ? err : 1;
        rmpi_log(1, "tcp: rank %d's path round trip %.1f us at connect: congestion control %s%s", peer,
                 (double)cc->rtt * 1e-3, want, err ? " refused by the kernel" : "");
    } else if (!far && near_choice()) {
        static int warned;
        const char *near = near_choice();
        int err = set_congestion(c->fd, near, "TCP_NEAR_CONGESTION", strcmp(near, "cubic") ? &warned : NULL);
        cc->near = err ? err : 1;
    } else if (path_choice() && kernel_cc[0]) {
        (void)set_congestion(c->fd, kernel_cc, "TCP_NEAR_CONGESTION", NULL);
    }
    far_sndbuf(c, peer);
    /* read back, for RMPI_REPORT: what the kernel runs, whoever chose it */
    socklen_t len = sizeof cc->name - 1;
    memset(cc->name, 0, sizeof cc->name);
    if (getsockopt(c->fd, IPPROTO_TCP, TCP_CONGESTION, cc->name, &len) != 0)
        cc->name[0] = 0;
}

/* The handshake's round trip: our HELLO (connector) or CHALLENGE (acceptor) to the answer
 * that proved the key. It includes the peer's time to notice the frame in its progress
 * loop, so it is the path's first guess, which the kernel's and the VC's samples replace. */
static void handshake_rtt(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c, int peer)
{
    uint64_t now = rmpi_time_ns();
    far_congestion(c, peer);
    if (!r->env.on_rtt || !c->hs_t)
        return;
    r->env.on_rtt(&r->pub, peer, now - c->hs_t, RMPI_NET_RTT_HANDSHAKE);
    /* The kernel timed the SYN and the handshake's segments without our delays: its
     * estimate is the better first one, and needs no wait for the next poll. */
    uint64_t k = kernel_rtt(c);
    if (k)
        r->env.on_rtt(&r->pub, peer, k, RMPI_NET_RTT_KERNEL);
}

void rmpi_tcp_on_challenge(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c, const uint8_t *e)
{
    rmpi_tcp_peer_t *p = c->peer;
    char who[48];
    snprintf(who, sizeof who, "rank %d", p->rank);
    const uint8_t *key = peer_key(r, p->rank);
    memcpy(c->hs + RMPI_TCP_HELLO_EXT, e, RMPI_AUTH_NONCE_BYTES);
    if (!key || rmpi_auth_verify(key, "rmpi-tcp-acceptor", c->hs, sizeof c->hs, e + RMPI_AUTH_NONCE_BYTES)) {
        /* Whoever answered at that address cannot prove the key: try the next address. */
        refused(r, c, who, "the process that answered could not prove the job key");
        attempt_failed(r, p, 0, 1);
        return;
    }
    handshake_rtt(r, c, p->rank);
    uint8_t h[RMPI_TCP_HDR_MAX];
    size_t hl = rmpi_tcp_hdr(h, RMPI_TCP_AUTH, 0);
    rmpi_auth_mac(key, "rmpi-tcp-connector", c->hs, sizeof c->hs, h + RMPI_TCP_BASE_HDR);
    if (rmpi_tcp_writev(c->fd, h, hl, NULL, 0) != (ssize_t)hl) {
        rmpi_tcp_conn_kill(r, c);
        attempt_failed(r, p, ECONNRESET, 0);
        return;
    }
    c->state = RMPI_TCP_CONN_AUTH_SENT;
}

void rmpi_tcp_on_auth(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c, const uint8_t *e)
{
    int peer = c->hs_peer;
    const uint8_t *key = peer_key(r, peer);
    if (!key || rmpi_auth_verify(key, "rmpi-tcp-connector", c->hs, sizeof c->hs, e)) {
        char who[48];
        snprintf(who, sizeof who, "a process claiming to be rank %d", peer);
        refused(r, c, who, "it could not prove the job key");
        return;
    }
    handshake_rtt(r, c, peer);
    rmpi_tcp_peer_t *p = rmpi_tcp_peer_get(r, peer);
    uint32_t epoch = rmpi_tcp_ld32(c->hs + 28);
    if (p->state == RMPI_TCP_PEER_CLOSED || epoch <= p->epoch) {
        send_ack(r, c, RMPI_TCP_ACK_DUP); /* connected by now, or a late attempt */
        return;
    }
    if (p->state == RMPI_TCP_PEER_ESTABLISHED || p->state == RMPI_TCP_PEER_LOST) {
        /* The connector gave up on our connection (a newer epoch): it is stale, and is
         * reported lost before the new one is used (unread bytes of it are never read). */
        rmpi_tcp_peer_fail(r, p, "rank %d opened a new connection (epoch %u) in place of this one (epoch %u)", p->rank,
                           epoch, p->epoch);
        rmpi_tcp_report_lost(r, p);
        p->state = RMPI_TCP_PEER_IDLE;
    }
    /* Both HELLOs are on the wire: the lower rank's connection wins on both sides. If ours
     * has not sent its HELLO yet, the peer never saw it and we may drop it instead. */
    if (p->pending && (p->pending->state == RMPI_TCP_CONN_HELLO_SENT || p->pending->state == RMPI_TCP_CONN_AUTH_SENT) &&
        rmpi_tcp_lower(r->prov, peer)) {
        send_ack(r, c, RMPI_TCP_ACK_RACE);
        return;
    }
    if (p->pending)
        rmpi_log(2, "tcp: rank %d's connection wins over ours (connect race)", p->rank);
    rmpi_tcp_conn_kill(r, p->pending);
    c->peer = p;
    p->epoch = epoch;
    established(r, p, c);
    send_ack(r, c, RMPI_TCP_ACK_ACCEPT);
    if (r->closing && !p->goodbye_sent) {
        uint8_t h[RMPI_TCP_HDR_MAX];
        rmpi_tcp_queue_ctrl(r, p, h, rmpi_tcp_hdr(h, RMPI_TCP_GOODBYE, 0), 0);
        p->goodbye_sent = 1;
    }
    rmpi_tcp_flush(r, p);
}

void rmpi_tcp_on_hello_ack(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c, const uint8_t *e)
{
    rmpi_tcp_peer_t *p = c->peer;
    uint32_t status = rmpi_tcp_ld32(e), rank = rmpi_tcp_ld32(e + 4);
    if (p->pending != c || p->state != RMPI_TCP_PEER_CONNECTING) {
        rmpi_tcp_conn_kill(r, c);
        return;
    }
    const rmpi_tcp_link_t *l = rmpi_tcp_link(r->prov, p->rank);
    int want = l ? l->id.rank : p->rank;
    /* Only a peer that proved the key (AUTH_SENT: its CHALLENGE checked) can accept. */
    if (status == RMPI_TCP_ACK_ACCEPT && rank == (uint32_t)want && c->state == RMPI_TCP_CONN_AUTH_SENT) {
        p->pending = NULL;
        p->epoch = rmpi_tcp_ld32(c->hs + 28);
        established(r, p, c);
        rmpi_tcp_flush(r, p);
        return;
    }
    rmpi_tcp_conn_kill(r, c);
    if (status == RMPI_TCP_ACK_BADVER) {
        rmpi_tcp_peer_fail(r, p,
                           "rank %d speaks another TCP wire version; run the same RailMPI build "
                           "on every host",
                           p->rank);
        return;
    }
    /* RACE/DUP: the peer is alive and its own connection is coming; LATER: it has yet to
     * add us; NOTME: another process answered at that address, so try the next one. */
    attempt_failed(r, p, 0, status == RMPI_TCP_ACK_NOTME || rank != (uint32_t)want || status == RMPI_TCP_ACK_ACCEPT);
}

void rmpi_tcp_accept(rmpi_tcp_rail_t *r, rmpi_tcp_listener_t *l)
{
    for (;;) {
        int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        congestion(fd);
        rmpi_tcp_conn_t *c = conn_new(r, fd, RMPI_TCP_CONN_ACCEPTED);
        c->deadline = rmpi_time_ns() + r->timeout_ns;
        rmpi_list_push_back(&r->handshaking, &c->link);
        rmpi_tcp_set_events(r, c, EPOLLIN);
    }
}

void rmpi_tcp_conn_broken(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c, int err)
{
    rmpi_tcp_peer_t *p = c->peer;
    switch (c->state) {
    case RMPI_TCP_CONN_ACCEPTED:
    case RMPI_TCP_CONN_CHALLENGED:
        rmpi_tcp_conn_kill(r, c); /* a connector that lost the race or gave up */
        break;
    case RMPI_TCP_CONN_CONNECTING:
        rmpi_tcp_conn_kill(r, c);
        attempt_failed(r, p, err ? err : ECONNRESET, 1);
        break;
    case RMPI_TCP_CONN_HELLO_SENT:
    case RMPI_TCP_CONN_AUTH_SENT:
        /* Refused without a readable answer, or the peer went away: retry the same address. */
        rmpi_tcp_conn_kill(r, c);
        attempt_failed(r, p, err, 0);
        break;
    case RMPI_TCP_CONN_ESTABLISHED:
        if (p->goodbye_sent && r->closing)
            rmpi_tcp_peer_closed(r, p);
        else if (!err || err == ECONNRESET || err == EPIPE)
            rmpi_tcp_peer_fail(r, p, "connection reset by peer");
        else
            rmpi_tcp_peer_fail(r, p, "%s", strerror(err));
        break;
    default: break;
    }
}

int rmpi_tcp_conn_event(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c, uint32_t ev)
{
    if (c->state == RMPI_TCP_CONN_CONNECTING) {
        int err = 0;
        socklen_t len = sizeof(err);
        if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
            err = errno;
        if (err) {
            rmpi_tcp_peer_t *p = c->peer;
            rmpi_tcp_conn_kill(r, c);
            attempt_failed(r, p, err, 1);
        } else if (ev & EPOLLOUT) {
            send_hello(r, c);
        }
        return 0;
    }
    int frames = 0;
    if (ev & (EPOLLIN | EPOLLERR | EPOLLHUP))
        frames = rmpi_tcp_read(r, c);
    if ((ev & EPOLLOUT) && c->state == RMPI_TCP_CONN_ESTABLISHED && c->rail == r)
        rmpi_tcp_flush(r, c->peer);
    return frames;
}

void rmpi_tcp_peer_fail(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, const char *fmt, ...)
{
    if (p->state == RMPI_TCP_PEER_LOST || p->state == RMPI_TCP_PEER_CLOSED)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->lost_why, sizeof(p->lost_why), fmt, ap);
    va_end(ap);
    p->state = RMPI_TCP_PEER_LOST;
    rmpi_list_remove(&p->back_link);
    if (p->conn) {
        /* Abort, not close: the kernel would go on sending what is queued (an orphan socket),
         * and a link that comes back would deliver the old writes. */
        struct linger lg = {1, 0};
        setsockopt(p->conn->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    }
    rmpi_tcp_conn_kill(r, p->conn);
    rmpi_tcp_conn_kill(r, p->pending);
    rmpi_list_remove(&p->timer_link);
    if (!linked(&p->lost_link))
        rmpi_list_push_back(&r->lostq, &p->lost_link);
}

void rmpi_tcp_peer_closed(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p)
{
    if (p->state == RMPI_TCP_PEER_LOST || p->state == RMPI_TCP_PEER_CLOSED)
        return;
    p->state = RMPI_TCP_PEER_CLOSED;
    rmpi_tcp_conn_kill(r, p->conn);
    rmpi_tcp_conn_kill(r, p->pending);
    rmpi_list_remove(&p->timer_link);
    if (rmpi_tcp_has_work(p))
        if (!linked(&p->lost_link))
            rmpi_list_push_back(&r->lostq, &p->lost_link);
    rmpi_log(2, "tcp: rank %d closed its connection", p->rank);
}

void rmpi_tcp_timers(rmpi_tcp_rail_t *r)
{
    uint64_t now = rmpi_time_ns();
    rmpi_list_t *pos, *tmp;
    rmpi_list_for_each_safe(pos, tmp, &r->timed)
    {
        rmpi_tcp_peer_t *p = RMPI_CONTAINER_OF(pos, rmpi_tcp_peer_t, timer_link);
        rmpi_tcp_conn_t *c = p->pending;
        if (c && c->state == RMPI_TCP_CONN_CONNECTING && now >= c->deadline) {
            rmpi_tcp_conn_kill(r, c);
            attempt_failed(r, p, ETIMEDOUT, 1);
        }
        if (p->state == RMPI_TCP_PEER_CONNECTING && !p->pending && p->retry_at && now >= p->retry_at) {
            p->retry_at = 0;
            attempt_start(r, p);
        }
        int need = p->state == RMPI_TCP_PEER_CONNECTING &&
                   (p->retry_at || (p->pending && p->pending->state == RMPI_TCP_CONN_CONNECTING));
        if (!need)
            rmpi_list_remove(&p->timer_link);
    }
    rmpi_list_for_each_safe(pos, tmp, &r->handshaking)
    {
        rmpi_tcp_conn_t *c = RMPI_CONTAINER_OF(pos, rmpi_tcp_conn_t, link);
        if (now >= c->deadline)
            rmpi_tcp_conn_kill(r, c);
    }
}

static void keepalive(rmpi_tcp_conn_t *c, int on)
{
    if (c->keepalive != on && setsockopt(c->fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on)) == 0)
        c->keepalive = on;
}

/* Whether the peer's host has stopped answering on c: it sent nothing (data or ACK) for
 * ms, and something of ours is waiting for its answer (unacknowledged data, a retransmission,
 * or a zero-window or keepalive probe). A host that answered our last probe is alive even if
 * it has been quiet longer (zero-window probes back off to minutes). Without TCP_INFO the
 * silence of the application alone decides. */
static int peer_unresponsive(const rmpi_tcp_conn_t *c, uint64_t ms)
{
    struct tcp_info ti;
    if (tcp_info_of(c, &ti) != 0)
        return 1;
    uint64_t silent = RMPI_MIN(ti.tcpi_last_data_recv, ti.tcpi_last_ack_recv);
    return silent >= ms && (ti.tcpi_probes || ti.tcpi_retransmits || ti.tcpi_unacked);
}

/* A socket stalls when it has work (output queued, a get outstanding, or bytes the kernel
 * still holds unacknowledged), nothing moved for RMPI_RAIL_TIMEOUT, and the peer's host left
 * our packets unanswered that long. That last test keeps a peer that is merely busy (not
 * calling progress, its socket buffers full) from being declared lost: its kernel still
 * ACKs data and answers probes (keepalive is switched on while a socket waits, so there is
 * always something to answer). A link that went down silently (TCP would retransmit for
 * minutes) is caught. Idle sockets never stall, and time progress did not run is not
 * counted. */
void rmpi_tcp_stall_check(rmpi_tcp_rail_t *r, uint64_t now)
{
    int fresh = now - r->last_check > r->stall_ns / 2;
    r->last_check = now;
    rmpi_list_t *pos, *tmp;
    rmpi_list_for_each_safe(pos, tmp, &r->estab)
    {
        rmpi_tcp_conn_t *c = RMPI_CONTAINER_OF(pos, rmpi_tcp_conn_t, link);
        rmpi_tcp_peer_t *p = c->peer;
        if (fresh || c->moved != c->mark_moved) {
            c->mark_moved = c->moved;
            c->mark_ns = now;
            continue;
        }
        int busy = rmpi_tcp_has_work(p);
        if (!busy && c->wrote) {
            int outq = 0;
            if (ioctl(c->fd, SIOCOUTQ, &outq) == 0 && outq == 0)
                c->wrote = 0;
            busy = c->wrote;
        }
        if (!busy) {
            keepalive(c, 0);
            c->mark_ns = now;
            continue;
        }
        keepalive(c, 1);
        if (now - c->mark_ns < r->stall_ns)
            continue;
        if (!peer_unresponsive(c, r->stall_ns / 1000000u))
            continue;
        rmpi_tcp_peer_fail(r, p,
                           "no byte moved for %.1f s while data was waiting and rank %d's host stopped "
                           "answering, so the link is down or unreachable; raise RMPI_RAIL_TIMEOUT if "
                           "the network is only slow",
                           (double)(now - c->mark_ns) * 1e-9, p->rank);
    }
}

/* The peer acknowledged (written minus what the kernel still holds) or sent: one counter.
 * Bytes in flight count as waiting (TCP_INFO unacked segments), and so do bytes that are
 * not in flight while the peer's window is open: the kernel cannot send them (a local
 * link that went down takes its route along, and new data then never leaves, so nothing
 * is unacknowledged; seen as missed cuts in netns/multirail/adaptive-binding-cycles). A
 * peer that does not read closes its window, and its host still answers, so that wait is
 * not the rail's.
 * Frames queued behind a connection that is not made yet wait too (a cut link never
 * answers the SYN; CONNECT_TIMEOUT is for a peer that is not there at all). */
size_t rmpi_tcp_watch(rmpi_rail_t *rail, int peer, uint64_t *moved)
{
    rmpi_tcp_rail_t *r = rmpi_tcp_rail_of(rail);
    *moved = 0;
    if (peer < 0 || peer >= r->prov->npeers || peer == r->env.rank)
        return 0;
    rmpi_tcp_peer_t *p = rmpi_tcp_peer_get(r, peer);
    rmpi_tcp_conn_t *c = p->conn;
    if (p->state == RMPI_TCP_PEER_CONNECTING)
        return rmpi_tcp_has_output(p) ? 1 : 0;
    if (p->state != RMPI_TCP_PEER_ESTABLISHED || !c)
        return 0;
    int outq = 0;
    if (ioctl(c->fd, SIOCOUTQ, &outq) != 0 || outq < 0)
        outq = 0;
    *moved = c->txb - (uint64_t)outq + c->rxb;
    struct tcp_info ti;
    if (outq == 0 || tcp_info_of(c, &ti) != 0)
        return 0;
    if (ti.tcpi_unacked == 0 && rmpi_tcp_snd_wnd(c->fd) <= 0)
        return 0;
    return (size_t)outq;
}

void rmpi_tcp_abandon(rmpi_rail_t *rail, int peer, const char *why)
{
    rmpi_tcp_rail_t *r = rmpi_tcp_rail_of(rail);
    if (peer < 0 || peer >= r->prov->npeers || peer == r->env.rank)
        return;
    rmpi_tcp_peer_fail(r, rmpi_tcp_peer_get(r, peer), "%s", why);
}

void rmpi_tcp_path_poll(rmpi_tcp_rail_t *r, uint64_t now)
{
    r->last_path = now;
    if (!r->env.on_rtt)
        return;
    rmpi_list_t *pos, *tmp;
    rmpi_list_for_each_safe(pos, tmp, &r->estab)
    {
        rmpi_tcp_conn_t *c = RMPI_CONTAINER_OF(pos, rmpi_tcp_conn_t, link);
        if (c->moved == c->path_moved)
            continue;
        c->path_moved = c->moved;
        uint64_t k = kernel_rtt(c);
        if (k)
            r->env.on_rtt(&r->pub, c->peer->rank, k, RMPI_NET_RTT_KERNEL);
        k = rmpi_tcp_min_rtt_ns(c->fd);
        if (k)
            r->env.on_rtt(&r->pub, c->peer->rank, k, RMPI_NET_RTT_KERNEL_MIN);
    }
}

void rmpi_tcp_report_lost(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p)
{
    if (!linked(&p->lost_link))
        return;
    rmpi_list_remove(&p->lost_link);
    int lost = p->state == RMPI_TCP_PEER_LOST;
    /* Its ops fail and its queued frames go (the VC sends them again elsewhere); the ops'
     * callbacks run after on_peer_lost, so the caller hears why before it re-posts. */
    rmpi_tcp_fail_ops(r, p, lost ? -ECONNRESET : -EPIPE);
    if (lost && !r->closing && r->env.on_peer_lost)
        r->env.on_peer_lost(&r->pub, p->rank, p->lost_why);
}

void rmpi_tcp_report_up(rmpi_tcp_rail_t *r)
{
    while (!rmpi_list_empty(&r->backq)) {
        rmpi_tcp_peer_t *p = RMPI_CONTAINER_OF(r->backq.next, rmpi_tcp_peer_t, back_link);
        rmpi_list_remove(&p->back_link);
        if (p->state == RMPI_TCP_PEER_ESTABLISHED && !r->closing && r->env.on_peer_up)
            r->env.on_peer_up(&r->pub, p->rank, p->epoch);
    }
}

int rmpi_tcp_rejoin(rmpi_rail_t *rail, int peer, uint64_t timeout_ns)
{
    rmpi_tcp_rail_t *r = rmpi_tcp_rail_of(rail);
    if (peer < 0 || peer >= r->prov->npeers || peer == r->env.rank || r->closing)
        return -1;
    rmpi_tcp_peer_t *p = rmpi_tcp_peer_get(r, peer);
    /* IDLE: never connected, the first try of a rail whose link was down at open (hints.down) */
    if ((p->state != RMPI_TCP_PEER_LOST && p->state != RMPI_TCP_PEER_IDLE) || linked(&p->lost_link))
        return -1;
    kick(r, p, timeout_ns);
    return 0;
}

void rmpi_tcp_reap(rmpi_tcp_rail_t *r)
{
    while (!rmpi_list_empty(&r->lostq))
        rmpi_tcp_report_lost(r, RMPI_CONTAINER_OF(r->lostq.next, rmpi_tcp_peer_t, lost_link));
    while (!rmpi_list_empty(&r->dead)) {
        rmpi_tcp_conn_t *c = RMPI_CONTAINER_OF(r->dead.next, rmpi_tcp_conn_t, link);
        rmpi_list_remove(&c->link);
        rmpi_tcp_rx_free(c);
        rmpi_tcp_mem_add(c->rail->prov, 0, sizeof(*c));
        free(c);
    }
}
