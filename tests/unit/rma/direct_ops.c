/* rma/direct.c, the operations a rank applies itself to a target of its node: element
 * atomics for every size and signedness against a model (MIN/MAX signed and unsigned,
 * SUM wrapping, bit ops, REPLACE, NO_OP), when an accumulate may use them (type, op,
 * alignment, element count), accumulates through segment lists on the atomic and the
 * locked path with fetched results, compare-and-swap on a word and on an odd size, and
 * the reader-writer lock word's rule. The file is included (its helpers are static). */
#include "rma/direct.c"

#include "../unit_check.h"

static rmpi_win_sync_t sync_line;

static void elements(void)
{
    uint8_t u8 = 200, o8 = 0, v8 = 100;
    at_elem((char *)&u8, 1, 2, MPI_MAX, &v8, NULL, &o8);
    CHECK(u8 == 200 && o8 == 200, "unsigned max: %u (old %u)", u8, o8);
    int8_t s8 = -56, sv8 = 100, so8 = 0;
    at_elem((char *)&s8, 1, 1, MPI_MAX, &sv8, NULL, &so8);
    CHECK(s8 == 100 && so8 == -56, "signed max: %d (old %d)", s8, so8);
    s8 = -56, sv8 = 100;
    at_elem((char *)&s8, 1, 1, MPI_MIN, &sv8, NULL, NULL);
    CHECK(s8 == -56, "signed min kept %d", s8);
    uint16_t u16 = 0xffff, v16 = 2;
    at_elem((char *)&u16, 2, 2, MPI_SUM, &v16, NULL, NULL);
    CHECK(u16 == 1, "16-bit sum wraps: %u", u16);
    uint32_t u32 = 0xf0f0f0f0u, v32 = 0x0ff00ff0u, o32;
    at_elem((char *)&u32, 4, 2, MPI_BXOR, &v32, NULL, &o32);
    CHECK(u32 == (0xf0f0f0f0u ^ 0x0ff00ff0u) && o32 == 0xf0f0f0f0u, "bxor: %x", u32);
    at_elem((char *)&u32, 4, 2, MPI_BAND, &v32, NULL, NULL);
    CHECK(u32 == ((0xf0f0f0f0u ^ 0x0ff00ff0u) & 0x0ff00ff0u), "band: %x", u32);
    at_elem((char *)&u32, 4, 2, MPI_BOR, &v32, NULL, NULL);
    CHECK(u32 == 0x0ff00ff0u, "bor: %x", u32);
    int64_t s64 = -5, v64 = 7, o64 = 0;
    at_elem((char *)&s64, 8, 1, MPI_NO_OP, &v64, NULL, &o64);
    CHECK(s64 == -5 && o64 == -5, "no_op: %ld (old %ld)", (long)s64, (long)o64);
    at_elem((char *)&s64, 8, 1, MPI_REPLACE, &v64, NULL, &o64);
    CHECK(s64 == 7 && o64 == -5, "replace: %ld (old %ld)", (long)s64, (long)o64);
    at_elem((char *)&s64, 8, 1, MPI_MIN, &(int64_t){-9}, NULL, NULL);
    CHECK(s64 == -9, "signed 64-bit min: %ld", (long)s64);
    int64_t cmp = -9, nv = 3, was = 0;
    at_elem((char *)&s64, 8, 2, MPI_REPLACE, &nv, &cmp, &was);
    CHECK(s64 == 3 && was == -9, "cas taken: %ld (was %ld)", (long)s64, (long)was);
    at_elem((char *)&s64, 8, 2, MPI_REPLACE, &v64, &cmp, &was);
    CHECK(s64 == 3 && was == 3, "cas refused: %ld (was %ld)", (long)s64, (long)was);
}

static void when_atomic(void)
{
    long a[64] = {0};
    rma_seg_t one = {0, 8}, odd = {4, 8};
    CHECK(atomic_ok(MPI_LONG, 8, MPI_SUM, (char *)a, &one, 1, 8), "aligned long sum");
    CHECK(!atomic_ok(MPI_LONG, 8, MPI_SUM, (char *)a, &odd, 1, 8), "misaligned long sum");
    CHECK(!atomic_ok(MPI_DOUBLE, 8, MPI_SUM, (char *)a, &one, 1, 8), "double sum");
    CHECK(!atomic_ok(MPI_LONG, 8, MPI_PROD, (char *)a, &one, 1, 8), "long prod");
    CHECK(!atomic_ok(MPI_C_BOOL, 1, MPI_LOR, (char *)a, &one, 1, 1), "logical or");
    rma_seg_t all = {0, sizeof a};
    CHECK(!atomic_ok(MPI_LONG, 8, MPI_SUM, (char *)a, &all, 1, sizeof a), "64 elements take the lock");
    CHECK(int_kind(MPI_UNSIGNED) == 2 && int_kind(MPI_INT64_T) == 1 && int_kind(MPI_FLOAT) == 0, "int_kind");
}

/* Accumulate through segments (elements 1, 2 and 5 of an array) on both paths. */
static void accumulate(void)
{
    rma_seg_t segs[2] = {{8, 16}, {40, 8}};
    long t[8], add[3] = {10, 20, 30}, old[3];
    for (int i = 0; i < 8; i++)
        t[i] = i;
    rma_direct_acc(&sync_line, (char *)t, segs, 2, 24, MPI_SUM, MPI_LONG, add, old);
    CHECK(t[1] == 11 && t[2] == 22 && t[5] == 35 && t[3] == 3 && t[0] == 0, "atomic sum through segments");
    CHECK(old[0] == 1 && old[1] == 2 && old[2] == 5, "atomic fetch through segments: %ld %ld %ld", old[0], old[1],
          old[2]);
    double d[8], dadd[3] = {0.5, 0.25, 2};
    for (int i = 0; i < 8; i++)
        d[i] = i;
    double dold[3];
    rma_direct_acc(&sync_line, (char *)d, segs, 2, 24, MPI_SUM, MPI_DOUBLE, dadd, dold);
    CHECK(d[1] == 1.5 && d[2] == 2.25 && d[5] == 7 && d[4] == 4, "locked double sum through segments");
    CHECK(dold[0] == 1 && dold[1] == 2 && dold[2] == 5, "locked fetch");
    rma_direct_acc(&sync_line, (char *)d, segs, 2, 24, MPI_NO_OP, MPI_DOUBLE, NULL, dold);
    CHECK(dold[0] == 1.5 && d[1] == 1.5, "locked no_op fetch");
    CHECK(atomic_load(&sync_line.acc) == 0 && atomic_load(&sync_line.atomics) == 0, "locks released");
    long big[40], ones[40];
    for (int i = 0; i < 40; i++)
        big[i] = i, ones[i] = 1;
    rma_seg_t bs = {0, sizeof big};
    rma_direct_acc(&sync_line, (char *)big, &bs, 1, sizeof big, MPI_MAX, MPI_LONG, ones, NULL);
    CHECK(big[0] == 1 && big[1] == 1 && big[39] == 39, "locked long max (40 elements)");
    char odd3[3] = {1, 2, 3}, n3[3] = {7, 8, 9}, c3[3] = {1, 2, 3}, r3[3];
    rma_direct_cas(&sync_line, odd3, 3, n3, c3, r3);
    CHECK(odd3[0] == 7 && r3[2] == 3, "3-byte compare-and-swap under the lock");
}

static void lock_word(void)
{
    rmpi_win_sync_t s;
    memset(&s, 0, sizeof s);
    CHECK(rma_rw_try(&s, 1), "exclusive on a free word");
    CHECK(!rma_rw_try(&s, 1) && !rma_rw_try(&s, 0), "exclusive holder is alone");
    rma_rw_release(&s, 1);
    CHECK(rma_rw_try(&s, 0) && rma_rw_try(&s, 0), "two shared holders");
    CHECK(!rma_rw_try(&s, 1), "exclusive refused while shared held");
    rma_rw_release(&s, 0);
    CHECK(!rma_rw_try(&s, 1), "one shared holder left");
    rma_rw_release(&s, 0);
    CHECK(atomic_load(&s.rw) == 0 && rma_rw_try(&s, 1), "all released");
}

int main(void)
{
    elements();
    when_atomic();
    accumulate();
    lock_word();
    return finish("rma_direct_ops");
}
