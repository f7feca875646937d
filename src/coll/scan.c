/* Scan and Exscan: recursive doubling (log2 n steps) or a linear chain (n - 1 steps, each
 * rank combining once: less work for large vectors on few ranks). Both combine lower ranks
 * on the left, so non-commutative operations are fine. */
#include "coll_impl.h"

/* Partner me ^ m sends the reduction p of its aligned block of m ranks; a lower block is
 * added to my result and to p on the left, a higher one to p on the right. */
static void scan_recursive_doubling(rmpi_nbc_t *s, const coll_red_t *r, int me, int n, const void *in, void *res,
                                    size_t count, int exclusive)
{
    size_t bytes = count * r->esize;
    void *p = rmpi_nbc_tmp(s, bytes), *t = rmpi_nbc_tmp(s, bytes);
    rmpi_nbc_copy(s, in, p, bytes);
    if (!exclusive)
        rmpi_nbc_copy(s, in, res, bytes);
    int have = !exclusive;
    for (int m = 1; m < n; m <<= 1) {
        int partner = me ^ m;
        if (partner >= n)
            continue;
        rmpi_nbc_recv(s, t, bytes, partner);
        rmpi_nbc_send(s, p, bytes, partner);
        rmpi_nbc_round(s);
        if (me > partner) {
            if (have)
                coll_combine(s, r, t, res, res, count);
            else
                rmpi_nbc_copy(s, t, res, bytes);
            have = 1;
            coll_combine(s, r, t, p, p, count);
        } else {
            coll_combine(s, r, p, t, p, count);
        }
    }
    rmpi_nbc_round(s);
}

/* Rank me gets the prefix of ranks < me from me - 1 and passes on the prefix up to me. */
static void scan_linear(rmpi_nbc_t *s, const coll_red_t *r, int me, int n, const void *in, void *res, size_t count,
                        int exclusive)
{
    size_t bytes = count * r->esize;
    if (!exclusive) {
        rmpi_nbc_copy(s, in, res, bytes);
        if (me > 0) {
            void *t = rmpi_nbc_tmp(s, bytes);
            rmpi_nbc_recv(s, t, bytes, me - 1);
            rmpi_nbc_round(s);
            coll_combine(s, r, t, res, res, count);
        }
        if (me < n - 1)
            rmpi_nbc_send(s, res, bytes, me + 1);
        rmpi_nbc_round(s);
        return;
    }
    if (me == 0) {
        rmpi_nbc_send(s, in, bytes, 1);
        rmpi_nbc_round(s);
        return;
    }
    /* the prefix lands in res, unless res is also my input (in place) */
    void *p = rmpi_nbc_tmp(s, bytes), *t = in == res ? rmpi_nbc_tmp(s, bytes) : res;
    rmpi_nbc_copy(s, in, p, bytes);
    rmpi_nbc_recv(s, t, bytes, me - 1);
    rmpi_nbc_round(s);
    rmpi_nbc_copy(s, t, res, bytes);
    if (me < n - 1) {
        coll_combine(s, r, t, p, p, count);
        rmpi_nbc_send(s, p, bytes, me + 1);
    }
    rmpi_nbc_round(s);
}

rmpi_nbc_t *rmpi_coll_scan_sched(rmpi_comm_t *c, const void *sbuf, void *rbuf, size_t count, rmpi_dtype_t *dt,
                                 MPI_Op op, int exclusive)
{
    rmpi_nbc_t *s = rmpi_nbc_new(c);
    size_t bytes = count * dt->size;
    int me = c->rank, n = c->size;
    if (bytes == 0 || (exclusive && n == 1))
        return s;
    int contig = rmpi_dtype_is_contig(dt, count);
    void *res = coll_output(s, rbuf, count, dt);
    const void *in = coll_input(s, sbuf, rbuf, res, count, dt);
    coll_red_t r = {op, dt->handle, dt->size, rmpi_coll_op_commutative(op)};
    if (coll_select(COLL_SCAN, c, bytes, count, r.commute) == RMPI_COLL_SCAN_LINEAR)
        scan_linear(s, &r, me, n, in, res, count, exclusive);
    else
        scan_recursive_doubling(s, &r, me, n, in, res, count, exclusive);
    if (!contig && !(exclusive && me == 0))
        rmpi_nbc_unpack(s, res, rbuf, count, dt);
    return s;
}
