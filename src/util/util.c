#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

long long rmpi_parse_size(const char *s)
{
    if (!s || !*s)
        return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || v < 0)
        return -1;
    int shift = 0;
    switch (tolower((unsigned char)*end)) {
    case 'k': shift = 10; break;
    case 'm': shift = 20; break;
    case 'g': shift = 30; break;
    default: break;
    }
    if (shift) {
        /* "8589934592g" would wrap to a negative (or zero) size */
        if (v > (LLONG_MAX >> shift))
            return -1;
        v <<= shift;
        end++;
    }
    if (tolower((unsigned char)*end) == 'b' || tolower((unsigned char)*end) == 'i')
        end++;
    return *end ? -1 : v;
}

static void oom(size_t n)
{
    fprintf(stderr, "[rmpi] out of memory allocating %zu bytes\n", n);
    abort();
}

void *rmpi_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *rmpi_xcalloc(size_t n, size_t m)
{
    void *p = calloc(n ? n : 1, m ? m : 1);
    if (!p)
        oom(n * m);
    return p;
}

void *rmpi_xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

char *rmpi_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(rmpi_xmalloc(n), s, n);
}

void rmpi_shm_job_prefix(const char *jobid, char *out, size_t len)
{
    char job[49];
    size_t n = strlen(jobid), j = 0;
    for (size_t i = 0; i < n && j < sizeof job - 1; i++) {
        char c = jobid[i];
        job[j++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ? c : '_';
    }
    job[j] = '\0';
    if (n > sizeof job - 1) {
        uint32_t h = 2166136261u;
        for (size_t i = 0; i < n; i++)
            h = (h ^ (uint8_t)jobid[i]) * 16777619u;
        snprintf(job + 39, sizeof job - 39, "_%08x", (unsigned)h);
    }
    snprintf(out, len, "rmpi-%s-", job);
}

/* Map every page of [p, p+len) now. A shared-memory page is otherwise faulted in by the
 * first frame that reaches it, in both processes: the first pass through a ring (some
 * thousands of small messages) then costs a page fault every few dozen frames, which made
 * the first sizes of every benchmark 2-3x slower than the same sizes run later. The kernel
 * populates the range in one call (Linux 5.14); older kernels get one touch per page. */
void rmpi_shm_prefault(void *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
    if (!madvise(p, len, MADV_POPULATE_WRITE))
        return;
#endif
    long pg = sysconf(_SC_PAGESIZE);
    for (size_t off = 0; off < len; off += (size_t)(pg > 0 ? pg : 4096))
        (void)*(volatile const char *)((const char *)p + off);
}
