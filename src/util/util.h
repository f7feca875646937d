/*
 * util: containers, timers, small helpers. Bottom layer: includes nothing of RailMPI.
 * Contract: header-only inline helpers plus util.c; no global state except the clock
 * base; thread-safe (no shared mutable state; an address set locks itself).
 */
#ifndef RMPI_UTIL_H
#define RMPI_UTIL_H

#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#define RMPI_LIKELY(x) __builtin_expect(!!(x), 1)
#define RMPI_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define RMPI_CACHELINE 64
#define RMPI_ALIGNED(n) __attribute__((aligned(n)))
#define RMPI_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define RMPI_MIN(a, b) ((a) < (b) ? (a) : (b))
#define RMPI_MAX(a, b) ((a) > (b) ? (a) : (b))
#define RMPI_CONTAINER_OF(p, type, member) ((type *)((char *)(p)-offsetof(type, member)))

/* Monotonic nanoseconds (CLOCK_MONOTONIC); used for completion timestamps. */
static inline uint64_t rmpi_time_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void rmpi_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Intrusive doubly linked list with a sentinel head. */
typedef struct rmpi_list {
    struct rmpi_list *next, *prev;
} rmpi_list_t;

static inline void rmpi_list_init(rmpi_list_t *h) { h->next = h->prev = h; }
static inline int rmpi_list_empty(const rmpi_list_t *h) { return h->next == h; }
static inline void rmpi_list_push_back(rmpi_list_t *h, rmpi_list_t *e)
{
    e->prev = h->prev;
    e->next = h;
    h->prev->next = e;
    h->prev = e;
}
static inline void rmpi_list_push_front(rmpi_list_t *h, rmpi_list_t *e)
{
    e->next = h->next;
    e->prev = h;
    h->next->prev = e;
    h->next = e;
}
static inline void rmpi_list_remove(rmpi_list_t *e)
{
    e->prev->next = e->next;
    e->next->prev = e->prev;
    e->next = e->prev = e;
}
#define rmpi_list_for_each(pos, head) for ((pos) = (head)->next; (pos) != (head); (pos) = (pos)->next)
#define rmpi_list_for_each_safe(pos, tmp, head) \
    for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head); (pos) = (tmp), (tmp) = (pos)->next)

/* Copy iov[0..n) to dst back to back; returns the end. Empty entries are skipped: an empty
 * payload may have no buffer, and memcpy(dst, NULL, 0) is undefined behaviour. */
/* memcpy, with up to 32 bytes copied inline: a small message's header (4-16 bytes) and
 * payload cost a call to the library's memcpy each (about 15 instructions with the call)
 * where two overlapping loads and stores do. n == 0 copies nothing. */
static inline void rmpi_copy(void *dst, const void *src, size_t n)
{
    char *d = dst;
    const char *s = src;
    if (n > 32) {
        memcpy(d, s, n);
    } else if (n >= 16) {
        memcpy(d, s, 16);
        memcpy(d + n - 16, s + n - 16, 16);
    } else if (n >= 8) {
        memcpy(d, s, 8);
        memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
        memcpy(d, s, 4);
        memcpy(d + n - 4, s + n - 4, 4);
    } else if (n) {
        d[0] = s[0];
        d[n / 2] = s[n / 2];
        d[n - 1] = s[n - 1];
    }
}

static inline char *rmpi_iov_gather(char *dst, const struct iovec *iov, int n)
{
    for (int i = 0; i < n; i++)
        if (iov[i].iov_len) {
            rmpi_copy(dst, iov[i].iov_base, iov[i].iov_len);
            dst += iov[i].iov_len;
        }
    return dst;
}

/* Parse "64k", "4m", "1g", "123" into bytes; returns -1 on malformed input. */
long long rmpi_parse_size(const char *s);

/* Shared-memory segments of a job are named "/<prefix><pid>-<rank>" (src/net/shm), the
 * prefix being "rmpi-<job>-" with every byte of the job id (the PMI kvsname) but [A-Za-z0-9]
 * made '_', and a job id longer than 48 such bytes cut to 39 plus '_' and the 8 hex digits
 * of its FNV-1a hash, so no two jobs share a prefix. mpiexec removes what a job killed
 * before its ranks unlinked their segments leaves in /dev/shm by this prefix.
 * out gets the prefix without the leading '/' (RMPI_SHM_PREFIX_MAX bytes suffice). */
#define RMPI_SHM_PREFIX_MAX 64
void rmpi_shm_job_prefix(const char *jobid, char *out, size_t len);
/* Map every page of a shared mapping now (MADV_POPULATE_WRITE, else a touch per page), so
 * first use does not pay a page fault every few dozen messages (net/shm rings, coll
 * segments). */
void rmpi_shm_prefault(void *p, size_t len);

/* malloc that never returns NULL (aborts the process with a message on failure). */
void *rmpi_xmalloc(size_t n);
void *rmpi_xcalloc(size_t n, size_t m);
void *rmpi_xrealloc(void *p, size_t n);
char *rmpi_xstrdup(const char *s);

/* ---- address sets (addrset.c): the live objects of one handle kind ----
 * A handle is a pointer the user may have made up (a freed object, (MPI_Comm)0x1234):
 * the layer that owns a kind adds each object it hands out and removes it when freed, and
 * looks a handle up here before dereferencing it. Open addressing, linear probing, hashed
 * by address. Add and del take the set's mutex; a lookup takes it only when `locked` (the
 * caller says whether other threads may add or delete concurrently: THREAD_MULTIPLE).
 * The address found last is remembered (only by unlocked lookups; del forgets it), so a
 * program that keeps using one communicator pays a compare, not a probe. */
typedef struct rmpi_addrset {
    uintptr_t last;    /* a live address, or 0 */
    uintptr_t *slot;   /* 0 empty, 1 deleted, else an address */
    size_t mask;       /* capacity - 1 */
    unsigned shift;    /* 64 - log2(capacity) */
    size_t live, used; /* addresses; addresses + deleted slots */
    pthread_mutex_t lock;
} rmpi_addrset_t;
extern uintptr_t rmpi_addrset_none[2]; /* the empty set: shift 63 hashes to 0 or 1 */
#define RMPI_ADDRSET_INIT                                            \
    {                                                                \
        0, rmpi_addrset_none, 0, 63, 0, 0, PTHREAD_MUTEX_INITIALIZER \
    }
void rmpi_addrset_add(rmpi_addrset_t *s, const void *p);
void rmpi_addrset_del(rmpi_addrset_t *s, const void *p);
int rmpi_addrset_find(rmpi_addrset_t *s, const void *p, int locked);
static inline int rmpi_addrset_has(rmpi_addrset_t *s, const void *p, int locked)
{
    if (RMPI_LIKELY((uintptr_t)p == __atomic_load_n(&s->last, __ATOMIC_RELAXED)))
        return 1;
    return rmpi_addrset_find(s, p, locked);
}

/* ---- authentication (auth.c, libsodium): the job key and challenge-response MACs ---- */
#define RMPI_AUTH_KEY_BYTES 32
#define RMPI_AUTH_MAC_BYTES 32
#define RMPI_AUTH_NONCE_BYTES 16
/* Environment variable through which a launcher hands each rank the job key (64 hex
 * digits); read by rt, never put on a command line. */
#define RMPI_AUTH_KEY_ENV "RAILMPI_JOB_KEY"
/* Kernel random bytes (getrandom): 0, or -1 with errno. */
int rmpi_auth_random(void *buf, size_t len);
/* HMAC-SHA-256 under key of label (NUL included) followed by msg. */
void rmpi_auth_mac(const uint8_t key[RMPI_AUTH_KEY_BYTES], const char *label, const void *msg, size_t len,
                   uint8_t mac[RMPI_AUTH_MAC_BYTES]);
/* 0 when mac is the MAC of (label, msg) under key (constant-time compare), else -1. */
int rmpi_auth_verify(const uint8_t key[RMPI_AUTH_KEY_BYTES], const char *label, const void *msg, size_t len,
                     const uint8_t mac[RMPI_AUTH_MAC_BYTES]);
/* The PMI port handshake's answer (docs/wire/pmi.md): the MAC, under the job key and
 * RMPI_AUTH_PMI_LABEL, of the server's nonce followed by the decimal pmiid. One function
 * for the client (src/rt/pmi.c) and the server (mpiexec) so they cannot drift apart. */
#define RMPI_AUTH_PMI_LABEL "railmpi pmi initack v1"
void rmpi_auth_pmi_mac(const uint8_t key[RMPI_AUTH_KEY_BYTES], const uint8_t nonce[RMPI_AUTH_NONCE_BYTES], int pmiid,
                       uint8_t mac[RMPI_AUTH_MAC_BYTES]);
int rmpi_auth_pmi_verify(const uint8_t key[RMPI_AUTH_KEY_BYTES], const uint8_t nonce[RMPI_AUTH_NONCE_BYTES], int pmiid,
                         const uint8_t mac[RMPI_AUTH_MAC_BYTES]);
/* Constant-time equality of n bytes: 1 equal, 0 not. */
int rmpi_auth_equal(const void *a, const void *b, size_t n);
/* Lower-case hex of n bytes into out (2n+1 bytes); and back (exactly 2n digits): 0 or -1. */
void rmpi_auth_hex(const uint8_t *in, size_t n, char *out);
int rmpi_auth_unhex(const char *hex, uint8_t *out, size_t n);

/* ---- PMI wire words (pmi_wire.c), shared by the PMI client and mpiexec's server ---- */
#define RMPI_PMI_MAX_WORDS 32
/* PMI-1 words are separated by these (a CR too: a client may end its lines with CRLF). */
#define RMPI_PMI_BLANKS " \t\r"
typedef struct rmpi_pmi_words {
    int n;
    char *key[RMPI_PMI_MAX_WORDS], *val[RMPI_PMI_MAX_WORDS]; /* point into the split text */
} rmpi_pmi_words_t;
/* Split a PMI-1 line in place into key=value words (a word without '=' has value "").
 * -1 when it holds more than RMPI_PMI_MAX_WORDS words. */
int rmpi_pmi_split(char *line, rmpi_pmi_words_t *w);
/* Split a PMI-2 frame body ("k=v;k=v;", NUL-terminated) in place; -1 when a pair lacks its
 * '=' or its ';', or there are more than RMPI_PMI_MAX_WORDS pairs. */
int rmpi_pmi2_split(char *body, rmpi_pmi_words_t *w);
/* Value of the first word named key, or NULL. */
const char *rmpi_pmi_word(const rmpi_pmi_words_t *w, const char *key);

/* ---- process binding (cpubind.c; also compiled into mpiexec) ---- */
enum { RMPI_BIND_NONE, RMPI_BIND_CORE, RMPI_BIND_NUMA, RMPI_BIND_AUTO };
enum { RMPI_MAP_CORE, RMPI_MAP_NUMA, RMPI_MAP_NODE, RMPI_MAP_SLOT };
/* The cores and NUMA nodes of this host, each cut down to the caller's affinity mask. */
typedef struct rmpi_cpubind_topo {
    cpu_set_t allowed; /* sched_getaffinity of the caller */
    int host_cpus;     /* online CPUs of the host (allowed narrower: someone bound us) */
    int ncores, nnuma;
    cpu_set_t *core, *numa; /* in the order of their first CPU (hwloc's logical order) */
    const char *source;     /* "hwloc" or "sysfs" */
} rmpi_cpubind_topo_t;
/* Load with hwloc when built with it and use_hwloc, else from sysfs; -1 on failure. */
int rmpi_cpubind_topo_load(rmpi_cpubind_topo_t *t, int use_hwloc);
void rmpi_cpubind_topo_free(rmpi_cpubind_topo_t *t);
/* The CPUs of the index-th of count ranks on this host: 1 bound (out set), 0 not bound
 * (out = the whole allowed mask). AUTO binds to a core when count fits the cores. */
int rmpi_cpubind_plan(const rmpi_cpubind_topo_t *t, int bind, int map, int index, int count, cpu_set_t *out);
int rmpi_cpubind_parse_bind(const char *s); /* "none|core|numa|auto" -> RMPI_BIND_*, else -1 */
int rmpi_cpubind_parse_map(const char *s);  /* "core|numa|node|slot" -> RMPI_MAP_*, else -1 */
const char *rmpi_cpubind_bind_name(int bind);
const char *rmpi_cpubind_map_name(int map);
int rmpi_cpubind_parse_list(const char *s, cpu_set_t *out);        /* "0-3,8"; -1 malformed */
void rmpi_cpubind_list(const cpu_set_t *s, char *buf, size_t len); /* the reverse */
/* Logical core numbers a set touches, "0,1". */
void rmpi_cpubind_cores(const rmpi_cpubind_topo_t *t, const cpu_set_t *s, char *buf, size_t len);
/* "bound to core 1 (cpus 1)" / "not bound (cpus 0-1)": the --report-bindings text. */
void rmpi_cpubind_describe(const rmpi_cpubind_topo_t *t, int bound, const cpu_set_t *s, char *buf, size_t len);
/* RMPI_BIND's value "BIND[:MAP[:INDEX:COUNT]][:report]" (mpiexec -> remote ranks; INDEX of
 * COUNT ranks on the host, -1 when not given); -1 malformed. */
int rmpi_cpubind_env_parse(const char *s, int *bind, int *map, int *index, int *count, int *report);

#endif
