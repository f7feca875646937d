/* Core life cycle, request pool and the progress engine. */
#include "core_impl.h"
#include "../chan/chan.h"
#include "spin.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int rmpi_thread_multiple;
pthread_mutex_t rmpi_big_lock = PTHREAD_MUTEX_INITIALIZER;
int rmpi_core_rank, rmpi_core_size;

static rmpi_req_t *req_free_list;
static rmpi_net_env_t net_env;
static rmpi_pm_info_t pm;
static long long spin_count;
/* By default a wait spins for a time, not a number of polls: a poll of shared memory costs
 * nanoseconds, one of a socket a system call, and a rank that spins long on sockets takes
 * the core the kernel needs to move its data (measured: 4 MiB over two shaped TCP rails
 * with a busy neighbour, 131-140 MB/s spinning 2000 polls, 147.6 yielding after 20 us). The
 * clock is read once per 64 idle polls, so the shared-memory ping-pong never reads it.
 * Once idle polls are seen to cost system calls (polls_costly: 64 socket polls alone take
 * 30-60 us), the wait times itself from its first idle poll and spins what spin.h learns. */
#define SPIN_BY_TIME (1LL << 30)
/* Mean idle poll above which polls are system calls (shm: tens of ns; readv: 0.3-1 us). */
#define COSTLY_POLL_NS 100
static uint64_t spin_ns, idle_t0;
static int polls_costly;
static rmpi_spin_t net_spin;
static uint64_t last_yield_ns; /* of the wait's last yield, until the next poll judges it */
static int core_ready;

/* A peer cut off for a malformed frame or a flood of unexpected messages. MPI gives an
 * application no way to go on without one of its ranks (its requests with that rank would
 * never complete), so the job ends with the reason, as when a peer is lost. */
static void peer_cut(rmpi_vc_t *vc, const char *why)
{
    rmpi_fatal("%s; rank %d is cut off and the job ends.", why, vc->peer);
}

void rmpi_core_peer_cut(int peer, const char *why) { rmpi_vc_cut(rmpi_vc_get(peer), why); }

static void rx_left(rmpi_rail_t *rail, int peer)
{
    (void)rail;
    rmpi_chan_lib_left(peer);
}

static void peer_lost(rmpi_rail_t *rail, int peer, const char *why)
{
    /* With several rails the job goes on over the others (frames resent, stripes re-issued). */
    rmpi_vc_t *vc = rmpi_vc_table ? rmpi_vc_table[peer] : NULL;
    if (vc && vc->nsub > 1 && rmpi_vc_rail_failed(vc, rmpi_vc_sub_of(vc, rail), why) > 0)
        return;
    rmpi_fatal("lost rank %d on rail %s (%s); ending the job.", peer, rail->hints.name, why);
}

int rmpi_core_init(rmpi_core_info_t *info)
{
    rmpi_knobs_init();
    if (rmpi_pmi_init(&pm))
        return -1;
    rmpi_log_set_rank(pm.size > 1 ? pm.rank : -1);
    rmpi_core_rank = pm.rank;
    rmpi_core_size = pm.size;
    rmpi_hdr_cache = rmpi_knobs.HDR_CACHE;
    rmpi_core_seg_min = SIZE_MAX;
    for (int native = 0; native < 2; native++) {
        long long v = rmpi_knob_scoped_size("RNDV_SEG_MIN", rmpi_knobs.RNDV_SEG_MIN, native ? "native" : "emulated",
                                            native ? 8192 : 131072);
        if ((size_t)v < rmpi_core_seg_min)
            rmpi_core_seg_min = (size_t)v;
    }
    for (int inter = 0; inter < 2; inter++) {
        long long v = rmpi_knob_scoped_size("FRAG_SIZE", rmpi_knobs.FRAG_SIZE, inter ? "inter" : "intra", 32768);
        if (v < 1024 || v > 1048576)
            rmpi_fatal("RMPI_FRAG_SIZE=%s gives %lld bytes, outside 1k..1m.", rmpi_knobs.FRAG_SIZE, v);
    }
    rmpi_rndv_mode = rmpi_knobs.RNDV_MODE;
    rmpi_core_unexp_max = rmpi_knobs.UNEXP_MAX > 0 ? (size_t)rmpi_knobs.UNEXP_MAX : SIZE_MAX;
    rmpi_core_held_max = rmpi_knobs.SEND_HELD_MAX > 0 ? (size_t)rmpi_knobs.SEND_HELD_MAX : SIZE_MAX;
    rmpi_vc_ooo_max = rmpi_core_unexp_max;
    rmpi_vc_on_cut = peer_cut;
    rmpi_vc_on_path = rmpi_core_wan_tune;
    if (rmpi_topo_init(&pm))
        return -1;
    spin_count = rmpi_knobs.SPIN_COUNT >= 0 ? rmpi_knobs.SPIN_COUNT : rmpi_topo_oversubscribed() ? 1 : SPIN_BY_TIME;
    if (spin_count == SPIN_BY_TIME) {
        if (!(rmpi_knobs.SPIN_TIME >= 0 && rmpi_knobs.SPIN_TIME < 1e9))
            rmpi_fatal("RMPI_SPIN_TIME=%g is not a number of microseconds (0 .. 1e9).", rmpi_knobs.SPIN_TIME);
        spin_ns = (uint64_t)(rmpi_knobs.SPIN_TIME * 1e3);
        if (!(rmpi_knobs.SPIN_TIME_NET >= 0 && rmpi_knobs.SPIN_TIME_NET < 1e9))
            rmpi_fatal("RMPI_SPIN_TIME_NET=%g is not a number of microseconds (0 .. 1e9).", rmpi_knobs.SPIN_TIME_NET);
        rmpi_spin_init(&net_spin, (uint64_t)(rmpi_knobs.SPIN_TIME_NET * 1e3));
    }
    net_env.rank = pm.rank;
    net_env.size = pm.size;
    net_env.jobid = pm.kvsname;
    net_env.on_frame = rmpi_vc_on_frame;
    net_env.on_peer_lost = peer_lost;
    net_env.on_rtt = rmpi_vc_on_rtt;
    net_env.on_peer_up = rmpi_vc_on_up;
    net_env.frame_dst = rmpi_vc_frame_dst;
    net_env.on_frame_placed = rmpi_vc_on_frame_placed;
    net_env.on_rx_left = rx_left;
    net_env.chan_small = rmpi_chan_small_job(pm.rank, pm.size, &net_env.chan_why);
    if (rmpi_net_open(&net_env))
        return -1;
    if (rmpi_pmi_fence() || rmpi_net_ready(0) || rmpi_pmi_fence() || rmpi_net_ready(1)) {
        /* A peer or the launcher is gone: remove what would outlive us (shared memory). */
        rmpi_net_close();
        return -1;
    }
    rmpi_chan_lib_init(pm.rank, pm.size); /* after the rails: r over ofi depends on them */
    rmpi_vc_init(pm.rank, pm.size, rmpi_core_deliver, sizeof(core_peer_t));
    rmpi_vc_set_place(rmpi_core_place, rmpi_core_placed);
    info->rank = pm.rank;
    info->size = pm.size;
    info->singleton = pm.singleton;
    info->appnum = pm.appnum;
    core_ready = 1;
    if (rmpi_topo_sites_pending() && rmpi_core_sites_probe())
        return -1;
    return 0;
}

int rmpi_core_card(char *buf, size_t len) { return rmpi_net_card(buf, len); }

int rmpi_core_peer_add(const char *card, const uint8_t key[RMPI_AUTH_KEY_BYTES])
{
    int peer = rmpi_net_peer_add(card, NULL, key);
    if (peer >= 0)
        rmpi_vc_grow(rmpi_net_npeers());
    return peer;
}

rmpi_req_t *rmpi_req_chunks[RMPI_REQ_CHUNKS_MAX];
uint32_t rmpi_req_nchunks;

static void req_grow(void)
{
    uint32_t n = rmpi_req_nchunks;
    if (n == RMPI_REQ_CHUNKS_MAX)
        rmpi_fatal("more than %u requests are in use at once.", RMPI_REQ_CHUNKS_MAX * RMPI_REQ_CHUNK);
    rmpi_req_t *c = rmpi_xcalloc(RMPI_REQ_CHUNK, sizeof *c);
    for (uint32_t i = RMPI_REQ_CHUNK; i-- > 0;) {
        c[i].slot = n << RMPI_REQ_CHUNK_BITS | i;
        c[i].next_free = req_free_list;
        req_free_list = &c[i];
    }
    rmpi_req_chunks[n] = c;
    __atomic_store_n(&rmpi_req_nchunks, n + 1, __ATOMIC_RELEASE);
}

rmpi_req_t *rmpi_req_alloc(int kind)
{
    if (RMPI_UNLIKELY(!req_free_list))
        req_grow();
    rmpi_req_t *r = req_free_list;
    req_free_list = r->next_free;
    uint32_t slot = r->slot, gen = r->gen + 1 ? r->gen + 1 : 1;
    memset(r, 0, sizeof *r);
    r->slot = slot;
    r->gen = gen;
    r->handle = (uintptr_t)gen << 32 | slot;
    r->magic = RMPI_REQ_MAGIC;
    r->kind = (uint8_t)kind;
    rmpi_list_init(&r->link);
    return r;
}

void rmpi_req_release(rmpi_req_t *r)
{
    if (RMPI_UNLIKELY(r->wire_id != 0))
        rmpi_core_wire_id_free(r);
    free(r->ext);
    r->magic = 0;
    r->handle = 0;
    r->next_free = req_free_list;
    req_free_list = r;
}

void rmpi_req_complete(rmpi_req_t *r)
{
    if (RMPI_UNLIKELY(r->flags & (RMPI_RF_CANCELLING | RMPI_RF_TYPED))) {
        if (r->flags & RMPI_RF_CANCELLING) {
            r->flags |= RMPI_RF_HELD; /* the cancel's answer decides how it ends */
            return;
        }
        rmpi_core_typed_done(r);
    }
    if (r->on_complete)
        r->on_complete(r);
    r->done = 1;
    if (RMPI_UNLIKELY(r->flags & RMPI_RF_FREED) && !(r->flags & RMPI_RF_PERSISTENT))
        rmpi_req_release(r);
}

int (*rmpi_core_hook)(void);
static int (*hooks[RMPI_CORE_HOOK_MAX])(void);
static int nhooks;

static int hook_chain(void)
{
    int n = 0;
    for (int i = 0; i < nhooks; i++)
        n += hooks[i]();
    return n;
}

static void hook_select(void) { rmpi_core_hook = nhooks == 0 ? NULL : nhooks == 1 ? hooks[0] : hook_chain; }

void rmpi_core_hook_add(int (*fn)(void))
{
    for (int i = 0; i < nhooks; i++)
        if (hooks[i] == fn)
            return;
    if (nhooks == RMPI_CORE_HOOK_MAX)
        rmpi_fatal("more than %d progress hooks registered (RMPI_CORE_HOOK_MAX).", RMPI_CORE_HOOK_MAX);
    hooks[nhooks++] = fn;
    hook_select();
}

void rmpi_core_hook_remove(int (*fn)(void))
{
    for (int i = 0; i < nhooks; i++)
        if (hooks[i] == fn) {
            /* keep the order: a hook removed while the chain runs is simply not called again */
            for (int j = i + 1; j < nhooks; j++)
                hooks[j - 1] = hooks[j];
            nhooks--;
            break;
        }
    hook_select();
}

int rmpi_core_progress(void)
{
    static unsigned idle_polls;
    rmpi_chan_lib_pass(); /* a frame of a sender that already had one in this pass waited behind it */
    int n = rmpi_net_progress();
    if (RMPI_UNLIKELY(rmpi_vc_nwatch != 0)) /* peers over several rails: the failure detector */
        rmpi_vc_watch();
    if (RMPI_UNLIKELY(rmpi_core_hook != NULL))
        n += rmpi_core_hook();
    /* Whether mpiexec still lives, and channel selection's clock (a busy receiver ticks it
     * every 256 frames, and at the count trigger's frame): looked at from the idle path only, once per 1024 idle polls (and
     * then at most every 100 ms), so a busy rank pays one increment. */
    if (n == 0 && RMPI_UNLIKELY((++idle_polls & 1023) == 0)) {
        rmpi_pmi_watch();
        rmpi_chan_lib_idle(1024); /* channel selection charges each ring polled for them */
    }
    return n;
}

/* Counts an idle poll; true once the wait should give the CPU away at each poll. */
static inline int idle_yields(unsigned *idle)
{
    unsigned n = ++*idle;
    if (n > spin_count)
        return 1;
    if (spin_count != SPIN_BY_TIME)
        return 0;
    if (polls_costly) {
        if (net_spin.ns == 0)
            return 1;
        uint64_t now = rmpi_time_ns();
        if (n == 1)
            idle_t0 = now;
        else if (now - idle_t0 >= net_spin.ns) {
            *idle = (unsigned)SPIN_BY_TIME;
            return 1;
        }
        return 0;
    }
    if ((n & 63) == 0) {
        uint64_t now = rmpi_time_ns();
        if (n == 64)
            idle_t0 = now;
        else {
            if (n == 128 && now - idle_t0 > 64 * COSTLY_POLL_NS)
                polls_costly = 1;
            if (now - idle_t0 >= spin_ns) {
                *idle = (unsigned)SPIN_BY_TIME; /* from now on every idle poll yields */
                return 1;
            }
        }
    }
    return 0;
}

unsigned long long rmpi_core_yields;
unsigned rmpi_core_app_polls;

/* A yield of a wait whose polls are system calls is timed for spin.h (a clock read or two
 * next to a sched_yield and a socket poll). */
static void core_yield(void)
{
    rmpi_core_yields++;
    if (!polls_costly) {
        sched_yield();
        return;
    }
    uint64_t t0 = rmpi_time_ns();
    sched_yield();
    last_yield_ns = rmpi_time_ns() - t0 + 1;
}

void rmpi_core_wait_step(unsigned *idle)
{
    int n = rmpi_core_progress();
    if (RMPI_UNLIKELY(last_yield_ns != 0)) {
        rmpi_spin_learn(&net_spin, last_yield_ns, n != 0);
        last_yield_ns = 0;
    }
    if (n) {
        *idle = 0;
        return;
    }
    /* nothing to do: frames held for near peers while this process ran behind go now */
    if (RMPI_UNLIKELY(rmpi_core_coal_near != 0))
        rmpi_core_coal_idle();
    if (RMPI_UNLIKELY(rmpi_thread_multiple)) {
        /* let other threads in: their sends may be what this wait needs (the spin state is
         * the lock's, so it is read before and the yield is not timed) */
        int yield = idle_yields(idle);
        rmpi_core_yields += (unsigned)yield;
        /* an application thread waits here: the progress thread stands aside (core_async.c) */
        __atomic_store_n(&rmpi_core_app_polls, rmpi_core_app_polls + 1, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&rmpi_big_lock);
        if (yield)
            sched_yield();
        pthread_mutex_lock(&rmpi_big_lock);
        return;
    }
    /* oversubscribed ranks must give the core to the peer they wait for */
    if (idle_yields(idle))
        core_yield();
}

size_t rmpi_core_held_max = SIZE_MAX;

void rmpi_core_throttle_wait(void)
{
    unsigned idle = 0;
    while (rmpi_net_held > rmpi_core_held_max)
        rmpi_core_wait_step(&idle);
}

void rmpi_core_wait(rmpi_req_t *r)
{
    unsigned idle = 0;
    while (!r->done)
        rmpi_core_wait_step(&idle);
}

static void finalize_barrier(void)
{
    /* A dissemination barrier on a reserved context: it keeps the network progressing, so
     * frames still queued (FINs, acks) reach peers before anyone closes a connection. */
    const uint32_t ctx = RMPI_CTX_FINALIZE;
    int n = rmpi_core_size, me = rmpi_core_rank;
    for (int k = 1; k < n; k <<= 1) {
        rmpi_req_t *s = rmpi_req_alloc(RMPI_REQ_SEND), *r = rmpi_req_alloc(RMPI_REQ_RECV);
        s->rank = (me + k) % n, s->ctx = ctx, s->tag = k, s->src = me;
        r->rank = (me - k + n) % n, r->ctx = ctx, r->tag = k;
        rmpi_core_irecv(r);
        rmpi_core_isend(s);
        rmpi_core_wait(s);
        rmpi_core_wait(r);
        rmpi_req_release(s);
        rmpi_req_release(r);
    }
}

void (*rmpi_core_report_json)(FILE *f);

/* One JSON object per rank on one line, written to stderr at once so that ranks' objects
 * never interleave: the channel accounting's keys, then those of the layers above. */
static void report_json(void)
{
    char *line = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&line, &len);
    FILE *f = m ? m : stderr;
    rmpi_chan_report(f, rmpi_core_rank, rmpi_core_size, 1);
    rmpi_vc_report_json(f);
    rmpi_net_report(f, rmpi_core_rank, 1);
    if (rmpi_core_report_json)
        rmpi_core_report_json(f);
    fputs("}\n", f);
    if (m) {
        fclose(m);
        fwrite(line, 1, len, stderr);
        free(line);
    }
}

int rmpi_core_finalize(void)
{
    if (!core_ready)
        return 0;
    rmpi_core_coal_poll(1);
    finalize_barrier();
    /* The barrier's own last frame may be held for a bundle (coalescing on a long path):
     * it must leave before the connections close, or the peer waits for it forever. */
    rmpi_core_coal_poll(1);
    if (rmpi_knobs.REPORT == RMPI_REPORT_JSON)
        report_json();
    else if (rmpi_knobs.REPORT) {
        rmpi_chan_report(stderr, rmpi_core_rank, rmpi_core_size, 0);
        fprintf(stderr,
                "[rmpi report] rank %d: eager frames %llu full + %llu cached headers (%llu sent from the "
                "user's buffer), rendezvous %llu, unexpected %llu, eager receives placed %llu\n",
                rmpi_core_rank, (unsigned long long)rmpi_core_stats.eager_full,
                (unsigned long long)rmpi_core_stats.eager_short, (unsigned long long)rmpi_core_stats.zc_sends,
                (unsigned long long)rmpi_core_stats.rndv, (unsigned long long)rmpi_core_stats.unexpected,
                (unsigned long long)rmpi_core_stats.placed_recvs);
        const rmpi_core_stats_t *st = &rmpi_core_stats;
        if (st->seg_sends + st->packed_sends + st->scattered_recvs + st->frag_recvs + st->frag_sends +
            st->seg_rndv_sends + st->seg_rndv_recvs)
            fprintf(stderr,
                    "[rmpi report] rank %d: non-contiguous data: %llu eager sends as segments, %llu sends "
                    "packed; %llu eager receives scattered from the frame; rendezvous by pieces: %llu sends, "
                    "%llu receives; rendezvous by frames: %llu sends, %llu receives\n",
                    rmpi_core_rank, (unsigned long long)st->seg_sends, (unsigned long long)st->packed_sends,
                    (unsigned long long)st->scattered_recvs, (unsigned long long)st->seg_rndv_sends,
                    (unsigned long long)st->seg_rndv_recvs, (unsigned long long)st->frag_sends,
                    (unsigned long long)st->frag_recvs);
        fprintf(stderr, "[rmpi report] rank %d on %s: binding %s\n", rmpi_core_rank, rmpi_topo_hostname(),
                rmpi_topo_binding());
        int kr, kc;
        rmpi_topo_kernel_share(&kr, &kc);
        fprintf(stderr, "[rmpi report] rank %d: waits %s (%d ranks on this machine's kernel share %d cpus)\n",
                rmpi_core_rank,
                spin_count == 1              ? "yield at once"
                : spin_count == SPIN_BY_TIME ? "spin, then yield"
                                             : "spin a count",
                kr, kc);
        rmpi_vc_report(stderr);
        rmpi_net_report(stderr, rmpi_core_rank, 0);
        rmpi_chan_lib_report(stderr, rmpi_core_rank);
        for (int p = 0; rmpi_vc_table && p < rmpi_core_size; p++) {
            rmpi_vc_t *vc = rmpi_vc_table[p];
            if (!vc || p == rmpi_core_rank || !((core_peer_t *)vc->core)->ready)
                continue;
            const core_peer_t *cp = vc->core;
            fprintf(stderr,
                    "[rmpi report] rank %d -> %d: eager limit %zu bytes (%s, RMPI_EAGER_LIMIT's %zu), "
                    "path round trip %.1f us\n",
                    rmpi_core_rank, p, cp->eager_limit, cp->eager_auto ? "RMPI_WAN_TUNE" : "fixed", cp->eager_base,
                    rmpi_vc_rtt(vc) * 1e-3);
        }
        fprintf(stderr,
                "[rmpi report] rank %d: connections refused %llu (no proof of the job key), peers cut off "
                "%llu (malformed frames)\n",
                rmpi_core_rank, (unsigned long long)rmpi_net_sec_stats.refused,
                (unsigned long long)rmpi_net_sec_stats.malformed);
        rmpi_net_mr_stats_t m = rmpi_net_mr_stats();
        if (m.hits + m.misses)
            fprintf(stderr,
                    "[rmpi report] rank %d: registration cache: %llu hits, %llu misses, %llu evictions, "
                    "%llu invalidations, %zu entries\n",
                    rmpi_core_rank, (unsigned long long)m.hits, (unsigned long long)m.misses,
                    (unsigned long long)m.evictions, (unsigned long long)m.invalidations, m.entries);
    }
    rmpi_net_close();
    rmpi_rndv_finalize();
    rmpi_core_frag_finalize();
    rmpi_core_unexp_finalize();
    rmpi_core_wire_finalize();
    rmpi_vc_finalize();
    rmpi_chan_lib_finalize();
    rmpi_pmi_finalize();
    rmpi_topo_finalize();
    for (uint32_t c = 0; c < rmpi_req_nchunks; c++) {
        free(rmpi_req_chunks[c]);
        rmpi_req_chunks[c] = NULL;
    }
    __atomic_store_n(&rmpi_req_nchunks, 0, __ATOMIC_RELEASE);
    req_free_list = NULL;
    for (size_t c = 0; c < rmpi_nctxq; c++)
        free(rmpi_ctxq[c]);
    free(rmpi_ctxq);
    rmpi_ctxq = NULL;
    rmpi_nctxq = 0;
    core_ready = 0;
    return 0;
}
