/* Cross-memory attach: copies between this process and another of the same node with
 * process_vm_readv/writev, one copy with no shared buffer in between. Here rather than in a
 * layer above so that the shm provider's RDMA (net/shm) and the single-copy collectives
 * (coll/shm.c) share one meaning of RMPI_SHM_CMA and of a refusal. */
#include "rt.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>

int rmpi_cma_copy(int pid, void *local, size_t len, uint64_t raddr, int write, int peer)
{
    if (rmpi_knobs.SHM_CMA == RMPI_SHM_CMA_OFF)
        return RMPI_CMA_REFUSED;
    size_t done = 0;
    while (done < len) {
        struct iovec l = {(char *)local + done, len - done};
        struct iovec r = {(void *)(uintptr_t)(raddr + done), len - done};
        ssize_t n = write ? process_vm_writev(pid, &l, 1, &r, 1, 0) : process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (n > 0) {
            done += (size_t)n;
            continue;
        }
        int err = n < 0 ? errno : EIO;
        if (err == EINTR)
            continue;
        /* ptrace policy (Yama), seccomp, a kernel without CMA: the whole call is refused */
        if ((err == EPERM || err == ENOSYS || err == EACCES) && done == 0) {
            if (rmpi_knobs.SHM_CMA == RMPI_SHM_CMA_ON)
                rmpi_fatal("process_vm_%sv to rank %d was refused (%s) and RMPI_SHM_CMA=on; set "
                           "RMPI_SHM_CMA=auto to copy through shared memory instead.",
                           write ? "write" : "read", peer, strerror(err));
            rmpi_log(1, "cross-memory attach to rank %d refused (%s); copying through shared memory.", peer,
                     strerror(err));
            return RMPI_CMA_REFUSED;
        }
        return -err;
    }
    return 0;
}
