/* MPI_Alloc_mem's memory (MPI-4.1 9.2, "memory that is allocated by MPI_ALLOC_MEM may
 * improve the performance of one-sided operations"): with RMPI_RMA_ALLOC_MEM_SHM each
 * allocation is a shared-memory file (memfd) mapped here, so that a Win_create window over
 * it can be mapped by the other ranks of the node (direct.c rma_node_map) and its origins
 * load, store and use atomics on it as on Win_allocate's segment: one-sided operations
 * mapped onto the memory system, Huang et al., 'Design Alternatives and Performance
 * Trade-offs for Implementing MPI-2 over InfiniBand', sec. 3.3. The file stays open here
 * (its descriptor is what the node's ranks open through /proc/PID/fd) until MPI_Free_mem. */
#include "rma_impl.h"

#include <pthread.h>
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
    uint64_t ino;
} regions[MEM_MAX];
static int nregions;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int rmpi_rma_mem_alloc(size_t size, void **p)
{
    if (rmpi_knobs.RMA_ALLOC_MEM_SHM && size) {
        size_t pg = (size_t)sysconf(_SC_PAGESIZE), len = (size + pg - 1) / pg * pg;
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
            regions[nregions++] = (struct mem_region){(uintptr_t)m, len, fd, (uint64_t)st.st_ino};
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
        if (a >= regions[i].base && a - regions[i].base <= regions[i].len &&
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
