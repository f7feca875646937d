/* The provider's entry points: open (one rail per interface and stream, each listening;
 * publish the address card), reaches, send, progress, close, describe, and the ops table. */
#include "tcp.h"

#include "../net_mem.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <linux/sockios.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

/* close() stops waiting for queued frames and goodbyes after this long. */
#define CLOSE_NS (2ull * 1000000000ull)

static int listen_on(rmpi_tcp_rail_t *r, const rmpi_tcp_iface_t *f)
{
    rmpi_tcp_listener_t *l = &r->lis;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    /* Accepted sockets inherit the buffer sizes, which must be set before listen(). */
    rmpi_tcp_sockopts(r, fd);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr = f->addr, .sin_port = 0};
    socklen_t alen = sizeof(a);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, SOMAXCONN) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &alen) != 0) {
        rmpi_warn("tcp: rank %d cannot listen on %s (%s); that interface is not used.", r->env.rank, f->name,
                  strerror(errno));
        close(fd);
        return -1;
    }
    l->kind = RMPI_TCP_OBJ_LISTENER;
    l->fd = fd;
    l->addr = a;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = l};
    if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        close(fd);
        l->fd = -1;
        return -1;
    }
    return 0;
}

static void fill_hints(rmpi_tcp_rail_t *r, const rmpi_tcp_iface_t *f, int streams, int stream, int spare)
{
    rmpi_net_hints_t *h = &r->pub.hints;
    memset(h, 0, sizeof(*h));
    snprintf(h->name, sizeof(h->name), "tcp:%s", r->me->name);
    r->speed = rmpi_tcp_iface_speed(f->name);
    r->wmem_max = rmpi_tcp_wmem_max();
    h->bw = r->speed / (uint64_t)streams;
    h->latency_ns = 0;
    h->rdma_native = 0;
    h->rdma_by_target = 1;
    h->put_landed = 1; /* PUT_ACK with several rails: tcp_rdma.c */
    h->max_frame = RMPI_TCP_MAX_FRAME;
    h->max_inline = RMPI_TCP_MAX_FRAME;       /* send() writes from the caller's iov when it can */
    h->max_iov = RMPI_TCP_IOV_MAX - 1;        /* writev with our header in front; more is copied */
    h->mem_per_peer = rmpi_tcp_peer_bytes(0); /* a quiet peer (src/net/net_mem.c, as the scale simulator counts it) */
    h->node_conn = 0;
    h->scope = RMPI_SCOPE_INTER;
    h->spare = spare;
    h->stream = stream;
    h->window = rmpi_tcp_window(r->sndbuf);
    h->down = f->down;
}

static void rail_free(rmpi_tcp_rail_t *r)
{
    if (r->peers)
        for (int i = 0; i < r->prov->npeers; i++)
            if (r->peers[i])
                rmpi_tcp_peer_free(r, r->peers[i]);
    rmpi_list_t *pos, *tmp;
    rmpi_list_for_each_safe(pos, tmp, &r->handshaking)
        rmpi_tcp_conn_kill(r, RMPI_CONTAINER_OF(pos, rmpi_tcp_conn_t, link));
    rmpi_list_init(&r->lostq);
    rmpi_list_init(&r->backq);
    rmpi_tcp_reap(r);
    if (r->lis.fd >= 0)
        close(r->lis.fd);
    if (r->epfd >= 0)
        close(r->epfd);
    rmpi_net_mrtab_free(&r->mr);
    free(r->done);
    free(r->soon);
    free(r->peers);
    free(r);
}

static void prov_release(rmpi_tcp_prov_t *prov)
{
    if (--prov->open_rails > 0)
        return;
    if (prov->gate_fd >= 0)
        close(prov->gate_fd);
    if (prov->links)
        for (int i = 0; i < prov->npeers; i++)
            free(prov->links[i]);
    free(prov->links);
    free(prov);
}

static rmpi_tcp_rail_t *rail_new(rmpi_tcp_prov_t *prov, const rmpi_net_env_t *env)
{
    rmpi_tcp_rail_t *r = rmpi_xcalloc(1, sizeof(*r));
    r->pub.ops = &rmpi_tcp_ops;
    r->prov = prov;
    r->env = *env;
    r->lis.fd = -1;
    rmpi_list_init(&r->handshaking);
    rmpi_list_init(&r->estab);
    rmpi_list_init(&r->timed);
    rmpi_list_init(&r->dead);
    rmpi_list_init(&r->lostq);
    rmpi_list_init(&r->backq);
    long long chunk = rmpi_knobs.TCP_CHUNK, sndbuf = rmpi_knobs.TCP_SNDBUF;
    r->chunk = (size_t)(chunk < 4096 ? 4096 : chunk > (1ll << 30) ? (1ll << 30) : chunk);
    r->sndbuf = sndbuf <= 0 ? 0 : sndbuf > INT_MAX ? INT_MAX : (int)sndbuf;
    r->place_min = rmpi_knobs.TCP_PLACE > 0 ? (size_t)rmpi_knobs.TCP_PLACE : 0;
    long long secs = rmpi_knobs.CONNECT_TIMEOUT > 0 ? rmpi_knobs.CONNECT_TIMEOUT : 1;
    r->timeout_ns = (uint64_t)secs * 1000000000ull;
    double stall = rmpi_knobs.RAIL_TIMEOUT;
    r->stall_ns = stall > 0 ? (uint64_t)(stall * 1e9) : 0;
    long long idle_ms = rmpi_knobs.TCP_BUF_IDLE;
    r->buf_idle_ns = idle_ms > 0 ? (uint64_t)idle_ms * 1000000ull : 0;
    r->buf_sweep_ns = rmpi_tcp_buf_sweep_ns(r->buf_idle_ns);
    /* The world tag (a hash of the job id): a HELLO for another job (a stale port reused)
     * is refused; one from another job is a dynamic peer. */
    r->job_tag = env->world;
    r->epfd = epoll_create1(EPOLL_CLOEXEC);
    return r;
}

/* The gate's epoll set: every rail's epoll fd, readable while that rail has an event. With
 * one rail there is nothing to gate. Without it (epoll_create1 or epoll_ctl refused), each
 * sleeping rail polls for itself every QUIET_EVERY (spares: 64) calls. */
static void gate_open(rmpi_tcp_prov_t *prov)
{
    if (prov->nrails < 2)
        return;
    int fd = epoll_create1(EPOLL_CLOEXEC);
    for (int i = 0; fd >= 0 && i < prov->nrails; i++) {
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = prov->rails[i]};
        if (epoll_ctl(fd, EPOLL_CTL_ADD, prov->rails[i]->epfd, &ev) != 0) {
            close(fd);
            fd = -1;
        }
    }
    prov->gate_fd = fd;
}

/* One rail per chosen interface and stream, in interface-name order, each listening on its
 * interface's address; the card lists them in that order. */
static int tcp_open(const rmpi_net_env_t *env, rmpi_rail_t **rails, int max)
{
    if (max < 1)
        return 0;
    rmpi_tcp_iface_t ifs[RMPI_TCP_MAX_IFACES];
    int listed;
    int nif = rmpi_tcp_iface_choose(ifs, RMPI_TCP_MAX_IFACES, env->size, &listed);
    if (nif == 0)
        return 0;
    long long k = rmpi_knobs.TCP_STREAMS;
    int streams = k < 1 ? 1 : k > RMPI_TCP_MAX_STREAMS ? RMPI_TCP_MAX_STREAMS : (int)k;
    /* auto: spare streams on the interfaces that can lead far (loopback cannot), as many as
     * leave every interface room in a virtual channel; they cost a listening socket each
     * and connect only when a channel wakes them. */
    int automatic = k == 0 && rmpi_knobs.WAN_TUNE, nfar = 0;
    for (int i = 0; automatic && i < nif; i++)
        nfar += !ifs[i].loopback;
    int spares = nfar ? RMPI_MIN(RMPI_TCP_AUTO_STREAMS, (RMPI_TCP_AUTO_RAILS - (nif - nfar)) / nfar) : 1;
    if (spares < 1)
        spares = 1;
    if (automatic)
        streams = 1;
    if (nif * streams > RMPI_MIN(max, RMPI_TCP_MAX_RAILS))
        rmpi_warn("tcp: rank %d has %d interface(s) x %d stream(s) but room for %d rail(s); the rails "
                  "after the first %d (in interface-name order) are not used. Lower RMPI_TCP_STREAMS or "
                  "list fewer interfaces in RMPI_TCP_IFACES.",
                  env->rank, nif, streams, RMPI_MIN(max, RMPI_TCP_MAX_RAILS), RMPI_MIN(max, RMPI_TCP_MAX_RAILS));
    rmpi_tcp_prov_t *prov = rmpi_xcalloc(1, sizeof(*prov));
    prov->env = *env;
    prov->gate_fd = -1;
    prov->me.listed = listed;
    const rmpi_tcp_iface_t *iface_of[RMPI_TCP_MAX_RAILS];
    int nstreams_of[RMPI_TCP_MAX_RAILS];
    for (int i = 0; i < nif; i++) {
        int ns = automatic && !ifs[i].loopback ? spares : streams;
        for (int s = 0; s < ns && prov->nrails < RMPI_MIN(max, RMPI_TCP_MAX_RAILS); s++) {
            rmpi_tcp_rail_t *r = rail_new(prov, env);
            if (r->epfd < 0 || listen_on(r, &ifs[i]) != 0) {
                rail_free(r);
                continue;
            }
            int idx = prov->nrails++;
            rmpi_tcp_entry_t *e = &prov->me.e[idx];
            /* auto keeps the first stream's name: RMPI_RAIL_BW and reports name it as before */
            if (streams > 1 || (automatic && s > 0))
                snprintf(e->name, sizeof(e->name), "%.16s#%hhu", ifs[i].name, (unsigned char)s); /* s < MAX_RAILS */
            else
                snprintf(e->name, sizeof(e->name), "%.16s", ifs[i].name);
            e->stream = s;
            e->addr = ifs[i].addr;
            e->mask = ifs[i].mask;
            e->port = ntohs(r->lis.addr.sin_port);
            e->loopback = ifs[i].loopback;
            r->idx = idx;
            r->me = e;
            prov->rails[idx] = r;
            iface_of[idx] = &ifs[i];
            nstreams_of[idx] = ns;
        }
    }
    prov->me.n = prov->nrails;
    prov->open_rails = prov->nrails;
    gate_open(prov);
    char card[1024];
    if (prov->nrails == 0 || rmpi_tcp_card_format(&prov->me, card, sizeof(card)) < 0) {
        for (int i = 0; i < prov->nrails; i++)
            rail_free(prov->rails[i]);
        if (prov->gate_fd >= 0)
            close(prov->gate_fd);
        free(prov);
        return 0;
    }
    char key[32];
    snprintf(key, sizeof(key), "tcp-%d", env->rank);
    prov->dynamic = env->late;
    if (!env->late && rmpi_pmi_put(key, card) != 0) {
        rmpi_warn("tcp: rank %d could not publish its TCP address card through PMI.", env->rank);
        for (int i = 0; i < prov->nrails; i++)
            rail_free(prov->rails[i]);
        if (prov->gate_fd >= 0)
            close(prov->gate_fd);
        free(prov);
        return -1;
    }
    prov->npeers = env->size;
    prov->links = rmpi_xcalloc((size_t)env->size, sizeof(*prov->links));
    for (int i = 0; i < prov->nrails; i++) {
        rmpi_tcp_rail_t *r = prov->rails[i];
        r->peers = rmpi_xcalloc((size_t)env->size, sizeof(*r->peers));
        fill_hints(r, iface_of[i], nstreams_of[i], r->me->stream, automatic && r->me->stream > 0);
        rails[i] = &r->pub;
    }
    rmpi_log(1, "tcp: rank %d listens on %s", env->rank, card);
    return prov->nrails;
}

static int tcp_reaches(rmpi_rail_t *rail, int peer)
{
    rmpi_tcp_rail_t *r = rmpi_tcp_rail_of(rail);
    const rmpi_tcp_link_t *l = rmpi_tcp_link(r->prov, peer);
    return l && l->partner[r->idx] >= 0;
}

static int tcp_send(rmpi_rail_t *rail, int peer, const struct iovec *iov, int iovcnt)
{
    rmpi_tcp_rail_t *r = rmpi_tcp_rail_of(rail);
    if (peer < 0 || peer >= r->prov->npeers || peer == r->env.rank)
        return -EINVAL;
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    if (len > RMPI_TCP_MAX_FRAME)
        return -EMSGSIZE;
    rmpi_tcp_peer_t *p = rmpi_tcp_peer_get(r, peer);
    if (p->state == RMPI_TCP_PEER_LOST || p->state == RMPI_TCP_PEER_CLOSED)
        return -ECONNRESET;
    /* Output already queued for the peer: once a chunk's worth of large frames joined it since
     * the last time, write what the socket takes of it (about one chunk), so that a sender
     * whose calls complete at once (eager frames copied here) keeps its sockets fed between
     * progress calls. Without it a Bcast root across a long link ran 12,000 calls of 16 KiB in
     * 0.7 s, copying them here, while both its sockets sat empty (ss), and its near child
     * finished 11% later (seed infiniband-wan 3.4: the root's link is the collective's
     * bottleneck; docs/results/wan.md, "The root's queue"). Once per chunk, not per frame: a
     * sender that fills its socket (multi-pair message rate) would otherwise make a write
     * that finds no room for every frame. Small frames batched for the next progress (the
     * soon list) are left to it. */
    if (len >= RMPI_TCP_PUSH_MIN && !p->soon && !rmpi_tcp_can_write_now(p) && rmpi_tcp_has_output(p)) {
        p->push_due += len;
        if (p->push_due >= r->chunk) {
            p->push_due = 0;
            rmpi_tcp_flush(r, p);
            if (p->state == RMPI_TCP_PEER_LOST || p->state == RMPI_TCP_PEER_CLOSED)
                return -ECONNRESET;
        }
    }
    uint8_t hdr[RMPI_TCP_BASE_HDR];
    rmpi_tcp_hdr(hdr, RMPI_TCP_DATA, (uint32_t)len);
    size_t total = sizeof(hdr) + len, done = 0;
    if (rmpi_tcp_can_write_now(p) && iovcnt < RMPI_TCP_IOV_MAX) {
        ssize_t w = rmpi_tcp_writev(p->conn->fd, hdr, sizeof(hdr), iov, iovcnt);
        if (w < 0) {
            rmpi_tcp_peer_fail(r, p, "%s",
                               w == -EPIPE || w == -ECONNRESET ? "connection reset by peer" : strerror((int)-w));
            return -ECONNRESET;
        }
        rmpi_tcp_count_tx(r, p->conn, (size_t)w);
        if ((size_t)w == total) {
            r->stat_frames_tx++;
            return 0;
        }
        done = (size_t)w;
    }
    /* Copy what is left (header included) so the caller may reuse its iov at once. */
    rmpi_tcp_tx_t *t = rmpi_tcp_tx_new(total - done);
    char *dst = t->copy;
    size_t skip = done;
    if (skip < sizeof(hdr)) {
        memcpy(dst, hdr + skip, sizeof(hdr) - skip);
        dst += sizeof(hdr) - skip;
        skip = 0;
    } else {
        skip -= sizeof(hdr);
    }
    for (int i = 0; i < iovcnt; i++) {
        size_t l = iov[i].iov_len;
        if (skip >= l) {
            skip -= l;
            continue;
        }
        memcpy(dst, (const char *)iov[i].iov_base + skip, l - skip);
        dst += l - skip;
        skip = 0;
    }
    t->data = t->copy;
    t->dlen = total - done;
    /* the frame's head is already in the stream: nothing may be written before its rest */
    t->started = done > 0;
    rmpi_tcp_queue_frame(r, p, t);
    return 0;
}

/* With one established socket and nothing else to watch, a busy rank reads it directly: a
 * frame then costs one readv instead of epoll_wait + readv. An empty readv costs about
 * twice an empty epoll_wait (lock_sock), so after DIRECT_QUIET calls that found nothing
 * progress goes back to epoll until something arrives; listeners (new connections) are
 * looked at every DIRECT_EPOLL_EVERY calls. Several sockets, output waiting for room, or
 * a frame half read (a bulk stream: busy reads would contend with the sender for the
 * socket) all use epoll. */
#define DIRECT_EPOLL_EVERY 64
#define DIRECT_QUIET 256
#define QUIET_EVERY 8

/* The rail's one socket, when it has exactly one, established and not waiting for room. */
static rmpi_tcp_conn_t *lone_conn(rmpi_tcp_rail_t *r)
{
    if (r->nestab != 1 || r->nconn != 1)
        return NULL;
    rmpi_tcp_conn_t *c = RMPI_CONTAINER_OF(r->estab.next, rmpi_tcp_conn_t, link);
    return (c->events & EPOLLOUT) ? NULL : c;
}

static int direct_poll(rmpi_tcp_rail_t *r)
{
    if (r->quiet >= DIRECT_QUIET || ++r->direct_polls >= DIRECT_EPOLL_EVERY)
        return -1;
    rmpi_tcp_conn_t *c = lone_conn(r);
    if (!c || c->rx_phase != RMPI_TCP_RX_FRAME || c->rx_pos != c->rx_end)
        return -1;
    uint64_t bytes = r->stat_bytes_rx;
    int frames = rmpi_tcp_read(r, c);
    return frames + (r->stat_bytes_rx != bytes); /* data read counts as an event, as in epoll */
}

static int poll_once(rmpi_tcp_rail_t *r, int timeout_ms)
{
    int handled = timeout_ms == 0 ? direct_poll(r) : -1;
    if (handled < 0) {
        r->direct_polls = 0;
        handled = 0;
        struct epoll_event ev[64];
        int n = epoll_wait(r->epfd, ev, (int)RMPI_ARRAY_LEN(ev), timeout_ms);
        for (int i = 0; i < n; i++) {
            int kind = *(int *)ev[i].data.ptr;
            if (kind == RMPI_TCP_OBJ_LISTENER) {
                rmpi_tcp_accept(r, ev[i].data.ptr);
            } else {
                rmpi_tcp_conn_t *c = ev[i].data.ptr;
                if (c->state != RMPI_TCP_CONN_DEAD)
                    handled += 1 + rmpi_tcp_conn_event(r, c, ev[i].events);
            }
        }
    }
    if (!rmpi_list_empty(&r->timed) || !rmpi_list_empty(&r->handshaking))
        rmpi_tcp_timers(r);
    /* The clock is read every few calls, the sockets looked at every STALL_CHECK_NS and PATH_NS. */
    if (r->nestab && ++r->check_calls >= 4) {
        r->check_calls = 0;
        uint64_t now = rmpi_time_ns();
        if (r->stall_ns && now - r->last_check >= RMPI_TCP_STALL_CHECK_NS)
            rmpi_tcp_stall_check(r, now);
        if (now - r->last_path >= RMPI_TCP_PATH_NS)
            rmpi_tcp_path_poll(r, now);
        if (r->buf_idle_ns && now - r->last_sweep >= r->buf_sweep_ns)
            rmpi_tcp_buf_sweep(r, now);
    }
    if (!rmpi_list_empty(&r->lostq) || !rmpi_list_empty(&r->dead))
        rmpi_tcp_reap(r);
    if (r->ndone) {
        handled += r->ndone;
        rmpi_tcp_run_completions(r);
    }
    if (!rmpi_list_empty(&r->backq))
        rmpi_tcp_report_up(r);
    r->quiet = handled ? 0 : RMPI_MIN(r->quiet + 1, DIRECT_QUIET);
    return handled;
}

/* Nothing for progress to do but look at the sockets: no completions, timers, handshakes,
 * losses or output waiting. */
static int rail_idle(const rmpi_tcp_rail_t *r)
{
    return !r->ndone && !r->nsoon && rmpi_list_empty(&r->timed) && rmpi_list_empty(&r->handshaking) &&
           rmpi_list_empty(&r->lostq) && rmpi_list_empty(&r->dead) && rmpi_list_empty(&r->backq);
}

/* Another rail of this process found something within its last DIRECT_QUIET calls. */
static int other_rail_busy(const rmpi_tcp_rail_t *r)
{
    for (int i = 0; i < r->prov->nrails; i++) {
        const rmpi_tcp_rail_t *o = r->prov->rails[i];
        if (o && o != r && o->nestab && o->quiet < DIRECT_QUIET)
            return 1;
    }
    return 0;
}

/* A rail that sleeps behind the gate: nothing to do but look at its sockets, and either a
 * spare stream nobody woke or a quiet rail of at most one socket while another rail is busy. */
static int gated(rmpi_tcp_rail_t *r)
{
    if (!rail_idle(r))
        return 0;
    if (r->pub.hints.spare && !r->nconn)
        return 1;
    return r->quiet >= DIRECT_QUIET && r->prov->gate_busy && (!r->nconn || lone_conn(r));
}

/* Every QUIET_EVERY calls of the gate rail (SPARE_EVERY when only listeners sleep): one
 * epoll_wait over all the rails' epoll fds marks those with something to read, and every
 * GATE_SWEEP gates every rail is marked, so a sleeping rail's clocked work (stall check,
 * path poll, buffer sweep: poll_once) still runs. Measured over 8 lab rails, 8 B ping-pong:
 * socket polls per progress call 1.89-1.91 before, 1.17 with the gate. */
#define GATE_SWEEP 64
#define SPARE_EVERY 64
static void gate_run(rmpi_tcp_prov_t *prov)
{
    unsigned n = ++prov->gate_calls;
    if (n & (QUIET_EVERY - 1))
        return;
    int busy = 0, quiet = 0, spare = 0, sweep = (n / QUIET_EVERY) % GATE_SWEEP == 0;
    for (int i = 0; i < prov->nrails; i++) {
        rmpi_tcp_rail_t *o = prov->rails[i];
        if (o) {
            busy |= o->nestab && o->quiet < DIRECT_QUIET;
            if (gated(o))
                *(!o->nconn ? &spare : &quiet) = 1;
            o->gate_ready |= sweep;
        }
    }
    prov->gate_busy = busy;
    /* Rails of a listener alone (spare streams nobody woke, a quiet rail not yet connected)
     * are looked at every SPARE_EVERY calls: nothing reaches them but a connection, whose
     * HELLO then waits at most that many polls once; quiet rails of one socket every
     * QUIET_EVERY. The second lab rail of an 8 B ping-pong, never connected, had the gate's
     * epoll_wait in every 8th progress call (0.29 per iteration against one rail's 0.07,
     * strace; docs/results/multirail.md). */
    if (!quiet && !(spare && (n / QUIET_EVERY) % (SPARE_EVERY / QUIET_EVERY) == 0))
        return;
    struct epoll_event ev[RMPI_TCP_MAX_RAILS];
    int k = epoll_wait(prov->gate_fd, ev, (int)RMPI_ARRAY_LEN(ev), 0);
    for (int i = 0; i < k; i++)
        ((rmpi_tcp_rail_t *)ev[i].data.ptr)->gate_ready = 1;
}

/* The rail's epoll set holds its listening socket and every connection (EPOLLOUT only while
 * output waits), so it polls readable exactly when tcp_progress has something to do. */
static int tcp_wait_fd(rmpi_rail_t *rail) { return rmpi_tcp_rail_of(rail)->epfd; }

static int tcp_progress(rmpi_rail_t *rail)
{
    rmpi_tcp_rail_t *r = rmpi_tcp_rail_of(rail);
    if (r->in_progress)
        return 0; /* a callback called progress again: the outer call continues */
    /* With the gate (gate_run), a rail that sleeps (gated) is looked at only when its
     * epoll fd is ready: one epoll_wait every QUIET_EVERY calls for all of them, where each
     * quiet rail and spare stream made one of its own. */
    rmpi_tcp_prov_t *prov = r->prov;
    if (prov->gate_fd >= 0) {
        if (r->idx == prov->gate_idx)
            gate_run(prov);
        if (gated(r)) {
            if (!r->gate_ready)
                return 0;
            r->gate_ready = 0;
        }
    }
    /* A spare stream nobody woke has only its listener: look at it every 64th call, so
     * spares cost the progress loop (every peer's latency) nothing measurable. */
    else if (r->pub.hints.spare && !r->nconn && rail_idle(r) && (++r->idle_polls & 63))
        return 0;
    /* A rail of one socket, or of none yet (its listener), quiet for DIRECT_QUIET calls
     * while another rail carries the traffic (small frames stay on the binding rail; the
     * second rail's connection is made when first used) is looked at every QUIET_EVERY
     * calls: its empty epoll_wait in every call was most of what a second rail added to an
     * 8 B ping-pong. What comes on it waits at most QUIET_EVERY - 1 polls of the busy
     * rail; then it is busy itself. */
    else if (r->quiet >= DIRECT_QUIET && rail_idle(r) && (++r->idle_polls & (QUIET_EVERY - 1)) &&
             (!r->nconn || lone_conn(r)) && other_rail_busy(r))
        return 0;
    r->in_progress = 1;
    if (r->nsoon)
        rmpi_tcp_drain_soon(r);
    int n = poll_once(r, 0);
    /* what the frames just read made us owe (PUT_ACKs, small read answers, answers sent by
     * the layers above while they were delivered) goes now, gathered in one write a peer */
    if (r->nsoon)
        rmpi_tcp_drain_soon(r);
    r->in_progress = 0;
    return n;
}

/* Close handshake state of one peer: 1 while something is left to do. */
static int closing_busy(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p)
{
    if (!p->goodbye_sent)
        return 0;
    if (p->state == RMPI_TCP_PEER_CONNECTING)
        return 1;
    if (p->state != RMPI_TCP_PEER_ESTABLISHED || !p->conn)
        return 0;
    if (rmpi_tcp_has_output(p))
        return 1;
    /* Everything is out: shut our side and wait for the peer's EOF (it closes on GOODBYE). */
    if (!p->conn->shut_wr) {
        shutdown(p->conn->fd, SHUT_WR);
        p->conn->shut_wr = 1;
    }
    return 1;
}

static void tcp_close(rmpi_rail_t *rail)
{
    rmpi_tcp_rail_t *r = rmpi_tcp_rail_of(rail);
    r->closing = 1;
    r->in_progress = 1;
    uint8_t h[RMPI_TCP_HDR_MAX];
    size_t hl = rmpi_tcp_hdr(h, RMPI_TCP_GOODBYE, 0);
    for (int i = 0; i < r->prov->npeers; i++) {
        rmpi_tcp_peer_t *p = r->peers[i];
        if (!p || (p->state != RMPI_TCP_PEER_ESTABLISHED && p->state != RMPI_TCP_PEER_CONNECTING))
            continue;
        rmpi_tcp_queue_ctrl(r, p, h, hl, 0);
        p->goodbye_sent = 1;
        rmpi_tcp_flush(r, p);
    }
    uint64_t end = rmpi_time_ns() + CLOSE_NS;
    while (rmpi_time_ns() < end) {
        int busy = 0;
        for (int i = 0; i < r->prov->npeers; i++)
            if (r->peers[i])
                busy |= closing_busy(r, r->peers[i]);
        if (!busy)
            break;
        poll_once(r, 10);
    }
    rmpi_tcp_prov_t *prov = r->prov;
    prov->rails[r->idx] = NULL;
    if (prov->gate_idx == r->idx) /* the next open rail runs the gate */
        while (prov->gate_idx + 1 < prov->nrails && !prov->rails[++prov->gate_idx])
            ;
    if (prov->gate_fd >= 0)
        epoll_ctl(prov->gate_fd, EPOLL_CTL_DEL, r->epfd, NULL);
    rail_free(r);
    prov_release(prov);
}

static void tcp_describe(rmpi_rail_t *rail, void *file)
{
    rmpi_tcp_rail_t *r = rmpi_tcp_rail_of(rail);
    FILE *f = file;
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &r->lis.addr.sin_addr, ip, sizeof(ip));
    fprintf(f, "    listening on %s:%u (rail %d of %d in this rank's card)", ip, ntohs(r->lis.addr.sin_port), r->idx,
            r->prov->nrails);
    int est = 0;
    for (int i = 0; i < r->prov->npeers; i++)
        est += r->peers[i] && r->peers[i]->state == RMPI_TCP_PEER_ESTABLISHED;
    fprintf(f,
            "\n    chunk %zu B, socket buffers %s, connect timeout %llu s, rail timeout %.1f s, "
            "%d peer(s) connected\n",
            r->chunk, r->sndbuf ? "set" : "kernel autotuned", (unsigned long long)(r->timeout_ns / 1000000000ull),
            (double)r->stall_ns * 1e-9, est);
    fprintf(f, "    %llu frames / %llu bytes sent, %llu frames / %llu bytes received\n",
            (unsigned long long)r->stat_frames_tx, (unsigned long long)r->stat_bytes_tx,
            (unsigned long long)r->stat_frames_rx, (unsigned long long)r->stat_bytes_rx);
    fprintf(f,
            "    channels: a connection per peer (RMPI_CHANNELS has no shared kind here: every tcp peer counts as "
            "dedicated): %zu bytes quiet (no receive buffer), %zu with the first %d-byte buffer, doubled with "
            "traffic up to %zu (LAN frames; %zu for the largest frame), freed after %llu ms without a byte "
            "(RMPI_TCP_BUF_IDLE%s); all tcp peers now %zu bytes, at most %zu\n",
            rail->hints.mem_per_peer, rmpi_tcp_peer_bytes(1), RMPI_TCP_RX_MIN, rmpi_tcp_peer_bytes_max(),
            rmpi_tcp_peer_bytes(RMPI_TCP_MAX_FRAME), (unsigned long long)(r->buf_idle_ns / 1000000ull),
            r->buf_idle_ns ? "" : "=0: kept", r->prov->mem, r->prov->mem_peak);
}

/* RMPI_REPORT: the congestion control of the peer's last established socket, read back at
 * its handshake, and why (tcp_conn.c: far_congestion); json: the same as members of an
 * object, "choice" naming the reason (knob, far, far_refused, near, near_refused,
 * near_default, off). */
static void tcp_peer_facts(rmpi_rail_t *rail, int peer, int json, char *buf, size_t len)
{
    rmpi_tcp_rail_t *r = rmpi_tcp_rail_of(rail);
    const rmpi_tcp_peer_t *p = peer >= 0 && peer < r->prov->npeers && r->peers ? r->peers[peer] : NULL;
    if (!p || !p->cc.name[0])
        return;
    const rmpi_tcp_cc_t *cc = &p->cc;
    const char *set = rmpi_knobs.TCP_CONGESTION_CONTROL, *far = rmpi_knobs.TCP_FAR_CONGESTION;
    const char *near = rmpi_knobs.TCP_NEAR_CONGESTION;
    double rtt = (double)cc->rtt * 1e-3;
    char why[160];
    const char *choice;
    if (set && *set) {
        choice = "knob";
        snprintf(why, sizeof why, "RMPI_TCP_CONGESTION_CONTROL=%s", set);
    } else if (cc->far > 0) {
        choice = "far";
        snprintf(why, sizeof why, "far: round trip %.1f us at connect >= RMPI_TCP_FAR_RTT %.0f us", rtt,
                 rmpi_knobs.TCP_FAR_RTT);
    } else if (cc->far < 0) {
        choice = "far_refused";
        snprintf(why, sizeof why,
                 "far: round trip %.1f us at connect, but the kernel refused RMPI_TCP_FAR_CONGESTION=%s: %s", rtt, far,
                 strerror(-cc->far));
    } else if (cc->near > 0) {
        choice = "near";
        snprintf(why, sizeof why, "near: round trip %.1f us at connect, RMPI_TCP_NEAR_CONGESTION=%s", rtt, near);
    } else if (cc->near < 0) {
        choice = "near_refused";
        snprintf(why, sizeof why,
                 "near: round trip %.1f us at connect, but the kernel refused RMPI_TCP_NEAR_CONGESTION=%s: %s", rtt,
                 near, strerror(-cc->near));
    } else if (!rmpi_knobs.WAN_TUNE || rmpi_knobs.TCP_FAR_RTT <= 0) {
        choice = "off";
        snprintf(why, sizeof why, "the kernel's default: %s",
                 rmpi_knobs.WAN_TUNE ? "RMPI_TCP_FAR_RTT off" : "RMPI_WAN_TUNE=0");
    } else if (cc->rtt && rtt >= rmpi_knobs.TCP_FAR_RTT) {
        choice = "off";
        snprintf(why, sizeof why,
                 "the kernel's default: round trip %.1f us at connect, far, RMPI_TCP_FAR_CONGESTION empty", rtt);
    } else {
        choice = "near_default";
        snprintf(why, sizeof why,
                 "the kernel's default: round trip %.1f us at connect, near, RMPI_TCP_NEAR_CONGESTION empty", rtt);
    }
    if (json) /* names and reasons hold no quote or backslash */
        snprintf(buf, len,
                 "\"congestion\": \"%s\", \"choice\": \"%s\", \"min_rtt_us\": %.1f, \"far_rtt_us\": %.0f, "
                 "\"why\": \"%s\", \"far_sndbuf\": %d",
                 cc->name, choice, rtt, rmpi_knobs.TCP_FAR_RTT, why, cc->sndbuf);
    else if (cc->sndbuf)
        snprintf(buf, len, "congestion control %s (%s), send buffer %d bytes (far)", cc->name, why, cc->sndbuf);
    else
        snprintf(buf, len, "congestion control %s (%s)", cc->name, why);
}

/* Channel accounting (net.h): tcp's per-peer memory counts as dedicated, once per provider
 * (on its first open rail); its frames are not counted there. */
static void tcp_chan_stats(rmpi_rail_t *rail, rmpi_net_chan_stats_t *st)
{
    rmpi_tcp_rail_t *r = rmpi_tcp_rail_of(rail);
    memset(st, 0, sizeof(*st));
    for (int i = 0; i < r->prov->nrails; i++)
        if (r->prov->rails[i]) {
            if (r->prov->rails[i] == r) {
                st->mem[RMPI_NET_CHAN_DEDICATED] = r->prov->mem;
                st->mem_peak[RMPI_NET_CHAN_DEDICATED] = r->prov->mem_peak;
            }
            return;
        }
}

static int tcp_card(rmpi_rail_t *rail, char *buf, size_t len)
{
    return rmpi_tcp_card_format(&rmpi_tcp_rail_of(rail)->prov->me, buf, len);
}

static int tcp_peer_add(rmpi_rail_t *rail, int peer, const rmpi_net_id_t *id, int same_node, const char *card,
                        const uint8_t key[RMPI_AUTH_KEY_BYTES])
{
    return rmpi_tcp_peer_add(rmpi_tcp_rail_of(rail)->prov, peer, id, same_node, card, key);
}

/* What the kernel holds unacknowledged on the peer's socket plus what waits in this rail's
 * queue for it (frames, the unsent part of put sources, the chunk in progress). */
static size_t tcp_backlog(rmpi_rail_t *rail, int peer)
{
    rmpi_tcp_rail_t *r = rmpi_tcp_rail_of(rail);
    if (peer < 0 || peer >= r->prov->npeers || peer == r->env.rank)
        return 0;
    rmpi_tcp_peer_t *p = rmpi_tcp_peer_get(r, peer);
    size_t n = 0;
    int q = 0;
    if (p->state == RMPI_TCP_PEER_ESTABLISHED && p->conn && ioctl(p->conn->fd, SIOCOUTQ, &q) == 0 && q > 0)
        n += (size_t)q;
    rmpi_list_t *pos;
    rmpi_list_for_each(pos, &p->txq)
    {
        const rmpi_tcp_tx_t *t = (const rmpi_tcp_tx_t *)pos;
        n += t->is_put ? t->dlen - t->psent : t->hlen + t->dlen - t->off;
    }
    if (p->cur_chunk)
        n += p->cur_chunk->hlen + p->cur_chunk->dlen - p->cur_chunk->off;
    rmpi_list_for_each(pos, &p->cutq)
    {
        const rmpi_tcp_tx_t *t = (const rmpi_tcp_tx_t *)pos;
        n += t->hlen + t->dlen;
    }
    return n;
}

const struct rmpi_net_ops rmpi_tcp_ops = {
    .version = RMPI_NET_OPS_VERSION,
    .name = "tcp",
    .open = tcp_open,
    .ready = NULL, /* connections open on first use */
    .reaches = tcp_reaches,
    .send = tcp_send,
    .mr_reg = rmpi_tcp_mr_reg,
    .mr_dereg = rmpi_tcp_mr_dereg,
    .mr_reg_ranges = rmpi_tcp_mr_reg_ranges,
    .get = rmpi_tcp_get,
    .put = rmpi_tcp_put,
    .progress = tcp_progress,
    .close = tcp_close,
    .describe = tcp_describe,
    .peer_facts = tcp_peer_facts,
    .card = tcp_card,
    .peer_add = tcp_peer_add,
    .backlog = tcp_backlog,
    .chan_stats = tcp_chan_stats,
    .watch = rmpi_tcp_watch,
    .abandon = rmpi_tcp_abandon,
    .rejoin = rmpi_tcp_rejoin,
    .wait_fd = tcp_wait_fd,
};
