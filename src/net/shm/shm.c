/* shm provider: one rail for every rank on the same node.
 * Each rank owns one segment holding one ring per local sender; a sender writes frames
 * straight into its ring in the receiver's segment (one copy in, one copy out). RDMA is
 * single-copy with process_vm_readv/writev (cross-memory attach); where the kernel refuses
 * that (ptrace policy, seccomp, RMPI_SHM_CMA=off), get/put are emulated by GET_REQ/GET_RESP
 * and PUT frames through the rings, checked against the target's registrations. */
#include "shm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define SEG_HDR 4096u
#define SEG_MAGIC 0x524d5049534d3031ull /* "RMPISM01" */

typedef struct seg_hdr {
    uint64_t magic;
    int32_t pid, nlocal;
    uint64_t ring_stride;
    uint32_t ncells;
} seg_hdr_t;

typedef struct pending {
    struct pending *next;
    unsigned type;
    size_t len;
    char data[];
} pending_t;

typedef struct shm_peer {
    int rank;
    pid_t pid;
    int cma; /* 1 usable, 0 untried, -1 refused */
    rmpi_shm_writer_t wr;
    pending_t *pend, **pend_tail;
    void *seg;
    size_t seg_len;
} shm_peer_t;

/* A get being served (target side) or awaited (initiator side, emulated path). */
typedef struct get_resp {
    struct get_resp *next;
    shm_peer_t *peer;
    uint64_t cookie;
    const char *src;
    size_t len, off;
    int32_t status;
} get_resp_t;

typedef struct emu_get {
    rmpi_net_op_t *op;
    char *local;
    size_t len, got;
} emu_get_t;

typedef struct wire_get_req {
    uint64_t cookie, raddr, rkey, len;
} wire_get_req_t;
typedef struct wire_get_resp {
    uint64_t cookie, off;
    int32_t status, pad;
} wire_get_resp_t;
typedef struct wire_put {
    uint64_t raddr, rkey;
} wire_put_t;

typedef struct mr_ent {
    uint64_t rkey;
    char *addr;
    size_t len;
} mr_ent_t;

typedef struct shm_rail {
    rmpi_rail_t base;
    const rmpi_net_env_t *env;
    char segname[128];
    void *seg;
    size_t seg_len, ring_stride;
    uint32_t ncells;
    size_t max_frame;
    int my_local, nlocal, cma_mode; /* RMPI_SHM_CMA_* */
    int *local_rank;                /* local index -> world rank */
    shm_peer_t **peer;              /* world rank -> peer (NULL if not on this node) */
    rmpi_shm_reader_t *rd;          /* one per local sender other than me */
    int *rd_rank;
    int nrd, npending;
    get_resp_t *resp;     /* gets this rank serves */
    rmpi_net_op_t **done; /* completions to report at the next progress */
    int ndone, done_cap;
    mr_ent_t *mr;
    int nmr, mr_cap;
    uint64_t next_rkey;
} shm_rail_t;

static shm_rail_t shm;

static void push_done(rmpi_net_op_t *op, int status)
{
    op->status = status;
    if (shm.ndone == shm.done_cap) {
        shm.done_cap = shm.done_cap ? 2 * shm.done_cap : 64;
        shm.done = rmpi_xrealloc(shm.done, (size_t)shm.done_cap * sizeof *shm.done);
    }
    shm.done[shm.ndone++] = op;
}

/* A rank that aborts (a peer lost in MPI_Init, the launcher gone) removes its segment's
 * name if it still has one; mpiexec removes the rest (rmpi_shm_job_prefix). */
static void shm_unlink_on_abort(void)
{
    if (shm.segname[0])
        shm_unlink(shm.segname);
}

/* Map every page of [p, p+len) now. A shared-memory page is otherwise faulted in by the
 * first frame that reaches it, in both processes: the first pass through a ring (some
 * thousands of small messages) then costs a page fault every few dozen frames, which made
 * the first sizes of every benchmark 2-3x slower than the same sizes run later. The kernel
 * populates the range in one call (Linux 5.14); older kernels get one touch per page. */
static void prefault(void *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
    if (!madvise(p, len, MADV_POPULATE_WRITE))
        return;
#endif
    long pg = sysconf(_SC_PAGESIZE);
    for (size_t off = 0; off < len; off += (size_t)(pg > 0 ? pg : 4096))
        (void)*(volatile const char *)((const char *)p + off);
}

static int shm_open_rail(const rmpi_net_env_t *env, rmpi_rail_t **out, int max)
{
    if (max < 1)
        return 0;
    shm_rail_t *s = &shm;
    memset(s, 0, sizeof *s);
    s->env = env;
    s->cma_mode = rmpi_knobs.SHM_CMA;
    int node = rmpi_topo_my_node();
    s->nlocal = rmpi_topo_local_size(node);
    s->my_local = rmpi_topo_local_rank(env->rank);
    s->local_rank = rmpi_xcalloc((size_t)s->nlocal, sizeof *s->local_rank);
    s->peer = rmpi_xcalloc((size_t)env->size, sizeof *s->peer);
    for (int r = 0; r < env->size; r++)
        if (rmpi_topo_node_of(r) == node)
            s->local_rank[rmpi_topo_local_rank(r)] = r;

    uint32_t ncells = 64;
    while ((uint64_t)ncells * 2 * RMPI_SHM_CELL <= (uint64_t)rmpi_knobs.SHM_RING_SIZE && ncells < (1u << 18))
        ncells *= 2;
    s->ncells = ncells;
    s->max_frame = rmpi_shm_ring_max_frame(ncells);
    s->ring_stride = (rmpi_shm_ring_bytes(ncells) + 4095) & ~(size_t)4095;
    s->seg_len = SEG_HDR + (size_t)s->nlocal * s->ring_stride;

    /* Segment names must be unique per job and rank; the job id comes from the PM. mpiexec
     * removes leftovers by the same prefix (rmpi_shm_job_prefix). */
    char prefix[RMPI_SHM_PREFIX_MAX];
    rmpi_shm_job_prefix(env->jobid, prefix, sizeof prefix);
    snprintf(s->segname, sizeof s->segname, "/%s%d-%d", prefix, (int)getpid(), env->rank);
    int fd = shm_open(s->segname, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 && errno == EEXIST) {
        /* The name holds our pid, so its owner is dead: a killed job whose pid came back. */
        rmpi_log(1, "removing stale shared memory segment %s.", s->segname);
        shm_unlink(s->segname);
        fd = shm_open(s->segname, O_RDWR | O_CREAT | O_EXCL, 0600);
    }
    if (fd < 0)
        rmpi_fatal("cannot create shared memory segment %s: %s (is /dev/shm full? set RMPI_NET=tcp to avoid it).",
                   s->segname, strerror(errno));
    static int hooked;
    if (!hooked) {
        hooked = 1;
        rmpi_rt_at_abort(shm_unlink_on_abort);
    }
    if (ftruncate(fd, (off_t)s->seg_len))
        rmpi_fatal("cannot size shared memory segment %s to %zu bytes: %s (lower RMPI_SHM_RING_SIZE).", s->segname,
                   s->seg_len, strerror(errno));
    s->seg = mmap(NULL, s->seg_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (s->seg == MAP_FAILED)
        rmpi_fatal("cannot map shared memory segment %s: %s.", s->segname, strerror(errno));
    prefault(s->seg, s->seg_len);
    seg_hdr_t *h = s->seg;
    h->pid = getpid();
    h->nlocal = s->nlocal;
    h->ring_stride = s->ring_stride;
    h->ncells = ncells;
    h->magic = SEG_MAGIC;

    s->rd = rmpi_xcalloc((size_t)s->nlocal, sizeof *s->rd);
    s->rd_rank = rmpi_xcalloc((size_t)s->nlocal, sizeof *s->rd_rank);
    for (int l = 0; l < s->nlocal; l++) {
        if (l == s->my_local)
            continue;
        s->rd[s->nrd].ring = (rmpi_shm_ring_t *)((char *)s->seg + SEG_HDR + (size_t)l * s->ring_stride);
        s->rd[s->nrd].ncells = ncells;
        s->rd_rank[s->nrd++] = s->local_rank[l];
    }

    char key[64], val[256];
    snprintf(key, sizeof key, "shm-%d", env->rank);
    if (snprintf(val, sizeof val, "%s,%d", s->segname, (int)getpid()) >= (int)sizeof val || rmpi_pmi_put(key, val))
        return -1;

    s->base.ops = &rmpi_shm_ops;
    snprintf(s->base.hints.name, sizeof s->base.hints.name, "shm");
    s->base.hints.rdma_native = 1;
    s->base.hints.max_frame = s->max_frame;
    s->base.hints.max_inline = s->max_frame;
    s->base.hints.mem_per_peer = s->ring_stride;
    s->base.hints.scope = RMPI_SCOPE_INTRA;
    s->base.hints.latency_ns = 200;
    out[0] = &s->base;
    return 1;
}

static int shm_ready(rmpi_rail_t *rail, int phase)
{
    shm_rail_t *s = &shm;
    if (phase == 1) {
        /* every local peer has mapped us: the name is no longer needed, nothing can leak */
        shm_unlink(s->segname);
        return 0;
    }
    for (int l = 0; l < s->nlocal; l++) {
        int r = s->local_rank[l];
        if (l == s->my_local)
            continue;
        char key[64], val[256], name[160];
        int pid;
        snprintf(key, sizeof key, "shm-%d", r);
        if (rmpi_pmi_get(key, val, sizeof val))
            rmpi_fatal("rank %d published no shared-memory address; is it running RailMPI?", r);
        char *comma = strrchr(val, ',');
        if (!comma || sscanf(comma + 1, "%d", &pid) != 1)
            rmpi_fatal("rank %d published a malformed shared-memory address '%s'.", r, val);
        snprintf(name, sizeof name, "%.*s", (int)(comma - val), val);
        int fd = shm_open(name, O_RDWR, 0);
        if (fd < 0)
            rmpi_fatal("cannot open rank %d's shared memory %s: %s (set RMPI_NET=tcp to avoid shared memory).", r, name,
                       strerror(errno));
        struct stat st;
        if (fstat(fd, &st))
            rmpi_fatal("cannot stat rank %d's shared memory %s: %s.", r, name, strerror(errno));
        void *seg = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (seg == MAP_FAILED)
            rmpi_fatal("cannot map rank %d's shared memory %s: %s.", r, name, strerror(errno));
        seg_hdr_t *h = seg;
        if (h->magic != SEG_MAGIC || h->nlocal != s->nlocal || h->ncells != s->ncells)
            rmpi_fatal("rank %d's shared memory %s has another layout; are both ranks the same RailMPI build "
                       "with the same RMPI_SHM_RING_SIZE?",
                       r, name);
        shm_peer_t *p = rmpi_xcalloc(1, sizeof *p);
        p->rank = r;
        p->pid = pid;
        p->seg = seg;
        p->seg_len = (size_t)st.st_size;
        p->cma = s->cma_mode == RMPI_SHM_CMA_OFF ? -1 : 0;
        p->wr.ring = (rmpi_shm_ring_t *)((char *)seg + SEG_HDR + (size_t)s->my_local * h->ring_stride);
        prefault(p->wr.ring, h->ring_stride); /* only the ring we write: the rest is others' */
        p->wr.ncells = s->ncells;
        p->pend_tail = &p->pend;
        s->peer[r] = p;
    }
    return 0;
}

static int shm_reaches(rmpi_rail_t *rail, int peer) { return shm.peer[peer] != NULL; }

static size_t iov_total(const struct iovec *iov, int n)
{
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += iov[i].iov_len;
    return len;
}

/* Post one frame of the given type; queue a copy when the ring is full or others wait. */
static void post(shm_peer_t *p, unsigned type, const struct iovec *iov, int n)
{
    size_t len = iov_total(iov, n);
    if (RMPI_LIKELY(!p->pend)) {
        void *dst = rmpi_shm_ring_reserve(&p->wr, len);
        if (RMPI_LIKELY(dst != NULL)) {
            rmpi_iov_gather(dst, iov, n);
            rmpi_shm_ring_commit(&p->wr, len, type);
            return;
        }
        shm.npending++;
    }
    pending_t *q = rmpi_xmalloc(sizeof *q + len);
    q->next = NULL;
    q->type = type;
    q->len = len;
    rmpi_iov_gather(q->data, iov, n);
    *p->pend_tail = q;
    p->pend_tail = &q->next;
}

static int shm_send(rmpi_rail_t *rail, int peer, const struct iovec *iov, int iovcnt)
{
    post(shm.peer[peer], RMPI_SHM_DATA, iov, iovcnt);
    return 0;
}

static void flush_pending(void)
{
    for (int l = 0; l < shm.nlocal; l++) {
        shm_peer_t *p = shm.peer[shm.local_rank[l]];
        if (!p || !p->pend)
            continue;
        while (p->pend) {
            pending_t *q = p->pend;
            void *dst = rmpi_shm_ring_reserve(&p->wr, q->len);
            if (!dst)
                break;
            memcpy(dst, q->data, q->len);
            rmpi_shm_ring_commit(&p->wr, q->len, q->type);
            p->pend = q->next;
            free(q);
        }
        if (!p->pend) {
            p->pend_tail = &p->pend;
            shm.npending--;
        }
    }
}

static int shm_mr_reg(rmpi_rail_t *rail, void *addr, size_t len, rmpi_mr_t *mr)
{
    if (shm.nmr == shm.mr_cap) {
        shm.mr_cap = shm.mr_cap ? 2 * shm.mr_cap : 32;
        shm.mr = rmpi_xrealloc(shm.mr, (size_t)shm.mr_cap * sizeof *shm.mr);
    }
    mr->addr = addr;
    mr->len = len;
    mr->rkey = ++shm.next_rkey;
    mr->desc = NULL;
    shm.mr[shm.nmr++] = (mr_ent_t){mr->rkey, addr, len};
    return 0;
}

static void shm_mr_dereg(rmpi_rail_t *rail, rmpi_mr_t *mr)
{
    for (int i = 0; i < shm.nmr; i++)
        if (shm.mr[i].rkey == mr->rkey) {
            shm.mr[i] = shm.mr[--shm.nmr];
            return;
        }
}

/* Emulated access check: [raddr, raddr+len) must lie inside the registration rkey. */
static char *mr_check(uint64_t rkey, uint64_t raddr, uint64_t len)
{
    for (int i = 0; i < shm.nmr; i++) {
        mr_ent_t *m = &shm.mr[i];
        if (m->rkey == rkey)
            return raddr >= (uintptr_t)m->addr && len <= m->len && raddr - (uintptr_t)m->addr <= m->len - len
                       ? (char *)(uintptr_t)raddr
                       : NULL;
    }
    return NULL;
}

/* Cross-memory attach; returns 0, or -errno. Marks the peer refused on EPERM/ENOSYS. */
static int cma(shm_peer_t *p, void *local, size_t len, uint64_t raddr, int write)
{
    size_t done = 0;
    while (done < len) {
        struct iovec l = {(char *)local + done, len - done};
        struct iovec r = {(void *)(uintptr_t)(raddr + done), len - done};
        ssize_t n = write ? process_vm_writev(p->pid, &l, 1, &r, 1, 0) : process_vm_readv(p->pid, &l, 1, &r, 1, 0);
        if (n > 0) {
            done += (size_t)n;
            continue;
        }
        int err = n < 0 ? errno : EIO;
        if (err == EINTR)
            continue;
        if ((err == EPERM || err == ENOSYS || err == EACCES) && done == 0) {
            if (shm.cma_mode == RMPI_SHM_CMA_ON)
                rmpi_fatal("process_vm_%sv to rank %d was refused (%s) and RMPI_SHM_CMA=on; set "
                           "RMPI_SHM_CMA=auto to copy through shared memory instead.",
                           write ? "write" : "read", p->rank, strerror(err));
            rmpi_log(1, "cross-memory attach to rank %d refused (%s); copying through shared memory.", p->rank,
                     strerror(err));
            p->cma = -1;
            return 1;
        }
        return -err;
    }
    p->cma = 1;
    return 0;
}

static int shm_get(rmpi_rail_t *rail, int peer, void *local, size_t len, uint64_t raddr, uint64_t rkey,
                   rmpi_net_op_t *op)
{
    shm_peer_t *p = shm.peer[peer];
    op->rail = rail;
    op->t_post = rmpi_time_ns();
    if (p->cma >= 0) {
        int rc = cma(p, local, len, raddr, 0);
        if (rc <= 0) {
            push_done(op, rc);
            return 0;
        }
    }
    emu_get_t *eg = rmpi_xmalloc(sizeof *eg);
    *eg = (emu_get_t){op, local, len, 0};
    wire_get_req_t req = {(uintptr_t)eg, raddr, rkey, len};
    struct iovec iov = {&req, sizeof req};
    post(p, RMPI_SHM_GET_REQ, &iov, 1);
    return 0;
}

static int shm_put(rmpi_rail_t *rail, int peer, const void *local, size_t len, uint64_t raddr, uint64_t rkey,
                   rmpi_net_op_t *op)
{
    shm_peer_t *p = shm.peer[peer];
    op->rail = rail;
    op->t_post = rmpi_time_ns();
    if (p->cma >= 0) {
        int rc = cma(p, (void *)local, len, raddr, 1);
        if (rc <= 0) {
            push_done(op, rc);
            return 0;
        }
    }
    /* All chunks are posted (or copied to the pending queue) now, so later frames on this
     * rail cannot overtake the data and the local buffer is free at once. */
    size_t chunk = shm.max_frame - sizeof(wire_put_t);
    size_t off = 0;
    do {
        size_t n = RMPI_MIN(chunk, len - off);
        wire_put_t hdr = {raddr + off, rkey};
        struct iovec iov[2] = {{&hdr, sizeof hdr}, {(char *)local + off, n}};
        post(p, RMPI_SHM_PUT, iov, 2);
        off += n;
    } while (off < len);
    push_done(op, 0);
    return 0;
}

static void serve_gets(void)
{
    get_resp_t **pp = &shm.resp;
    while (*pp) {
        get_resp_t *g = *pp;
        size_t chunk = shm.max_frame - sizeof(wire_get_resp_t);
        while (!g->peer->pend) {
            size_t n = g->status ? 0 : RMPI_MIN(chunk, g->len - g->off);
            void *dst = rmpi_shm_ring_reserve(&g->peer->wr, sizeof(wire_get_resp_t) + n);
            if (!dst)
                break;
            wire_get_resp_t h = {g->cookie, g->off, g->status, 0};
            memcpy(dst, &h, sizeof h);
            memcpy((char *)dst + sizeof h, g->src + g->off, n);
            rmpi_shm_ring_commit(&g->peer->wr, sizeof h + n, RMPI_SHM_GET_RESP);
            g->off += n;
            if (g->off == g->len || g->status)
                break;
        }
        if (g->off == g->len || g->status) {
            *pp = g->next;
            free(g);
        } else {
            pp = &g->next;
        }
    }
}

static void handle(shm_rail_t *s, int rank, unsigned type, const char *buf, size_t len)
{
    switch (type) {
    case RMPI_SHM_DATA: s->env->on_frame(&s->base, rank, buf, len); break;
    case RMPI_SHM_GET_REQ: {
        wire_get_req_t req;
        memcpy(&req, buf, sizeof req);
        get_resp_t *g = rmpi_xcalloc(1, sizeof *g);
        g->peer = s->peer[rank];
        g->cookie = req.cookie;
        g->len = req.len;
        g->src = mr_check(req.rkey, req.raddr, req.len);
        g->status = g->src ? 0 : -EFAULT;
        if (!g->src)
            rmpi_warn("rank %d asked to read %llu bytes at %#llx outside any registered region.", rank,
                      (unsigned long long)req.len, (unsigned long long)req.raddr);
        g->next = s->resp;
        s->resp = g;
        break;
    }
    case RMPI_SHM_GET_RESP: {
        wire_get_resp_t h;
        memcpy(&h, buf, sizeof h);
        emu_get_t *eg = (emu_get_t *)(uintptr_t)h.cookie;
        size_t n = len - sizeof h;
        if (h.status == 0 && h.off + n <= eg->len) {
            memcpy(eg->local + h.off, buf + sizeof h, n);
            eg->got += n;
        }
        if (h.status || eg->got == eg->len) {
            eg->op->status = h.status;
            eg->op->t_done = rmpi_time_ns();
            eg->op->complete(eg->op);
            free(eg);
        }
        break;
    }
    case RMPI_SHM_PUT: {
        wire_put_t h;
        memcpy(&h, buf, sizeof h);
        size_t n = len - sizeof h;
        char *dst = mr_check(h.rkey, h.raddr, n);
        if (dst)
            memcpy(dst, buf + sizeof h, n);
        else
            rmpi_warn("rank %d wrote %zu bytes at %#llx outside any registered region; dropped.", rank, n,
                      (unsigned long long)h.raddr);
        break;
    }
    default: rmpi_fatal("corrupt shared-memory frame (type %u) from rank %d.", type, rank);
    }
}

static int shm_progress(rmpi_rail_t *rail)
{
    shm_rail_t *s = &shm;
    int ev = 0;
    for (int i = 0; i < s->nrd; i++) {
        rmpi_shm_reader_t *rd = &s->rd[i];
        size_t len;
        unsigned type;
        const void *f;
        /* bounded per ring so one busy sender cannot starve the others */
        for (int k = 0; k < 32 && (f = rmpi_shm_ring_peek(rd, &len, &type)); k++) {
            handle(s, s->rd_rank[i], type, f, len);
            rmpi_shm_ring_consume(rd, len);
            ev++;
        }
    }
    if (RMPI_UNLIKELY(s->npending))
        flush_pending();
    if (RMPI_UNLIKELY(s->resp != NULL))
        serve_gets();
    if (RMPI_UNLIKELY(s->ndone)) {
        /* completions may post new operations that add to the list: take a snapshot */
        int n = s->ndone;
        rmpi_net_op_t *local[64], **ops = n <= 64 ? local : rmpi_xmalloc((size_t)n * sizeof *ops);
        memcpy(ops, s->done, (size_t)n * sizeof *ops);
        memmove(s->done, s->done + n, (size_t)(s->ndone - n) * sizeof *ops);
        s->ndone -= n;
        uint64_t now = rmpi_time_ns();
        for (int i = 0; i < n; i++) {
            ops[i]->t_done = now;
            ops[i]->complete(ops[i]);
        }
        if (ops != local)
            free(ops);
        ev += n;
    }
    return ev;
}

static void shm_close(rmpi_rail_t *rail)
{
    shm_rail_t *s = &shm;
    /* bounded flush: peers are in finalize too and drain their rings */
    uint64_t deadline = rmpi_time_ns() + 2000000000ull;
    while ((s->npending || s->resp) && rmpi_time_ns() < deadline) {
        flush_pending();
        serve_gets();
    }
    for (int r = 0; r < s->env->size; r++) {
        shm_peer_t *p = s->peer[r];
        if (!p)
            continue;
        while (p->pend) {
            pending_t *q = p->pend;
            p->pend = q->next;
            free(q);
        }
        munmap(p->seg, p->seg_len);
        free(p);
    }
    munmap(s->seg, s->seg_len);
    shm_unlink(s->segname);
    free(s->peer);
    free(s->local_rank);
    free(s->rd);
    free(s->rd_rank);
    free(s->done);
    free(s->mr);
    memset(s, 0, sizeof *s);
}

static void shm_describe(rmpi_rail_t *rail, void *file)
{
    fprintf(file, "    ring %u cells of %u bytes per local sender, max frame %zu, cross-memory attach %s\n", shm.ncells,
            RMPI_SHM_CELL, shm.max_frame, rmpi_knob_text("SHM_CMA"));
}

const struct rmpi_net_ops rmpi_shm_ops = {
    .version = RMPI_NET_OPS_VERSION,
    .name = "shm",
    .open = shm_open_rail,
    .ready = shm_ready,
    .reaches = shm_reaches,
    .send = shm_send,
    .mr_reg = shm_mr_reg,
    .mr_dereg = shm_mr_dereg,
    .get = shm_get,
    .put = shm_put,
    .progress = shm_progress,
    .close = shm_close,
    .describe = shm_describe,
};
