/* Dynamic processes: ports (a listening socket of the process that opened it),
 * Comm_accept/Comm_connect between two groups, Comm_join over a user's socket. The roots
 * swap both groups' business cards and context candidates over the port's socket
 * (docs/wire/dpm.md); every member then adds the remote processes as peers and builds
 * the intercommunicator. */
#include "comm_impl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TAG_DPM 0x7ff6
#define CARD_MAX 1024
#define PORT_PREFIX "rmpi-port:"
#define MAX_ADDRS 8
static const char magic[8] = {'R', 'M', 'P', 'I', 'D', 'P', 'M', '2'};
#define TOKEN_BYTES 16 /* a port's secret: 128 random bits, 32 hex digits in its name */

/* What a root sends: magic, the port's token, status (0 ok, 1 wrong token), the group's
 * context candidate and size, its half of the link key; then size cards of CARD_MAX
 * bytes. Little-endian. */
typedef struct dpm_hdr {
    char magic[8];
    char token[40];
    uint8_t status[4], ctx[4], n[4];
    uint8_t contrib[RMPI_AUTH_KEY_BYTES];
} dpm_hdr_t;

typedef struct port {
    struct port *next;
    int fd;
    char token[40];
    char name[MPI_MAX_PORT_NAME];
} port_t;

static port_t *ports;

static void st32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t ld32(const uint8_t *p) { return p[0] | (p[1] << 8) | (p[2] << 16) | ((uint32_t)p[3] << 24); }

/* Wait until fd is ready for ev while the network progresses (the peers of this process
 * may be waiting for it). 0 ready, -1 past the deadline (0: none). */
static int wait_fd(int fd, short ev, uint64_t deadline)
{
    unsigned idle = 0;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = ev};
        int n = poll(&p, 1, idle > 64 ? 1 : 0);
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return -1;
        if (deadline && rmpi_time_ns() > deadline)
            return -1;
        rmpi_core_wait_step(&idle);
    }
}

static int io_all(int fd, void *buf, size_t len, int out, uint64_t deadline)
{
    char *p = buf;
    while (len) {
        if (wait_fd(fd, out ? POLLOUT : POLLIN, deadline))
            return -1;
        ssize_t k = out ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
        if (k == 0 || (k < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK))
            return -1;
        if (k > 0)
            p += k, len -= (size_t)k;
    }
    return 0;
}

static void fill_hdr(dpm_hdr_t *h, const char *token, int status, uint32_t ctx, int n)
{
    memset(h, 0, sizeof *h);
    memcpy(h->magic, magic, sizeof magic);
    snprintf(h->token, sizeof h->token, "%s", token);
    st32(h->status, (uint32_t)status);
    st32(h->ctx, ctx);
    st32(h->n, (uint32_t)n);
    if (rmpi_auth_random(h->contrib, sizeof h->contrib))
        rmpi_fatal("getrandom failed: no key for the connection to another job.");
}

/* The key every connection between the two groups proves (docs/wire/auth.md): an HMAC of
 * both roots' random halves, in an order both compute alike, so neither side alone
 * chooses it and it never crosses the wire. */
static void link_key(const dpm_hdr_t *a, const dpm_hdr_t *b, uint8_t key[RMPI_AUTH_KEY_BYTES])
{
    if (memcmp(a->contrib, b->contrib, sizeof a->contrib) > 0) {
        const dpm_hdr_t *t = a;
        a = b;
        b = t;
    }
    rmpi_auth_mac(a->contrib, "rmpi-dpm-link", b->contrib, sizeof b->contrib, key);
}

static int send_group(int fd, const dpm_hdr_t *h, const char *cards, int n, uint64_t deadline)
{
    return io_all(fd, (void *)h, sizeof *h, 1, deadline) ||
           io_all(fd, (void *)cards, (size_t)n * CARD_MAX, 1, deadline);
}

static int recv_hdr(int fd, dpm_hdr_t *h, uint64_t deadline)
{
    return io_all(fd, h, sizeof *h, 0, deadline) || memcmp(h->magic, magic, sizeof magic) ? -1 : 0;
}

/* Reads the cards announced by a header already read (*cards malloc'd). */
static int recv_cards(int fd, const dpm_hdr_t *h, char **cards, uint64_t deadline)
{
    *cards = NULL;
    /* The peer's word: a group of at most 2^20, a status we know, and a context candidate
     * that leaves room for the four ids an intercommunicator takes. */
    uint32_t n = ld32(h->n);
    if (n > (1u << 20) || ld32(h->status) > 1 || ld32(h->ctx) > RMPI_CTX_MAX - 4)
        return -1;
    *cards = rmpi_xmalloc((size_t)(n ? n : 1) * CARD_MAX);
    if (io_all(fd, *cards, (size_t)n * CARD_MAX, 0, deadline)) {
        free(*cards);
        *cards = NULL;
        return -1;
    }
    return 0;
}

/* ---- ports ---- */

static void random_token(char *out, size_t len)
{
    uint8_t t[TOKEN_BYTES];
    if (len < 2 * TOKEN_BYTES + 1 || rmpi_auth_random(t, sizeof t))
        rmpi_fatal("getrandom failed: no token for a new port.");
    rmpi_auth_hex(t, sizeof t, out);
}

int rmpi_dpm_open_port(char *name)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t alen = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 64) ||
        getsockname(fd, (struct sockaddr *)&a, &alen)) {
        if (fd >= 0)
            close(fd);
        return MPI_ERR_OTHER;
    }
    port_t *p = rmpi_xcalloc(1, sizeof *p);
    p->fd = fd;
    random_token(p->token, sizeof p->token);
    /* Every up IPv4 address of this host, loopback last: connectors try them in order. */
    int len = snprintf(p->name, sizeof p->name, PORT_PREFIX "%s@", p->token), naddr = 0;
    struct ifaddrs *all = NULL;
    if (getifaddrs(&all) == 0)
        for (int lo = 0; lo < 2; lo++)
            for (struct ifaddrs *i = all; i; i = i->ifa_next) {
                if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
                    !!(i->ifa_flags & IFF_LOOPBACK) != lo || naddr == MAX_ADDRS)
                    continue;
                char ip[INET_ADDRSTRLEN];
                inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, ip, sizeof ip);
                len += snprintf(p->name + len, sizeof p->name - (size_t)len, "%s%s:%u", naddr ? "," : "", ip,
                                ntohs(a.sin_port));
                naddr++;
            }
    if (all)
        freeifaddrs(all);
    if (naddr == 0)
        snprintf(p->name + len, sizeof p->name - (size_t)len, "127.0.0.1:%u", ntohs(a.sin_port));
    p->next = ports;
    ports = p;
    snprintf(name, MPI_MAX_PORT_NAME, "%s", p->name);
    return MPI_SUCCESS;
}

static port_t **port_find(const char *name)
{
    for (port_t **pp = &ports; *pp; pp = &(*pp)->next)
        if (!strcmp((*pp)->name, name))
            return pp;
    return NULL;
}

int rmpi_dpm_close_port(const char *name)
{
    port_t **pp = port_find(name);
    if (!pp)
        return MPI_ERR_PORT;
    port_t *p = *pp;
    *pp = p->next;
    close(p->fd);
    free(p);
    return MPI_SUCCESS;
}

void rmpi_dpm_finalize(void)
{
    while (ports)
        rmpi_dpm_close_port(ports->name);
}

/* ---- the roots' exchange ---- */

typedef struct result {
    int status; /* MPI error class, the same on every member */
    uint32_t ctx;
    int n;                            /* remote group size */
    uint8_t key[RMPI_AUTH_KEY_BYTES]; /* what connections with the remote group prove */
} result_t;

/* Acceptor root: the first connection that brings this port's token. */
static int root_accept(port_t *p, const char *cards, int n, uint32_t ctx, result_t *res, char **rcards)
{
    for (;;) {
        if (wait_fd(p->fd, POLLIN, 0))
            return MPI_ERR_OTHER;
        int fd = accept4(p->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        uint64_t deadline = rmpi_time_ns() + 10ull * 1000000000ull;
        dpm_hdr_t h, me;
        /* The token is checked before anything else is read or answered: a connection
         * that does not bring it learns nothing (not even the token) and costs nothing. */
        if (recv_hdr(fd, &h, deadline) || !rmpi_auth_equal(h.token, p->token, sizeof h.token)) {
            rmpi_net_sec_stats.refused++;
            rmpi_warn("a connection to port %s was refused: it did not bring the port's token.", p->name);
            close(fd);
            continue;
        }
        fill_hdr(&me, "", 0, ctx, n);
        int bad = recv_cards(fd, &h, rcards, deadline) || send_group(fd, &me, cards, n, deadline);
        close(fd);
        if (bad) {
            free(*rcards);
            *rcards = NULL;
            continue;
        }
        uint32_t theirs = ld32(h.ctx);
        res->ctx = theirs > ctx ? theirs : ctx;
        res->n = (int)ld32(h.n);
        link_key(&h, &me, res->key);
        return MPI_SUCCESS;
    }
}

/* Connector root: parse the port name, reach one of its addresses, swap. */
static int root_connect(const char *name, const char *cards, int n, uint32_t ctx, result_t *res, char **rcards)
{
    if (strncmp(name, PORT_PREFIX, strlen(PORT_PREFIX)))
        return MPI_ERR_PORT;
    const char *at = strchr(name, '@');
    char token[40] = {0};
    size_t tl = at ? (size_t)(at - name - strlen(PORT_PREFIX)) : 0;
    if (!at || tl == 0 || tl >= sizeof token)
        return MPI_ERR_PORT;
    memcpy(token, name + strlen(PORT_PREFIX), tl);
    token[tl] = 0;
    double secs = rmpi_knobs.PORT_TIMEOUT > 0 ? rmpi_knobs.PORT_TIMEOUT : 1;
    uint64_t deadline = rmpi_time_ns() + (uint64_t)(secs * 1e9);
    for (const char *s = at + 1; *s;) {
        char ip[64];
        unsigned port = 0;
        int used = 0;
        if (sscanf(s, "%63[0-9.]:%u%n", ip, &port, &used) != 2 || port == 0 || port > 65535)
            return MPI_ERR_PORT;
        s += used;
        if (*s == ',')
            s++;
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        if (inet_pton(AF_INET, ip, &a.sin_addr) != 1)
            return MPI_ERR_PORT;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return MPI_ERR_OTHER;
        int err = 0;
        socklen_t el = sizeof err;
        uint64_t attempt = rmpi_time_ns() + 2000000000ull;
        if ((connect(fd, (struct sockaddr *)&a, sizeof a) && errno != EINPROGRESS) ||
            wait_fd(fd, POLLOUT, attempt < deadline ? attempt : deadline) ||
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) || err) {
            close(fd);
            continue;
        }
        dpm_hdr_t h, me;
        fill_hdr(&me, token, 0, ctx, n);
        int bad = send_group(fd, &me, cards, n, deadline) || recv_hdr(fd, &h, deadline) || ld32(h.status) ||
                  recv_cards(fd, &h, rcards, deadline);
        close(fd);
        if (bad) {
            free(*rcards);
            *rcards = NULL;
            return MPI_ERR_PORT;
        }
        uint32_t theirs = ld32(h.ctx);
        res->ctx = theirs > ctx ? theirs : ctx;
        res->n = (int)ld32(h.n);
        link_key(&h, &me, res->key);
        return MPI_SUCCESS;
    }
    return MPI_ERR_PORT;
}

/* Every member: add the remote processes as peers, build the intercommunicator. */
static int build_inter(rmpi_comm_t *c, const result_t *res, char *rcards, rmpi_comm_t **out)
{
    if (res->ctx > RMPI_CTX_MAX - 4) {
        /* both sides' candidates were checked; ours has run out (a partner's large candidate
         * moved it up): an error for this call, not the end of the process */
        rmpi_warn("no context id is left for the intercommunicator (RMPI_CTX_MAX reached).");
        return MPI_ERR_INTERN;
    }
    int *rw = rmpi_xmalloc((size_t)(res->n ? res->n : 1) * sizeof *rw);
    int *lw = rmpi_xmalloc((size_t)c->size * sizeof *lw);
    int bad = 0;
    for (int i = 0; i < res->n; i++) {
        rcards[(size_t)i * CARD_MAX + CARD_MAX - 1] = 0;
        bad |= (rw[i] = rmpi_core_peer_add(rcards + (size_t)i * CARD_MAX, res->key)) < 0;
    }
    for (int r = 0; r < c->size; r++)
        lw[r] = rmpi_comm_local_world_rank(c, r);
    rmpi_comm_reserve_ctx(res->ctx, 4);
    *out = bad ? NULL : rmpi_comm_alloc_inter(res->ctx, c->rank, c->size, lw, res->n, rw);
    free(lw);
    free(rw);
    if (bad)
        rmpi_warn("a process of the remote group has a business card this process cannot use (no common "
                  "provider: dynamic processes need tcp).");
    return bad ? MPI_ERR_INTERN : MPI_SUCCESS;
}

int rmpi_dpm_connect_accept(const char *port, int root, rmpi_comm_t *c, int accept, rmpi_comm_t **out)
{
    *out = NULL;
    rmpi_mset_t m = rmpi_mset_all(c, TAG_DPM);
    char mine[CARD_MAX] = "";
    if (rmpi_core_card(mine, sizeof mine) < 0)
        rmpi_fatal("no provider can reach processes of other jobs (the tcp provider did not open).");
    char *cards = rmpi_xmalloc((size_t)c->size * CARD_MAX), *rcards = NULL;
    rmpi_mset_allgather(&m, mine, CARD_MAX, cards);
    uint32_t ctx = rmpi_mset_max_ctx(&m);
    result_t res = {MPI_SUCCESS, 0, 0};
    if (c->rank == root) {
        port_t **pp = accept ? port_find(port) : NULL;
        if (accept && !pp)
            res.status = MPI_ERR_PORT;
        else if (accept)
            res.status = root_accept(*pp, cards, c->size, ctx, &res, &rcards);
        else
            res.status = root_connect(port, cards, c->size, ctx, &res, &rcards);
    }
    free(cards);
    rmpi_mset_bcast(&m, &res, sizeof res, root);
    if (res.status == MPI_SUCCESS) {
        if (c->rank != root)
            rcards = rmpi_xmalloc((size_t)(res.n ? res.n : 1) * CARD_MAX);
        rmpi_mset_bcast(&m, rcards, (size_t)res.n * CARD_MAX, root);
        res.status = build_inter(c, &res, rcards, out);
    }
    free(rcards);
    return res.status;
}

int rmpi_dpm_join(int fd, rmpi_comm_t **out)
{
    *out = NULL;
    char mine[CARD_MAX] = "", *theirs = NULL;
    if (rmpi_core_card(mine, sizeof mine) < 0)
        return MPI_ERR_INTERN;
    result_t res = {MPI_SUCCESS, rmpi_comm_next_ctx(), 1};
    dpm_hdr_t me, h;
    fill_hdr(&me, "join", 0, res.ctx, 1);
    /* Both sides write first: header and card fit any socket buffer. */
    if (send_group(fd, &me, mine, 1, 0) || recv_hdr(fd, &h, 0) || ld32(h.n) != 1 || recv_cards(fd, &h, &theirs, 0)) {
        free(theirs);
        return MPI_ERR_ARG;
    }
    if (ld32(h.ctx) > res.ctx)
        res.ctx = ld32(h.ctx);
    /* The user's socket joins the two processes: whoever is at its other end is trusted. */
    link_key(&h, &me, res.key);
    int rc = build_inter(&rmpi_comm_self, &res, theirs, out);
    free(theirs);
    return rc;
}
