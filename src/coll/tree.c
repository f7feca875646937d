/* Binomial trees rooted anywhere: ranks are renumbered relative to the root. */
#include "coll.h"

#include <stdlib.h>
#include <string.h>

int rmpi_coll_bcast(rmpi_comm_t *c, void *buf, size_t bytes, int root)
{
    int n = c->size, rel = (c->rank - root + n) % n;
    const int tag = 0x7f01;
    int mask = 1;
    while (mask < n) {
        if (rel & mask) {
            int err = rmpi_comm_coll_recv(c, buf, bytes, (rel - mask + root) % n, tag);
            if (err)
                return err;
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < n) {
            int err = rmpi_comm_coll_send(c, buf, bytes, (rel + mask + root) % n, tag);
            if (err)
                return err;
        }
    return 0;
}

/* Only commutative predefined operations reach here, so children combine in any order. */
int rmpi_coll_reduce(rmpi_comm_t *c, const void *sbuf, void *rbuf, size_t count, size_t esize, MPI_Datatype type,
                     MPI_Op op, int root)
{
    int n = c->size, rel = (c->rank - root + n) % n;
    const int tag = 0x7f02;
    size_t bytes = count * esize;
    char *acc = rmpi_xmalloc(bytes), *tmp = rmpi_xmalloc(bytes);
    memcpy(acc, sbuf, bytes);
    int err = 0;
    for (int mask = 1; mask < n; mask <<= 1) {
        if (rel & mask) {
            err = rmpi_comm_coll_send(c, acc, bytes, (rel - mask + root) % n, tag);
            break;
        }
        if (rel + mask < n) {
            err = rmpi_comm_coll_recv(c, tmp, bytes, (rel + mask + root) % n, tag);
            if (err)
                break;
            rmpi_coll_op_apply(op, type, tmp, acc, count);
        }
    }
    if (!err && rel == 0)
        memcpy(rbuf, acc, bytes);
    free(acc);
    free(tmp);
    return err;
}
