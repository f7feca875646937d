/* MPI_T, the tool information interface (MPI 4.1 chapter 15).
 *
 * Control variables are the rows of src/rt/knobs.def, in table order, named as their
 * environment variable (RMPI_EAGER_LIMIT): that is the name users set, rmpi_info --knobs
 * and docs/knobs.md print, so a tool's listing and the documentation agree. Knobs are
 * parsed once, at MPI_T_init_thread or MPI_Init, and most are read once when their layer
 * starts: those are MPI_T_SCOPE_READONLY and a write returns MPI_T_ERR_CVAR_SET_NEVER.
 * Only knobs whose consumer reads the value at every use are writable (`writable`): two
 * of them per process (MPI_T_SCOPE_LOCAL), and the collectives' algorithm choices and
 * thresholds, which every member must set alike (MPI_T_SCOPE_ALL_EQ).
 *
 * Performance variables are the process-wide sums of the counters RMPI_REPORT prints
 * (src/core core stats, src/vc per-peer and per-rail counters, src/net security and
 * registration-cache counters). Counters are startable (not continuous): a handle counts
 * only while started, from the moment of MPI_T_pvar_start, and may be written or reset;
 * levels (cache entries) are continuous and read-only.
 *
 * Categories: one per layer of the knob table, holding that layer's cvars and pvars.
 * Events and event sources: RailMPI has none, so their counts are 0, every index is
 * MPI_T_ERR_INVALID_INDEX and every registration or instance MPI_T_ERR_INVALID_HANDLE.
 *
 * Threading: every call takes mpit_lock (MPI_THREAD_MULTIPLE); sampling counters also
 * takes the library lock so the sums are those of a quiescent library.
 */
#include "api_impl.h"
#include "../vc/vc.h"
#include "../chan/select.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t mpit_lock = PTHREAD_MUTEX_INITIALIZER;
static int mpit_refs;

static const char *const layers[] = {"util", "rt",       "net",  "vc",  "chan", "core",
                                     "comm", "datatype", "coll", "rma", "io",   "api"};
#define NLAYERS ((int)(sizeof layers / sizeof layers[0]))

/* Knobs whose value is read at every use, so a write after init changes behaviour:
 * DEBUG by rmpi_log at each line, REPORT by rmpi_core_finalize (MPI_T_SCOPE_LOCAL). */
static int local_writable(const rmpi_knob_desc_t *k) { return !strcmp(k->name, "DEBUG") || !strcmp(k->name, "REPORT"); }

/* Collective knobs that the coll layer reads at every blocking call's algorithm choice
 * (select.c, gather_select.c, the site builders, shm.c's thresholds), so that a
 * benchmark can switch between two ways inside one job (bench/coll.c -k): the machine's
 * speed changes level between jobs, and only both ways in one job and period decide
 * differences of a few percent (docs/results/coll.md). Every member of a call must choose
 * alike, so these are MPI_T_SCOPE_ALL_EQ: written to the same value on every process,
 * between collective calls, while no non-blocking or persistent collective is active
 * (some are read again at each step of a call). Knobs fixed when a communicator's shared
 * segment is made (COLL_SHM, COLL_SHM_CHUNK, the oversubscription switches, the slot and
 * the deep ring, which size the segment's layout) or cached in it (COLL_SITES) stay
 * read-only. */
static const char *const coll_writable[] = {"COLL_GATHER",
                                            "COLL_SCATTER",
                                            "COLL_GATHER_LARGE",
                                            "COLL_ALLGATHER",
                                            "COLL_ALLGATHERV",
                                            "COLL_ALLGATHER_LARGE",
                                            "COLL_ALLTOALL",
                                            "COLL_ALLTOALLV",
                                            "COLL_ALLTOALL_LARGE",
                                            "COLL_ALLGATHER_NODE_LINEAR",
                                            "COLL_ALLTOALL_NODE_LINEAR",
                                            "COLL_ALLREDUCE_NODE_LARGE",
                                            "COLL_BARRIER",
                                            "COLL_BCAST",
                                            "COLL_BCAST_LARGE",
                                            "COLL_REDUCE",
                                            "COLL_REDUCE_LARGE",
                                            "COLL_ALLREDUCE",
                                            "COLL_ALLREDUCE_LARGE",
                                            "COLL_ALLREDUCE_RING",
                                            "COLL_REDUCE_SCATTER",
                                            "COLL_REDUCE_SCATTER_LARGE",
                                            "COLL_SCAN",
                                            "COLL_SHM_NB",
                                            "COLL_SHM_BCAST_DEEP",
                                            "COLL_SHM_REDUCE_DEEP",
                                            "COLL_SHM_TWO_SEGMENT",
                                            "COLL_SHM_TWO_TRIAL",
                                            "COLL_SHM_ROOTED",
                                            "COLL_SHM_ROOTED_CMA",
                                            "COLL_SHM_OVERSUBSCRIBED_BCAST",
                                            "COLL_SHM_OVERSUBSCRIBED_REDUCE",
                                            "COLL_SHM_OVERSUBSCRIBED_REDUCE_CMA",
                                            "COLL_SHM_OVERSUBSCRIBED_ALLREDUCE",
                                            "COLL_SHM_OVERSUBSCRIBED_SMALL",
                                            "COLL_SHM_SMALL",
                                            "COLL_SHM_SMALL_TWO",
                                            "COLL_SHM_BCAST_MAX",
                                            "COLL_SHM_BCAST_HALVES",
                                            "COLL_SHM_BCAST_TREE_MIN",
                                            "COLL_SHM_BCAST_TREE_MAX",
                                            "COLL_SHM_BCAST_CMA",
                                            "COLL_SHM_REDUCE_MAX",
                                            "COLL_SHM_REDUCE_CMA",
                                            "COLL_SHM_REDUCE_CMA_SPLIT",
                                            "COLL_SHM_ALLREDUCE_MAX",
                                            "COLL_SHM_REDUCE_SCATTER_MAX",
                                            "COLL_SHM_REDUCE_SCATTER_CMA",
                                            "COLL_SHM_SCAN_MAX",
                                            "COLL_SHM_ALLGATHER_MAX",
                                            "COLL_SHM_ALLTOALL_MAX",
                                            "COLL_SHM_ALLGATHER_CMA",
                                            "COLL_SHM_ALLTOALL_CMA",
                                            "COLL_SHM_CMA_PIECE",
                                            "COLL_SHM_CMA_NT",
                                            "COLL_SHM_BCAST_CMA_PIECE",
                                            "COLL_SHM_MOVE_LINE",
                                            "COLL_SHM_CELLS",
                                            "COLL_SHM_LINES",
                                            "COLL_SHM_STATE",
                                            "COLL_SHM_STATE_RT",
                                            "COLL_SHM_STATE_MS",
                                            "COLL_SHM_BCAST_CMA_SLOW",
                                            "COLL_SHM_REDUCE_CMA_SLOW",
                                            "COLL_SHM_ALLGATHER_CMA_SLOW",
                                            "COLL_SHM_ALLTOALL_CMA_SLOW",
                                            "COLL_SHM_ALLREDUCE_CMA",
                                            "COLL_SHM_ALLREDUCE_CMA_MAX",
                                            "COLL_SHM_ALLREDUCE_CMA_SLOW",
                                            "COLL_SHM_OVERSUBSCRIBED_STATE",
                                            "COLL_SHM_OVERSUBSCRIBED_BARRIER",
                                            "COLL_SHM_OVERSUBSCRIBED_REDUCE_CMA_SPLIT",
                                            "COLL_SHM_OVERSUBSCRIBED_REDUCE_CMA_SLOW",
                                            "COLL_SHM_OVERSUBSCRIBED_REDUCE_CMA_SLOW_MAX",
                                            "COLL_SHM_OVERSUBSCRIBED_BCAST_CMA",
                                            "COLL_SHM_OVERSUBSCRIBED_BCAST_CMA_SLOW",
                                            "COLL_SHM_OVERSUBSCRIBED_BCAST_CMA_SLOW_MAX",
                                            "COLL_SHM_OVERSUBSCRIBED_ALLREDUCE_CMA_SLOW",
                                            "COLL_SHM_OVERSUBSCRIBED_ALLREDUCE_CMA_SLOW_MAX",
                                            "COLL_SHM_OVERSUBSCRIBED_BCAST_YIELDS",
                                            "COLL_SHM_OVERSUBSCRIBED_ALLREDUCE_YIELDS",
                                            "COLL_SHM_OVERSUBSCRIBED_YIELDS",
                                            "COLL_SHM_OVERSUBSCRIBED_WINDOW",
                                            "COLL_SHM_OVERSUBSCRIBED_TRIAL_MS",
                                            "COLL_SITE_SPLIT",
                                            "COLL_SITE_RUNS_MIN",
                                            "COLL_SITE_CHUNK",
                                            "COLL_SITE_SPLIT_BCAST",
                                            "COLL_SITE_CHAIN_BCAST"};

static int all_eq_writable(const rmpi_knob_desc_t *k)
{
    for (size_t i = 0; i < sizeof coll_writable / sizeof coll_writable[0]; i++)
        if (!strcmp(k->name, coll_writable[i]))
            return 1;
    return 0;
}

static int writable(const rmpi_knob_desc_t *k) { return local_writable(k) || all_eq_writable(k); }

/* Whether value in (the cvar's datatype) is one the knob's consumers accept, as the
 * environment's parser would (knobs.c): a bad value is refused at the write
 * (MPI_T_ERR_INVALID), not found at a later call. The single-copy pieces take 0 (auto)
 * or at least 4 KiB (shm.c's piece_knob). */
static int value_ok(const rmpi_knob_desc_t *k, const void *in)
{
    switch (k->type) {
    case RMPI_KNOB_BOOL: {
        int v;
        memcpy(&v, in, sizeof v);
        return v == 0 || v == 1;
    }
    case RMPI_KNOB_ENUM: {
        int v, n = 1;
        memcpy(&v, in, sizeof v);
        for (const char *p = k->choices; *p; p++)
            n += *p == '|';
        return v >= 0 && v < n;
    }
    case RMPI_KNOB_SIZE:
    case RMPI_KNOB_COUNT: {
        long long v;
        memcpy(&v, in, sizeof v);
        if (!strcmp(k->name, "COLL_SHM_CMA_PIECE"))
            return v == 0 || v >= 4096;
        if (!strcmp(k->name, "COLL_SHM_BCAST_CMA_PIECE"))
            return v >= 4096;
        return v >= 0;
    }
    case RMPI_KNOB_FLOAT: { /* the writable ones are times and rates: a number, not below 0 */
        double v;
        memcpy(&v, in, sizeof v);
        return v == v && v >= 0;
    }
    default: return 1;
    }
}

/* ---- string out-parameters (MPI 4.1 section 15.3.3) ---- */
static void put_str(const char *s, char *buf, int *len)
{
    if (!len)
        return;
    int need = (int)strlen(s) + 1;
    if (!buf || *len <= 0) {
        *len = need;
        return;
    }
    int n = need < *len ? need : *len;
    memcpy(buf, s, (size_t)(n - 1));
    buf[n - 1] = '\0';
    *len = n;
}

/* ---- enumerations: one per ENUM knob ---- */
struct MPI_T_enum_t {
    int knob;
    int nitems;
    char **items;
};
static struct MPI_T_enum_t *enums; /* indexed like the knob table; nitems 0 for non-ENUM */

static int enums_build(void)
{
    size_t n = rmpi_knobs_count();
    enums = calloc(n, sizeof *enums);
    if (!enums)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const rmpi_knob_desc_t *k = rmpi_knob_at(i);
        enums[i].knob = (int)i;
        if (k->type != RMPI_KNOB_ENUM)
            continue;
        int cnt = 1;
        for (const char *c = k->choices; *c; c++)
            cnt += *c == '|';
        enums[i].items = calloc((size_t)cnt, sizeof(char *));
        if (!enums[i].items)
            return -1;
        const char *c = k->choices;
        for (int j = 0; j < cnt; j++) {
            size_t l = strcspn(c, "|");
            enums[i].items[j] = strndup(c, l);
            if (!enums[i].items[j])
                return -1;
            enums[i].nitems = j + 1;
            c += l + (c[l] == '|');
        }
    }
    return 0;
}

static void enums_free(void)
{
    if (!enums)
        return;
    for (size_t i = 0; i < rmpi_knobs_count(); i++) {
        for (int j = 0; j < enums[i].nitems; j++)
            free(enums[i].items[j]);
        free(enums[i].items);
    }
    free(enums);
    enums = NULL;
}

static struct MPI_T_enum_t *enum_get(MPI_T_enum e)
{
    size_t n = rmpi_knobs_count();
    for (size_t i = 0; i < n; i++)
        if (e == &enums[i] && enums[i].nitems)
            return e;
    return NULL;
}

/* ---- performance variables ---- */
typedef struct pvar_sample {
    rmpi_vc_totals_t vc;
    rmpi_net_mr_stats_t mr;
    rmpi_chan_totals_t chan;
} pvar_sample_t;

enum { PV_CORE, PV_SEC, PV_SPLIT, PV_VC, PV_MR, PV_CHAN, PV_MR_ENTRIES };
typedef struct pvar_def {
    const char *name, *layer, *desc;
    int cls, src;
    size_t off; /* of the uint64_t in its source struct */
} pvar_def_t;

#define CORE(f, d)                                                                               \
    {                                                                                            \
        "rmpi_" #f, "core", d, MPI_T_PVAR_CLASS_COUNTER, PV_CORE, offsetof(rmpi_core_stats_t, f) \
    }
#define VC(n, f, d)                                                                        \
    {                                                                                      \
        "rmpi_" n, "vc", d, MPI_T_PVAR_CLASS_COUNTER, PV_VC, offsetof(rmpi_vc_totals_t, f) \
    }
#define MR(f, d)                                                                                   \
    {                                                                                              \
        "rmpi_mr_" #f, "net", d, MPI_T_PVAR_CLASS_COUNTER, PV_MR, offsetof(rmpi_net_mr_stats_t, f) \
    }
#define CHAN(f, d)                                                                                     \
    {                                                                                                  \
        "rmpi_chan_" #f, "chan", d, MPI_T_PVAR_CLASS_COUNTER, PV_CHAN, offsetof(rmpi_chan_totals_t, f) \
    }
static const pvar_def_t pvars[] = {
    CORE(eager_full, "Eager frames sent with a full header."),
    CORE(eager_short, "Eager frames sent with a cached (short) header."),
    CORE(zc_sends, "Eager frames the provider sent straight from the user's buffer."),
    CORE(rndv, "Rendezvous sends started."),
    CORE(unexpected, "Messages that arrived before a matching receive was posted."),
    CORE(seg_sends, "Non-contiguous eager sends sent as segments."),
    CORE(packed_sends, "Non-contiguous eager sends packed before sending."),
    CORE(scattered_recvs, "Non-contiguous eager receives scattered from the frame."),
    CORE(frag_recvs, "Rendezvous receives whose data came as frames scattered one by one."),
    CORE(frag_sends, "Rendezvous sends whose data left as frames gathered or packed one by one."),
    CORE(seg_rndv_sends, "Rendezvous sends gathered segment by segment."),
    CORE(seg_rndv_recvs, "Rendezvous receives read into segments."),
    CORE(placed_recvs, "Eager receives whose payload the provider read straight into the receive's buffer."),
    VC("frames_in", frames_in, "Frames received from every peer."),
    VC("frames_out", frames_out, "Frames sent on every rail to every peer."),
    VC("frame_bytes", frame_bytes, "Bytes of frames sent, summed over rails and peers."),
    VC("rdma_bytes", rdma_bytes, "Bytes moved by RDMA (native or emulated), summed over rails and peers."),
    VC("ooo_frames", ooo_frames, "Frames that arrived out of PSN order and waited in the reorder queue."),
    VC("dup_frames", dup_frames, "Duplicate frames dropped (already delivered PSN)."),
    VC("resent_frames", resent_frames, "Frames resent on another rail after a rail failed."),
    VC("adapt_updates", adapt_updates, "Adaptive striping weight updates."),
    {"rmpi_conn_refused", "net", "Connections refused because they did not prove they belong to the job.",
     MPI_T_PVAR_CLASS_COUNTER, PV_SEC, offsetof(rmpi_net_sec_stats_t, refused)},
    {"rmpi_peers_cut", "net", "Peers cut off for a malformed frame.", MPI_T_PVAR_CLASS_COUNTER, PV_SEC,
     offsetof(rmpi_net_sec_stats_t, malformed)},
    {"rmpi_split_served", "net",
     "Cross-memory copies of this process (one-sided puts and gets, RMPI_SHM_CMA_SPLIT) whose second half the target "
     "copied.",
     MPI_T_PVAR_CLASS_COUNTER, PV_SPLIT, offsetof(rmpi_net_split_stats_t, served)},
    {"rmpi_split_claimed", "net",
     "Cross-memory copies of this process offered to the target for splitting and taken back (the target had not "
     "started its half).",
     MPI_T_PVAR_CLASS_COUNTER, PV_SPLIT, offsetof(rmpi_net_split_stats_t, claimed)},
    {"rmpi_split_took", "net", "Halves of other processes' cross-memory copies this process copied from its progress.",
     MPI_T_PVAR_CLASS_COUNTER, PV_SPLIT, offsetof(rmpi_net_split_stats_t, took)},
    MR(hits, "Registration cache hits."),
    MR(misses, "Registration cache misses."),
    MR(evictions, "Registration cache evictions."),
    MR(invalidations, "Registration cache entries invalidated by memory release."),
    {"rmpi_mr_entries", "net", "Registrations the cache holds now.", MPI_T_PVAR_CLASS_LEVEL, PV_MR_ENTRIES, 0},
    CHAN(runs, "Channel selection runs (FIND_MAP over the receive statistics)."),
    CHAN(trigger_runs, "Channel selection runs started early by RMPI_CHAN_TRIGGER receives."),
    CHAN(to_dedicated, "Channel decisions to make a peer dedicated (each one a switch to its own ring)."),
    CHAN(to_shared, "Channel decisions to release a peer to the shared channel (each one a switch)."),
};
#undef CORE
#undef VC
#undef MR
#undef CHAN
#define NPVARS ((int)(sizeof pvars / sizeof pvars[0]))

static const char *pvar_name(int i) { return pvars[i].name; }
static int pvar_continuous(int i) { return pvars[i].cls != MPI_T_PVAR_CLASS_COUNTER; }

static void sample(pvar_sample_t *s)
{
    RMPI_LOCK();
    rmpi_vc_totals(&s->vc);
    rmpi_chan_lib_totals(&s->chan);
    RMPI_UNLOCK();
    s->mr = rmpi_net_mr_stats();
}

static unsigned long long pvar_value(int i, const pvar_sample_t *s)
{
    const pvar_def_t *p = &pvars[i];
    switch (p->src) {
    case PV_CORE: return __atomic_load_n((uint64_t *)((char *)&rmpi_core_stats + p->off), __ATOMIC_RELAXED);
    case PV_SEC: return __atomic_load_n((uint64_t *)((char *)&rmpi_net_sec_stats + p->off), __ATOMIC_RELAXED);
    case PV_SPLIT: return __atomic_load_n((uint64_t *)((char *)&rmpi_net_split_stats + p->off), __ATOMIC_RELAXED);
    case PV_VC: return *(const uint64_t *)((const char *)&s->vc + p->off);
    case PV_MR: return *(const uint64_t *)((const char *)&s->mr + p->off);
    case PV_CHAN: return *(const uint64_t *)((const char *)&s->chan + p->off);
    default: return s->mr.entries;
    }
}

static unsigned long long pvar_now(int i)
{
    pvar_sample_t s;
    sample(&s);
    return pvar_value(i, &s);
}

/* Handles and sessions start with this link: one pair of helpers keeps all their lists. */
typedef struct mpit_link {
    struct mpit_link *next;
} mpit_link_t;

static int list_has(const mpit_link_t *head, const void *x)
{
    for (; head; head = head->next)
        if ((const void *)head == x)
            return 1;
    return 0;
}

/* Take x out of the list (the caller frees it); 0 when it is not there. */
static int list_unlink(mpit_link_t **head, const void *x)
{
    for (; *head; head = &(*head)->next)
        if ((const void *)*head == x) {
            *head = (*head)->next;
            return 1;
        }
    return 0;
}

/* A new zeroed object of size bytes at the head of the list, or NULL. */
static void *list_new(mpit_link_t **head, size_t size)
{
    mpit_link_t *l = calloc(1, size);
    if (l) {
        l->next = *head;
        *head = l;
    }
    return l;
}

/* Unlink and free x: MPI_SUCCESS, or bad when x is not in the list. */
static int list_drop(mpit_link_t **head, void *x, int bad)
{
    if (!list_unlink(head, x))
        return bad;
    free(x);
    return MPI_SUCCESS;
}

static void list_free(mpit_link_t **head)
{
    while (*head) {
        mpit_link_t *l = *head;
        *head = l->next;
        free(l);
    }
}

/* The index of name among n names (name_of(i)), or -1. */
static int name_index(const char *name, int n, const char *(*name_of)(int))
{
    for (int i = 0; name && i < n; i++)
        if (!strcmp(name_of(i), name))
            return i;
    return -1;
}

/* The answer of a *_get_index call: i found (>= 0) or MPI_T_ERR_INVALID_NAME. */
static int index_answer(int i, int *index)
{
    if (i < 0)
        return MPI_T_ERR_INVALID_NAME;
    *index = i;
    return MPI_SUCCESS;
}

struct MPI_T_pvar_handle_t {
    mpit_link_t link;
    int index, started;
    unsigned long long acc;  /* counted while started, up to the last stop (or written) */
    unsigned long long mark; /* the source's value at start */
};
struct MPI_T_pvar_session_t {
    mpit_link_t link;
    mpit_link_t *handles;
};
static mpit_link_t *sessions;

struct MPI_T_cvar_handle_t {
    mpit_link_t link;
    int index;
};
static mpit_link_t *cvar_handles;

/* An optional out-parameter (the standard lets a tool pass NULL for what it does not want). */
#define OUT(p, v)       \
    do {                \
        if (p)          \
            *(p) = (v); \
    } while (0)
#define MPIT_ENTER()                          \
    do {                                      \
        pthread_mutex_lock(&mpit_lock);       \
        if (!mpit_refs) {                     \
            pthread_mutex_unlock(&mpit_lock); \
            return MPI_T_ERR_NOT_INITIALIZED; \
        }                                     \
    } while (0)
#define MPIT_RETURN(rc)                   \
    do {                                  \
        int rc_ = (rc);                   \
        pthread_mutex_unlock(&mpit_lock); \
        return rc_;                       \
    } while (0)

/* A *_get_num call (and category_changed): n, once MPI_T is initialized. */
static int num_answer(int *out, int n)
{
    MPIT_ENTER();
    if (!out)
        MPIT_RETURN(MPI_T_ERR_INVALID);
    *out = n;
    MPIT_RETURN(MPI_SUCCESS);
}

/* ---- life cycle ---- */
int MPI_T_init_thread(int required, int *provided)
{
    if (!provided)
        return MPI_T_ERR_INVALID;
    if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
        return MPI_T_ERR_INVALID;
    pthread_mutex_lock(&mpit_lock);
    if (!mpit_refs) {
        /* The variables' values: the same parse MPI_Init does (a bad value is fatal there
         * too, naming the variable), so MPI_T works before MPI_Init and after Finalize. */
        rmpi_knobs_init();
        if (enums_build()) {
            enums_free();
            pthread_mutex_unlock(&mpit_lock);
            return MPI_T_ERR_MEMORY;
        }
    }
    mpit_refs++;
    pthread_mutex_unlock(&mpit_lock);
    *provided = MPI_THREAD_MULTIPLE;
    return MPI_SUCCESS;
}

int MPI_T_finalize(void)
{
    MPIT_ENTER();
    if (--mpit_refs == 0) {
        /* The last finalize ends every handle and session (MPI 4.1 section 15.3.4). */
        for (mpit_link_t *s = sessions; s; s = s->next)
            list_free(&((struct MPI_T_pvar_session_t *)s)->handles);
        list_free(&sessions);
        list_free(&cvar_handles);
        enums_free();
    }
    MPIT_RETURN(MPI_SUCCESS);
}

/* ---- control variables ---- */
static int ncvars(void) { return (int)rmpi_knobs_count(); }
static const char *knob_name(int i) { return rmpi_knob_at((size_t)i)->name; }

static MPI_Datatype cvar_type(const rmpi_knob_desc_t *k)
{
    switch (k->type) {
    case RMPI_KNOB_BOOL:
    case RMPI_KNOB_ENUM: return MPI_INT;
    case RMPI_KNOB_INT:
    case RMPI_KNOB_COUNT: /* auto reads as 0 */
    case RMPI_KNOB_SIZE: return MPI_LONG_LONG;
    case RMPI_KNOB_FLOAT: return MPI_DOUBLE;
    default: return MPI_CHAR;
    }
}

static const char *cvar_str(const rmpi_knob_desc_t *k)
{
    const char *s = *(const char *const *)((const char *)&rmpi_knobs + k->offset);
    return s ? s : "";
}

int MPI_T_cvar_get_num(int *num_cvar) { return num_answer(num_cvar, ncvars()); }

int MPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity, MPI_Datatype *datatype,
                        MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *scope)
{
    MPIT_ENTER();
    if (cvar_index < 0 || cvar_index >= ncvars())
        MPIT_RETURN(MPI_T_ERR_INVALID_INDEX);
    const rmpi_knob_desc_t *k = rmpi_knob_at((size_t)cvar_index);
    char full[128];
    snprintf(full, sizeof full, "RMPI_%s", k->name);
    put_str(full, name, name_len);
    put_str(k->doc, desc, desc_len);
    OUT(verbosity, local_writable(k) ? MPI_T_VERBOSITY_USER_BASIC : MPI_T_VERBOSITY_TUNER_BASIC);
    OUT(datatype, cvar_type(k));
    OUT(enumtype, k->type == RMPI_KNOB_ENUM ? &enums[cvar_index] : MPI_T_ENUM_NULL);
    OUT(bind, MPI_T_BIND_NO_OBJECT);
    OUT(scope, local_writable(k) ? MPI_T_SCOPE_LOCAL : all_eq_writable(k) ? MPI_T_SCOPE_ALL_EQ : MPI_T_SCOPE_READONLY);
    MPIT_RETURN(MPI_SUCCESS);
}

int MPI_T_cvar_get_index(const char *name, int *cvar_index)
{
    MPIT_ENTER();
    if (!name || !cvar_index)
        MPIT_RETURN(MPI_T_ERR_INVALID);
    MPIT_RETURN(index_answer(strncmp(name, "RMPI_", 5) ? -1 : name_index(name + 5, ncvars(), knob_name), cvar_index));
}

int MPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    MPIT_ENTER();
    struct MPI_T_enum_t *e = enum_get(enumtype);
    if (!e)
        MPIT_RETURN(MPI_T_ERR_INVALID_HANDLE);
    if (!num)
        MPIT_RETURN(MPI_T_ERR_INVALID);
    *num = e->nitems;
    char full[128];
    snprintf(full, sizeof full, "RMPI_%s", rmpi_knob_at((size_t)e->knob)->name);
    put_str(full, name, name_len);
    MPIT_RETURN(MPI_SUCCESS);
}

int MPI_T_enum_get_item(MPI_T_enum enumtype, int indx, int *value, char *name, int *name_len)
{
    MPIT_ENTER();
    struct MPI_T_enum_t *e = enum_get(enumtype);
    if (!e)
        MPIT_RETURN(MPI_T_ERR_INVALID_HANDLE);
    if (indx < 0 || indx >= e->nitems)
        MPIT_RETURN(MPI_T_ERR_INVALID_ITEM);
    if (!value)
        MPIT_RETURN(MPI_T_ERR_INVALID);
    *value = indx; /* the stored ENUM value is the choice's index (src/rt/README.md) */
    put_str(e->items[indx], name, name_len);
    MPIT_RETURN(MPI_SUCCESS);
}

static struct MPI_T_cvar_handle_t *cvar_handle_get(MPI_T_cvar_handle h) { return list_has(cvar_handles, h) ? h : NULL; }

int MPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle, int *count)
{
    (void)obj_handle; /* every cvar is bound to no object: the standard says it is ignored */
    MPIT_ENTER();
    if (cvar_index < 0 || cvar_index >= ncvars())
        MPIT_RETURN(MPI_T_ERR_INVALID_INDEX);
    if (!handle || !count)
        MPIT_RETURN(MPI_T_ERR_INVALID);
    struct MPI_T_cvar_handle_t *h = list_new(&cvar_handles, sizeof *h);
    if (!h)
        MPIT_RETURN(MPI_T_ERR_MEMORY);
    h->index = cvar_index;
    const rmpi_knob_desc_t *k = rmpi_knob_at((size_t)cvar_index);
    /* A string's count is its size with the NUL: string knobs are read-only, so it holds. */
    *count = k->type == RMPI_KNOB_STR ? (int)strlen(cvar_str(k)) + 1 : 1;
    *handle = h;
    MPIT_RETURN(MPI_SUCCESS);
}

int MPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    MPIT_ENTER();
    if (!handle)
        MPIT_RETURN(MPI_T_ERR_INVALID);
    int rc = list_drop(&cvar_handles, *handle, MPI_T_ERR_INVALID_HANDLE);
    if (rc == MPI_SUCCESS)
        *handle = MPI_T_CVAR_HANDLE_NULL;
    MPIT_RETURN(rc);
}

static size_t cvar_size(const rmpi_knob_desc_t *k)
{
    switch (k->type) {
    case RMPI_KNOB_BOOL:
    case RMPI_KNOB_ENUM: return sizeof(int);
    case RMPI_KNOB_FLOAT: return sizeof(double);
    default: return sizeof(long long);
    }
}

/* read (out) or write (in) a control variable's value. */
static int cvar_access(MPI_T_cvar_handle handle, void *out, const void *in)
{
    MPIT_ENTER();
    struct MPI_T_cvar_handle_t *h = cvar_handle_get(handle);
    if (!h)
        MPIT_RETURN(MPI_T_ERR_INVALID_HANDLE);
    if (!out && !in)
        MPIT_RETURN(MPI_T_ERR_INVALID);
    const rmpi_knob_desc_t *k = rmpi_knob_at((size_t)h->index);
    char *val = (char *)&rmpi_knobs + k->offset;
    if (in && !writable(k))
        MPIT_RETURN(MPI_T_ERR_CVAR_SET_NEVER);
    if (in && !value_ok(k, in))
        MPIT_RETURN(MPI_T_ERR_INVALID);
    if (k->type == RMPI_KNOB_STR) { /* read-only: no lock needed */
        const char *s = cvar_str(k);
        memcpy(out, s, strlen(s) + 1);
        MPIT_RETURN(MPI_SUCCESS);
    }
    RMPI_LOCK();
    if (out)
        memcpy(out, val, cvar_size(k));
    else
        memcpy(val, in, cvar_size(k));
    RMPI_UNLOCK();
    MPIT_RETURN(MPI_SUCCESS);
}

int MPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf) { return cvar_access(handle, buf, NULL); }

int MPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf) { return cvar_access(handle, NULL, buf); }

/* ---- performance variables ---- */
int MPI_T_pvar_get_num(int *num_pvar) { return num_answer(num_pvar, NPVARS); }

int MPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                        MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind,
                        int *readonly, int *continuous, int *atomic)
{
    MPIT_ENTER();
    if (pvar_index < 0 || pvar_index >= NPVARS)
        MPIT_RETURN(MPI_T_ERR_INVALID_INDEX);
    const pvar_def_t *p = &pvars[pvar_index];
    put_str(p->name, name, name_len);
    put_str(p->desc, desc, desc_len);
    OUT(verbosity, MPI_T_VERBOSITY_TUNER_BASIC);
    OUT(var_class, p->cls);
    OUT(datatype, MPI_UNSIGNED_LONG_LONG);
    OUT(enumtype, MPI_T_ENUM_NULL);
    OUT(bind, MPI_T_BIND_NO_OBJECT);
    OUT(readonly, pvar_continuous(pvar_index));
    OUT(continuous, pvar_continuous(pvar_index));
    OUT(atomic, 0);
    MPIT_RETURN(MPI_SUCCESS);
}

int MPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    MPIT_ENTER();
    if (!name || !pvar_index)
        MPIT_RETURN(MPI_T_ERR_INVALID);
    int i = name_index(name, NPVARS, pvar_name);
    MPIT_RETURN(index_answer(i >= 0 && pvars[i].cls == var_class ? i : -1, pvar_index));
}

static struct MPI_T_pvar_session_t *session_get(MPI_T_pvar_session s) { return list_has(sessions, s) ? s : NULL; }

static struct MPI_T_pvar_handle_t *handle_get(struct MPI_T_pvar_session_t *s, MPI_T_pvar_handle h)
{
    return list_has(s->handles, h) ? h : NULL;
}

int MPI_T_pvar_session_create(MPI_T_pvar_session *session)
{
    MPIT_ENTER();
    if (!session)
        MPIT_RETURN(MPI_T_ERR_INVALID);
    *session = list_new(&sessions, sizeof **session);
    MPIT_RETURN(*session ? MPI_SUCCESS : MPI_T_ERR_MEMORY);
}

int MPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
    MPIT_ENTER();
    if (!session)
        MPIT_RETURN(MPI_T_ERR_INVALID);
    if (!session_get(*session))
        MPIT_RETURN(MPI_T_ERR_INVALID_SESSION);
    list_free(&(*session)->handles);
    list_drop(&sessions, *session, MPI_T_ERR_INVALID_SESSION);
    *session = MPI_T_PVAR_SESSION_NULL;
    MPIT_RETURN(MPI_SUCCESS);
}

int MPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle, MPI_T_pvar_handle *handle,
                            int *count)
{
    (void)obj_handle; /* every pvar is bound to no object */
    MPIT_ENTER();
    struct MPI_T_pvar_session_t *s = session_get(session);
    if (!s)
        MPIT_RETURN(MPI_T_ERR_INVALID_SESSION);
    if (pvar_index < 0 || pvar_index >= NPVARS)
        MPIT_RETURN(MPI_T_ERR_INVALID_INDEX);
    if (!handle || !count)
        MPIT_RETURN(MPI_T_ERR_INVALID);
    struct MPI_T_pvar_handle_t *h = list_new(&s->handles, sizeof *h);
    if (!h)
        MPIT_RETURN(MPI_T_ERR_MEMORY);
    h->index = pvar_index;
    h->started = pvar_continuous(pvar_index); /* continuous ones always run */
    *handle = h;
    *count = 1;
    MPIT_RETURN(MPI_SUCCESS);
}

int MPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    MPIT_ENTER();
    struct MPI_T_pvar_session_t *s = session_get(session);
    if (!s)
        MPIT_RETURN(MPI_T_ERR_INVALID_SESSION);
    if (!handle)
        MPIT_RETURN(MPI_T_ERR_INVALID);
    int rc = list_drop(&s->handles, *handle, MPI_T_ERR_INVALID_HANDLE);
    if (rc == MPI_SUCCESS)
        *handle = MPI_T_PVAR_HANDLE_NULL;
    MPIT_RETURN(rc);
}

/* The value a handle shows: a continuous one the source's; a counter what it counted
 * while started. */
static unsigned long long handle_value(const struct MPI_T_pvar_handle_t *h)
{
    if (pvar_continuous(h->index))
        return pvar_now(h->index);
    return h->acc + (h->started ? pvar_now(h->index) - h->mark : 0);
}

enum { OP_START, OP_STOP, OP_RESET };
static int handle_op(struct MPI_T_pvar_handle_t *h, int op)
{
    if (op != OP_RESET && pvar_continuous(h->index))
        return MPI_T_ERR_PVAR_NO_STARTSTOP;
    if (op == OP_RESET && pvar_continuous(h->index))
        return MPI_T_ERR_PVAR_NO_WRITE;
    unsigned long long now = pvar_now(h->index);
    if (op == OP_START && !h->started)
        h->started = 1, h->mark = now;
    else if (op == OP_STOP && h->started)
        h->started = 0, h->acc += now - h->mark;
    else if (op == OP_RESET)
        h->acc = 0, h->mark = now;
    return MPI_SUCCESS;
}

/* start/stop/reset of one handle, or of every handle of the session that allows it
 * (MPI_T_PVAR_ALL_HANDLES: the others are skipped, as the standard says). */
static int session_op(MPI_T_pvar_session session, MPI_T_pvar_handle handle, int op)
{
    MPIT_ENTER();
    struct MPI_T_pvar_session_t *s = session_get(session);
    if (!s)
        MPIT_RETURN(MPI_T_ERR_INVALID_SESSION);
    if (handle == MPI_T_PVAR_ALL_HANDLES) {
        for (mpit_link_t *l = s->handles; l; l = l->next) {
            struct MPI_T_pvar_handle_t *h = (struct MPI_T_pvar_handle_t *)l;
            if (!pvar_continuous(h->index))
                handle_op(h, op);
        }
        MPIT_RETURN(MPI_SUCCESS);
    }
    struct MPI_T_pvar_handle_t *h = handle_get(s, handle);
    if (!h)
        MPIT_RETURN(MPI_T_ERR_INVALID_HANDLE);
    MPIT_RETURN(handle_op(h, op));
}

int MPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return session_op(session, handle, OP_START);
}

int MPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return session_op(session, handle, OP_STOP);
}

int MPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return session_op(session, handle, OP_RESET);
}

/* read (out), write (in), readreset (out == in): one handle (MPI_T_PVAR_ALL_HANDLES is not
 * allowed); a NULL buffer is MPI_T_ERR_INVALID. */
static int handle_rw(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *out, const void *in)
{
    MPIT_ENTER();
    struct MPI_T_pvar_session_t *s = session_get(session);
    if (!s)
        MPIT_RETURN(MPI_T_ERR_INVALID_SESSION);
    struct MPI_T_pvar_handle_t *h = handle == MPI_T_PVAR_ALL_HANDLES ? NULL : handle_get(s, handle);
    if (!h)
        MPIT_RETURN(MPI_T_ERR_INVALID_HANDLE);
    if (!out && !in)
        MPIT_RETURN(MPI_T_ERR_INVALID);
    int reset = out && in == out;
    if (in && pvar_continuous(h->index))
        MPIT_RETURN(MPI_T_ERR_PVAR_NO_WRITE);
    if (!in) {
        unsigned long long v = handle_value(h);
        memcpy(out, &v, sizeof v);
        MPIT_RETURN(MPI_SUCCESS);
    }
    /* a counter: one sample, so readreset loses nothing counted in between */
    unsigned long long now = pvar_now(h->index), v = 0;
    if (out) {
        v = h->acc + (h->started ? now - h->mark : 0);
        memcpy(out, &v, sizeof v);
        v = 0;
    }
    if (!reset)
        memcpy(&v, in, sizeof v);
    h->acc = v;
    h->mark = now;
    MPIT_RETURN(MPI_SUCCESS);
}

int MPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    return handle_rw(session, handle, buf, NULL);
}

int MPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
    return handle_rw(session, handle, NULL, buf);
}

int MPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    return handle_rw(session, handle, buf, buf);
}

/* ---- categories: one per layer ---- */
static const char *layer_name(int i) { return layers[i]; }
static int cvar_in(int i, int cat) { return !strcmp(rmpi_knob_at((size_t)i)->layer, layers[cat]); }
static int pvar_in(int i, int cat) { return !strcmp(pvars[i].layer, layers[cat]); }

static int count_in(int cat, int (*in)(int, int), int n)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        c += in(i, cat);
    return c;
}

int MPI_T_category_get_num(int *num_cat) { return num_answer(num_cat, NLAYERS); }

int MPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len, int *num_cvars,
                            int *num_pvars, int *num_categories)
{
    MPIT_ENTER();
    if (cat_index < 0 || cat_index >= NLAYERS)
        MPIT_RETURN(MPI_T_ERR_INVALID_INDEX);
    char d[96];
    snprintf(d, sizeof d, "Variables of RailMPI's %s layer (src/%s).", layers[cat_index], layers[cat_index]);
    put_str(layers[cat_index], name, name_len);
    put_str(d, desc, desc_len);
    OUT(num_cvars, count_in(cat_index, cvar_in, ncvars()));
    OUT(num_pvars, count_in(cat_index, pvar_in, NPVARS));
    OUT(num_categories, 0);
    MPIT_RETURN(MPI_SUCCESS);
}

int MPI_T_category_get_index(const char *name, int *cat_index)
{
    MPIT_ENTER();
    if (!name || !cat_index)
        MPIT_RETURN(MPI_T_ERR_INVALID);
    MPIT_RETURN(index_answer(name_index(name, NLAYERS, layer_name), cat_index));
}

static int list_in(int cat, int len, int indices[], int (*in)(int, int), int n)
{
    MPIT_ENTER();
    if (cat < 0 || cat >= NLAYERS)
        MPIT_RETURN(MPI_T_ERR_INVALID_INDEX);
    if (len < 0 || (len > 0 && !indices))
        MPIT_RETURN(MPI_T_ERR_INVALID);
    int k = 0;
    for (int i = 0; i < n && in && k < len; i++)
        if (in(i, cat))
            indices[k++] = i;
    MPIT_RETURN(MPI_SUCCESS);
}

int MPI_T_category_get_cvars(int cat_index, int len, int indices[])
{
    return list_in(cat_index, len, indices, cvar_in, (int)rmpi_knobs_count());
}

int MPI_T_category_get_pvars(int cat_index, int len, int indices[])
{
    return list_in(cat_index, len, indices, pvar_in, NPVARS);
}

int MPI_T_category_get_categories(int cat_index, int len, int indices[])
{
    return list_in(cat_index, len, indices, NULL, 0);
}

int MPI_T_category_get_events(int cat_index, int len, int indices[])
{
    return list_in(cat_index, len, indices, NULL, 0);
}

int MPI_T_category_get_num_events(int cat_index, int *num_events)
{
    MPIT_ENTER();
    if (cat_index < 0 || cat_index >= NLAYERS)
        MPIT_RETURN(MPI_T_ERR_INVALID_INDEX);
    if (!num_events)
        MPIT_RETURN(MPI_T_ERR_INVALID);
    *num_events = 0;
    MPIT_RETURN(MPI_SUCCESS);
}

int MPI_T_category_changed(int *update_number)
{
    return num_answer(update_number, 0); /* the categories are fixed for the life of the process */
}

/* ---- events and event sources: there are none ----
 * Every index is invalid, and every registration or instance a tool passes is one RailMPI
 * never made: MPI_T_ERR_INVALID_INDEX / _HANDLE, once MPI_T is initialized. */
static int no_event(int code)
{
    MPIT_ENTER();
    MPIT_RETURN(code);
}

int MPI_T_event_get_num(int *num_events) { return num_answer(num_events, 0); }

int MPI_T_source_get_num(int *num_sources) { return num_answer(num_sources, 0); }

int MPI_T_event_get_index(const char *name, int *event_index)
{
    return no_event(name && event_index ? MPI_T_ERR_INVALID_NAME : MPI_T_ERR_INVALID);
}

int MPI_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity, MPI_Datatype array_of_datatypes[],
                         MPI_Aint array_of_displacements[], int *num_elements, MPI_T_enum *enumtype, MPI_Info *info,
                         char *desc, int *desc_len, int *bind)
{
    return no_event(MPI_T_ERR_INVALID_INDEX);
}

int MPI_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                             MPI_T_event_registration *event_registration)
{
    return no_event(MPI_T_ERR_INVALID_INDEX);
}

int MPI_T_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                          MPI_T_source_order *ordering, MPI_Count *ticks_per_second, MPI_Count *max_ticks,
                          MPI_Info *info)
{
    return no_event(MPI_T_ERR_INVALID_INDEX);
}

int MPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp) { return no_event(MPI_T_ERR_INVALID_INDEX); }

int MPI_T_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                            MPI_T_event_free_cb_function *free_cb_function)
{
    return no_event(MPI_T_ERR_INVALID_HANDLE);
}

int MPI_T_event_handle_get_info(MPI_T_event_registration event_registration, MPI_Info *info_used)
{
    return no_event(MPI_T_ERR_INVALID_HANDLE);
}

int MPI_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info)
{
    return no_event(MPI_T_ERR_INVALID_HANDLE);
}

int MPI_T_event_register_callback(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety, MPI_Info info,
                                  void *user_data, MPI_T_event_cb_function *event_cb_function)
{
    return no_event(MPI_T_ERR_INVALID_HANDLE);
}

int MPI_T_event_callback_get_info(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                  MPI_Info *info_used)
{
    return no_event(MPI_T_ERR_INVALID_HANDLE);
}

int MPI_T_event_callback_set_info(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety, MPI_Info info)
{
    return no_event(MPI_T_ERR_INVALID_HANDLE);
}

int MPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                    MPI_T_event_dropped_cb_function *dropped_cb_function)
{
    return no_event(MPI_T_ERR_INVALID_HANDLE);
}

int MPI_T_event_copy(MPI_T_event_instance event_instance, void *buffer) { return no_event(MPI_T_ERR_INVALID_HANDLE); }

int MPI_T_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer)
{
    return no_event(MPI_T_ERR_INVALID_HANDLE);
}

int MPI_T_event_get_source(MPI_T_event_instance event_instance, int *source_index)
{
    return no_event(MPI_T_ERR_INVALID_HANDLE);
}

int MPI_T_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count *event_timestamp)
{
    return no_event(MPI_T_ERR_INVALID_HANDLE);
}
