/* Node segments: one /dev/shm segment per node for the ranks of a communicator that share
 * it (one-sided windows in rma/direct.c, shared-memory collectives in coll/shm.c). The
 * node's lowest rank creates it with its pages reserved, everyone maps it, and the name
 * is unlinked once every rank has mapped it, so nothing outlives the processes. Names
 * carry the job's prefix (net/shm's), so a creator killed before the unlink leaves a name
 * mpiexec removes at the job's end. */
#include "comm_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../rt/rt.h"

int rmpi_comm_node_of(const rmpi_comm_t *c, int r)
{
    int lw = rmpi_comm_local_world_rank(c, r);
    return lw < 0 ? -1 : rmpi_topo_node_of(lw);
}

/* The name of a segment this rank created and has not unlinked yet (from its creation to
 * the agreement that every rank mapped it): a rank that aborts in between (a peer cut off
 * during the allgathers, the launcher gone) removes it, as net/shm does with its own;
 * otherwise only mpiexec's clean-up would (not other launchers'). */
#define NAME_MAX_LEN (RMPI_SHM_PREFIX_MAX + 48)
static char pending[NAME_MAX_LEN];

static void unlink_pending(void)
{
    if (pending[0])
        shm_unlink(pending);
}

int rmpi_comm_node_segment(rmpi_comm_t *c, size_t len, int tag, const char *what, int populate, void **out)
{
    static int hooked;
    static unsigned seq;
    typedef struct {
        char s[NAME_MAX_LEN];
    } name_t;
    int n = c->size, me = c->rank, mynode = rmpi_comm_node_of(c, me), leader = me;
    for (int i = 0; mynode >= 0 && i < me; i++)
        if (rmpi_comm_node_of(c, i) == mynode) {
            leader = i;
            break;
        }
    name_t mine = {{0}};
    if (me == leader) {
        int fd = -1;
        /* a job that died before unlinking may have left a segment of the same name (pid reuse) */
        for (int tries = 0; fd < 0 && tries < 16; tries++) {
            /* "s" keeps these apart from net/shm's names (prefix, then a digit) */
            snprintf(mine.s, sizeof mine.s, "/%ss%d-%u-%u", rmpi_topo_shm_prefix(), (int)getpid(), c->ctx, seq++);
            fd = shm_open(mine.s, O_CREAT | O_EXCL | O_RDWR, 0600);
            if (fd < 0 && errno != EEXIST)
                break;
        }
        /* pages reserved now: a /dev/shm too small fails here, not with SIGBUS at a store */
        int e = fd < 0 ? errno : ftruncate(fd, (off_t)len) != 0 ? errno : posix_fallocate(fd, 0, (off_t)len);
        if (e) {
            errno = e;
            rmpi_warn("rank %d: shared memory segment %s (%zu bytes) could not be created: %m (is /dev/shm full?); %s.",
                      me, mine.s, len, what);
            if (fd >= 0) {
                close(fd);
                shm_unlink(mine.s);
            }
            mine.s[0] = 0;
        } else {
            close(fd);
            if (!hooked) {
                rmpi_rt_at_abort(unlink_pending);
                hooked = 1;
            }
            memcpy(pending, mine.s, sizeof pending);
        }
    }
    rmpi_mset_t m = rmpi_mset_all(c, tag);
    name_t *names = rmpi_xmalloc((size_t)n * sizeof *names);
    rmpi_mset_allgather(&m, &mine, sizeof mine, names);
    const char *name = names[leader].s;
    void *p = MAP_FAILED;
    if (name[0]) {
        int fd = shm_open(name, O_RDWR, 0600);
        if (fd >= 0) {
            p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            close(fd);
        }
    }
    /* agree before unlinking: every rank has its node's segment mapped (or someone failed) */
    int ok = p != MAP_FAILED, all = 1;
    int *oks = rmpi_xmalloc((size_t)n * sizeof *oks);
    m.tag = tag + 1;
    rmpi_mset_allgather(&m, &ok, sizeof ok, oks);
    for (int i = 0; i < n; i++)
        all = all && oks[i];
    free(oks);
    if (me == leader && name[0]) {
        shm_unlink(name);
        pending[0] = 0;
    }
    free(names);
    if (!all) {
        if (ok)
            munmap(p, len);
        return MPI_ERR_NO_MEM;
    }
    if (populate)
        rmpi_shm_prefault(p, len);
    *out = p;
    return 0;
}
