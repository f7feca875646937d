/* Memory-release hooks for the registration cache (mrcache.c).
 *
 * libmpi.so exports these names, so the application's calls (and those of libraries
 * loaded after libmpi) come here first: the range is invalidated, then the real call is
 * made (the system call itself, or glibc's __libc_* entry). glibc's own internal calls
 * (free of an mmap'd chunk unmapping it, a heap trim) do not go through these symbols,
 * which is why free() and realloc() are hooked too: a chunk that malloc got from mmap is
 * invalidated before it goes back, and a free that lowers the program break invalidates
 * the trimmed range. Known gap: heaps of glibc's secondary (per-thread) arenas shrink with
 * an internal madvise that no hook sees; a buffer malloc'd by such a thread, freed, and the
 * range reused, could hit a stale registration on providers that pin pages (verbs).
 *
 * Under AddressSanitizer or ThreadSanitizer the allocator behind us is the sanitizer's: its
 * interceptors are reached by name (__interceptor_free), never through dlsym, which would
 * re-enter the sanitizer while it starts (both free memory before their own dlsym works),
 * and a freed block's whole range is invalidated, since its chunks carry no glibc header. */
#include "net.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

extern void __libc_free(void *);
extern void *__libc_realloc(void *, size_t);

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RMPI_SAN_ALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define RMPI_SAN_ALLOC 1
#endif
#endif

#ifdef RMPI_SAN_ALLOC
extern void __interceptor_free(void *);
extern void *__interceptor_realloc(void *, size_t);
extern size_t __sanitizer_get_allocated_size(const volatile void *);

static RMPI_NET_HOOK_SAFE void real_free(void *p) { __interceptor_free(p); }
static RMPI_NET_HOOK_SAFE void *real_realloc(void *p, size_t n) { return __interceptor_realloc(p, n); }

/* Every freed block, not only mmap'd ones: the sanitizers unmap their memory with raw system
 * calls. */
static int chunk_range(void *p, void **base, size_t *len)
{
    *base = p;
    *len = __sanitizer_get_allocated_size(p);
    return *len != 0;
}
#else

/* The allocator behind us (glibc's, or one linked after libmpi); glibc's entries while
 * dlsym itself runs. */
static void (*next_free)(void *);
static void *(*next_realloc)(void *, size_t);
static int resolving;

static void resolve(void)
{
    if (resolving)
        return;
    resolving = 1;
    void (*f)(void *) = (void (*)(void *))dlsym(RTLD_NEXT, "free");
    void *(*r)(void *, size_t) = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    next_realloc = r ? r : __libc_realloc;
    next_free = f ? f : __libc_free;
    resolving = 0;
}

static void real_free(void *p)
{
    if (RMPI_UNLIKELY(!next_free))
        resolve();
    (next_free ? next_free : __libc_free)(p);
}

static void *real_realloc(void *p, size_t n)
{
    if (RMPI_UNLIKELY(!next_realloc))
        resolve();
    return (next_realloc ? next_realloc : __libc_realloc)(p, n);
}

/* The range that goes away with block p, when it may be unmapped: from the glibc chunk
 * header (only consulted while the cache holds entries, which needs glibc's malloc behind
 * us), the size word before the user pointer; bit 1 = IS_MMAPPED. */
static int chunk_range(void *p, void **base, size_t *len)
{
    size_t sz = ((size_t *)p)[-1];
    if (!(sz & 2))
        return 0;
    size_t prev = ((size_t *)p)[-2]; /* mmapped chunks keep their offset in the page here */
    *base = (char *)p - 2 * sizeof(size_t) - prev;
    *len = (sz & ~(size_t)7) + prev;
    return 1;
}
#endif

RMPI_NET_HOOK_SAFE void free(void *p)
{
    if (!p)
        return;
    if (!rmpi_net_mr_cached()) {
        real_free(p);
        return;
    }
    void *base;
    size_t len;
    if (chunk_range(p, &base, &len))
        rmpi_net_mr_invalidate(base, len);
    void *brk0 = sbrk(0);
    real_free(p);
    void *brk1 = sbrk(0);
    if (brk1 < brk0)
        rmpi_net_mr_invalidate(brk1, (size_t)((char *)brk0 - (char *)brk1));
}

RMPI_NET_HOOK_SAFE void *realloc(void *p, size_t n)
{
    if (p && rmpi_net_mr_cached()) {
        void *base;
        size_t len;
        if (chunk_range(p, &base, &len))
            rmpi_net_mr_invalidate(base, len);
    }
    return real_realloc(p, n);
}

RMPI_NET_HOOK_SAFE int munmap(void *addr, size_t len)
{
    if (rmpi_net_mr_cached())
        rmpi_net_mr_invalidate(addr, len);
    return (int)syscall(SYS_munmap, addr, len);
}

RMPI_NET_HOOK_SAFE void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
    void *new_addr = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        new_addr = va_arg(ap, void *);
        va_end(ap);
        if (rmpi_net_mr_cached())
            rmpi_net_mr_invalidate(new_addr, new_len);
    }
    if (rmpi_net_mr_cached())
        rmpi_net_mr_invalidate(old, old_len);
    return (void *)syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
}

RMPI_NET_HOOK_SAFE int madvise(void *addr, size_t len, int advice)
{
    if ((advice == MADV_DONTNEED || advice == MADV_FREE || advice == MADV_REMOVE) && rmpi_net_mr_cached())
        rmpi_net_mr_invalidate(addr, len);
    return (int)syscall(SYS_madvise, addr, len, advice);
}
