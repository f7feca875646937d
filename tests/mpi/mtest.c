/* mtest: see mtest.h. */
#define _POSIX_C_SOURCE 200809L
#include "mtest.h"

#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int mtest_rank = -1, mtest_size = 0;
static int errors; /* updated with __atomic builtins: threads may report */
static const int max_printed = 50;

static void watchdog(void)
{
    const char *s = getenv("MTEST_TIMEOUT");
    int secs = s ? atoi(s) : 60;
    if (secs > 0)
        alarm((unsigned)secs);
}

static void start(void)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &mtest_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mtest_size);
    watchdog();
}

void mtest_init(int *argc, char ***argv)
{
    int rc = MPI_Init(argc, argv);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "MPI_Init failed with code %d\n", rc);
        exit(2);
    }
    start();
}

void mtest_init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = MPI_Init_thread(argc, argv, required, provided);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "MPI_Init_thread failed with code %d\n", rc);
        exit(2);
    }
    start();
    MTEST_CHECK(*provided >= required, "MPI_Init_thread provided %d < required %d", *provided, required);
}

void mtest_error(const char *file, int line, const char *fmt, ...)
{
    int n = __atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
    if (n > max_printed)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "[rank %d] %s:%d: %s%s\n", mtest_rank, file, line, msg,
            n == max_printed ? " (further errors not printed)" : "");
    fflush(stderr);
}

int mtest_error_count(void) { return __atomic_load_n(&errors, __ATOMIC_RELAXED); }

int mtest_ok_(int rc, const char *what, const char *file, int line)
{
    if (rc != MPI_SUCCESS) {
        char s[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        MPI_Error_string(rc, s, &len);
        mtest_error(file, line, "%s returned %d (%s)", what, rc, s);
    }
    return rc;
}

int mtest_err_(int rc, int cls, const char *what, const char *clsname, const char *file, int line)
{
    int got = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &got);
    else
        got = MPI_SUCCESS;
    if (got != cls)
        mtest_error(file, line, "%s returned code %d (class %d), expected %s (%d)", what, rc, got, clsname, cls);
    return rc;
}

void mtest_errors_return(MPI_Comm comm) { MTEST_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN)); }

int mtest_handler_calls, mtest_handler_code;
MPI_Comm mtest_handler_comm;

void mtest_recording_handler(MPI_Comm *comm, int *code, ...)
{
    mtest_handler_calls++;
    mtest_handler_code = *code;
    mtest_handler_comm = *comm;
}

int mtest_finalize(void)
{
    int mine = mtest_error_count(), total = mine;
    alarm(0);
    watchdog();
    /* The count travels in a reduction, whose context no point-to-point receive can match:
     * sent on MPI_COMM_WORLD with any tag, a rank that finished early had its count taken by
     * another rank's MPI_ANY_SOURCE/MPI_ANY_TAG receive still draining the test's messages. */
    if (MPI_Reduce(&mine, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        total = mine + 1;
    if (mtest_rank == 0) {
        if (total)
            printf(" Found %d errors\n", total);
        else
            printf(" No Errors\n");
        fflush(stdout);
    }
    int rc = MPI_Finalize();
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "[rank %d] MPI_Finalize returned %d\n", mtest_rank, rc);
        total++;
    }
    return total ? 1 : 0;
}

/* ---- buffers ---- */

static inline uint64_t mix(uint64_t x)
{
    /* splitmix64's finaliser: every input bit changes about half the output bits */
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static inline uint64_t word(unsigned seed, size_t w) { return mix(((uint64_t)seed << 40) ^ (uint64_t)w); }

unsigned char mtest_pattern(unsigned seed, size_t i) { return (unsigned char)(word(seed, i / 8) >> (8 * (i % 8))); }

void mtest_fill(void *buf, size_t n, unsigned seed)
{
    unsigned char *p = buf;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = word(seed, i / 8);
        memcpy(p + i, &w, 8); /* little-endian hosts: same bytes as mtest_pattern */
    }
    for (; i < n; i++)
        p[i] = mtest_pattern(seed, i);
}

size_t mtest_check_buf(const void *buf, size_t n, unsigned seed, const char *what)
{
    const unsigned char *p = buf;
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t w = word(seed, i / 8), got = 0;
        size_t k = n - i < 8 ? n - i : 8;
        memcpy(&got, p + i, k);
        if (k < 8)
            w &= (1ull << (8 * k)) - 1;
        if (got == w)
            continue;
        for (size_t j = i; j < i + k; j++)
            if (p[j] != mtest_pattern(seed, j)) {
                if (!bad)
                    first = j;
                bad++;
            }
    }
    if (bad)
        mtest_error(__FILE__, __LINE__, "%s: %zu of %zu bytes wrong, first at %zu (got 0x%02x, expected 0x%02x)", what,
                    bad, n, first, p[first], mtest_pattern(seed, first));
    return bad;
}

void mtest_guard_set(void *buf, size_t n) { memset((char *)buf + n, 0xa5, MTEST_GUARD); }

int mtest_guard_check(const void *buf, size_t n, const char *what)
{
    const unsigned char *p = (const unsigned char *)buf + n;
    for (int i = 0; i < MTEST_GUARD; i++)
        if (p[i] != 0xa5) {
            mtest_error(__FILE__, __LINE__, "%s: guard byte %d past the %zu-byte buffer was overwritten", what, i, n);
            return 1;
        }
    return 0;
}

int mtest_check_status(const MPI_Status *st, int src, int tag, int count, const char *what)
{
    int c = -1;
    MPI_Get_count(st, MPI_BYTE, &c);
    if (st->MPI_SOURCE == src && st->MPI_TAG == tag && c == count)
        return 0;
    mtest_error(__FILE__, __LINE__, "%s: status source %d tag %d count %d, expected %d %d %d", what, st->MPI_SOURCE,
                st->MPI_TAG, c, src, tag, count);
    return 1;
}

void *mtest_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "[rank %d] out of memory (%zu bytes)\n", mtest_rank, n);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    return p;
}

void mtest_sleep(double seconds)
{
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

int mtest_pin_one_cpu(const char *prog)
{
    cpu_set_t set, one;
    CPU_ZERO(&one);
    for (int i = 0; sched_getaffinity(0, sizeof set, &set) == 0 && i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, &set)) {
            CPU_SET(i, &one);
            break;
        }
    if (CPU_COUNT(&one) != 1 || sched_setaffinity(0, sizeof one, &one) != 0) {
        fprintf(stderr, "%s: cannot pin to one CPU\n", prog);
        return -1;
    }
    return 0;
}

void mtest_pvar_open(const char *name, MPI_T_pvar_session *ses, MPI_T_pvar_handle *h)
{
    int prov, idx = -1, cnt;
    MTEST_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &prov));
    MTEST_OK(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx));
    MTEST_OK(MPI_T_pvar_session_create(ses));
    MTEST_OK(MPI_T_pvar_handle_alloc(*ses, idx, NULL, h, &cnt));
}

void mtest_pvar_close(MPI_T_pvar_session *ses, MPI_T_pvar_handle *h)
{
    MTEST_OK(MPI_T_pvar_handle_free(*ses, h));
    MTEST_OK(MPI_T_pvar_session_free(ses));
    MTEST_OK(MPI_T_finalize());
}
