/* MPI_Alloc_mem's memory (MPI-4.1 9.2, "memory that is allocated by MPI_ALLOC_MEM may
 * improve the performance of one-sided operations"): with RMPI_RMA_ALLOC_MEM_SHM each
 * allocation is a shared-memory file (memfd) mapped here, so that a Win_create window over
 * it can be mapped by the other ranks of the node (direct.c rma_node_map) and its origins
 * load, store and use atomics on it as on Win_allocate's segment: one-sided operations
 * mapped onto the memory system, Huang et al., 'Design Alternatives and Performance
 * Trade-offs for Implementing MPI-2 over InfiniBand', sec. 3.3. The file stays open here
 * (its descriptor is what the node's ranks open through /proc/PID/fd) until MPI_Free_mem. */
#include "rma_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../rt/rt.h"

/* At most this many live shared allocations (each holds a descriptor), and none whose
 * descriptor would be past a quarter of the process's limit (the tcp rail keeps one per
 * peer); later ones are malloc'd, as is everything when the knob is off or memfd_create
 * fails. A shared mapping reserves nothing, so one larger than the machine's memory would
 * succeed here and kill the process when touched: such sizes are malloc's (which refuses
 * them, MPI_ERR_NO_MEM) as before. */
#define MEM_MAX 256

static struct mem_region {
    uintptr_t base;
    size_t len; /* mapped bytes, whole pages */
    int fd;
    int priv; /* in a fork's child: its own copy now, never shared */
    uint64_t ino;
} regions[MEM_MAX];
static int nregions;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* fork: malloc'd memory is the child's own copy of what it held at the fork, where a
 * shared mapping would stay shared (the child's writes landing in the parent's buffers,
 * the parent's later ones in the child's). The child replaces each shared region by a
 * private copy at the same address before its fork returns, while the parent's fork waits
 * for it (the pipe), so the copy is the memory at the fork. Only with live shared regions;
 * the price, the copy, is paid by fork, not by every allocation. posix_spawn and glibc's
 * system() run no fork handlers: they exec at once. */
static int fork_pipe[2] = {-1, -1};

static void fork_prepare(void)
{
    pthread_mutex_lock(&lock);
    if (nregions && pipe2(fork_pipe, O_CLOEXEC) != 0)
        fork_pipe[0] = fork_pipe[1] = -1; /* no wait: the child's copy may see later writes */
}

static void fork_parent(void)
{
    if (fork_pipe[0] >= 0) {
        close(fork_pipe[1]);
        char c;
        while (read(fork_pipe[0], &c, 1) < 0 && errno == EINTR)
            ; /* 1 byte once the child has copied, 0 if it died first */
        close(fork_pipe[0]);
        fork_pipe[0] = fork_pipe[1] = -1;
    }
    pthread_mutex_unlock(&lock);
}

static void fork_child(void)
{
    for (int i = 0; i < nregions; i++) {
        struct mem_region *r = &regions[i];
        if (r->priv)
            continue;
        void *m = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m != MAP_FAILED) {
            memcpy(m, (void *)r->base, r->len);
            if (mremap(m, r->len, r->len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)r->base) == MAP_FAILED)
                munmap(m, r->len);
            else
                r->priv = 1;
        }
        /* no memory for a copy: copy-on-write of the file, so the child's writes at least
         * stay its own */
        if (!r->priv &&
            mmap((void *)r->base, r->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, r->fd, 0) != MAP_FAILED)
            r->priv = 1;
    }
    if (fork_pipe[0] >= 0) {
        close(fork_pipe[0]);
        (void)!write(fork_pipe[1], "", 1);
        close(fork_pipe[1]);
        fork_pipe[0] = fork_pipe[1] = -1;
    }
    pthread_mutex_unlock(&lock);
}

static void fork_hooks(void) { pthread_atfork(fork_prepare, fork_parent, fork_child); }

int rmpi_rma_mem_alloc(size_t size, void **p)
{
    if (rmpi_knobs.RMA_ALLOC_MEM_SHM && size) {
        size_t pg = (size_t)sysconf(_SC_PAGESIZE), len = (size + pg - 1) / pg * pg;
        static pthread_once_t hooks = PTHREAD_ONCE_INIT;
        pthread_once(&hooks, fork_hooks);
        pthread_mutex_lock(&lock);
        static long fdmax = -1;
        if (fdmax < 0) {
            struct rlimit rl;
            fdmax = getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY ? 1024 : (long)(rl.rlim_cur / 4);
        }
        uint64_t ram = (uint64_t)sysconf(_SC_PHYS_PAGES) * pg;
        int fd = nregions < MEM_MAX && len >= size && len <= ram ? memfd_create("rmpi-alloc-mem", MFD_CLOEXEC) : -1;
        if (fd >= fdmax) {
            close(fd);
            fd = -1;
        }
        struct stat st;
        void *m = MAP_FAILED;
        if (fd >= 0 && ftruncate(fd, (off_t)len) == 0 && fstat(fd, &st) == 0)
            m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m != MAP_FAILED) {
            regions[nregions++] = (struct mem_region){(uintptr_t)m, len, fd, 0, (uint64_t)st.st_ino};
            pthread_mutex_unlock(&lock);
            *p = m;
            return 0;
        }
        if (fd >= 0)
            close(fd);
        pthread_mutex_unlock(&lock);
    }
    *p = malloc(size ? size : 1);
    return *p ? 0 : MPI_ERR_NO_MEM;
}

void rmpi_rma_mem_free(void *p)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nregions; i++)
        if (regions[i].base == (uintptr_t)p) {
            munmap(p, regions[i].len);
            close(regions[i].fd);
            regions[i] = regions[--nregions];
            pthread_mutex_unlock(&lock);
            return;
        }
    pthread_mutex_unlock(&lock);
    free(p);
}

int rma_mem_share(const void *base, size_t len, rma_share_t *sh)
{
    uintptr_t a = (uintptr_t)base;
    int found = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nregions && !found; i++)
        if (!regions[i].priv && a >= regions[i].base && a - regions[i].base <= regions[i].len &&
            len <= regions[i].len - (a - regions[i].base)) {
            *sh = (rma_share_t){.pid = (int32_t)getpid(),
                                .fd = regions[i].fd,
                                .ino = regions[i].ino,
                                .off = a - regions[i].base,
                                .flen = regions[i].len};
            found = 1;
        }
    pthread_mutex_unlock(&lock);
    return found;
}
