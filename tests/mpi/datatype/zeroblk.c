/* Blocks of length 0 in indexed, hindexed, indexed_block, hindexed_block and struct types
 * (leading, trailing, in the middle, at negative or odd displacements, as the base of
 * contiguous / vector / resized / indexed types) add nothing to the type: it has the
 * size, bounds, true extent, packed bytes and received layout of the same type without
 * them (MPICH and Open MPI agree on every case here), commits, packs and travels over the
 * network at counts from 1 to rendezvous sizes. An all-empty type has size 0 and packs to
 * nothing. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

static void same_type(const char *what, MPI_Datatype z, MPI_Datatype ref)
{
    MTEST_OK(MPI_Type_commit(&z));
    MTEST_OK(MPI_Type_commit(&ref));
    MPI_Count zs, rs;
    MPI_Aint zlb, zext, rlb, rext, ztlb, ztext, rtlb, rtext;
    MTEST_OK(MPI_Type_size_x(z, &zs));
    MTEST_OK(MPI_Type_size_x(ref, &rs));
    MTEST_OK(MPI_Type_get_extent(z, &zlb, &zext));
    MTEST_OK(MPI_Type_get_extent(ref, &rlb, &rext));
    MTEST_OK(MPI_Type_get_true_extent(z, &ztlb, &ztext));
    MTEST_OK(MPI_Type_get_true_extent(ref, &rtlb, &rtext));
    MTEST_CHECK(zs == rs && zlb == rlb && zext == rext && ztlb == rtlb && ztext == rtext,
                "%s: size %lld lb %ld extent %ld true %ld+%ld, without the empty blocks %lld %ld %ld %ld+%ld", what,
                (long long)zs, (long)zlb, (long)zext, (long)ztlb, (long)ztext, (long long)rs, (long)rlb, (long)rext,
                (long)rtlb, (long)rtext);
    static const int counts[] = {1, 3, 200, 6000};
    for (int k = 0; k < 4; k++) {
        int c = counts[k];
        size_t span = (size_t)(rext > 0 ? rext : 1) * (size_t)c + (size_t)rtext + 512;
        char *src = malloc(2 * span), *a = calloc(2, span), *b = calloc(2, span);
        for (size_t i = 0; i < 2 * span; i++)
            src[i] = (char)(i * 7 + 1);
        char *org = src + span, *oa = a + span, *ob = b + span; /* room below for negative bounds */
        int psz = -1, rpsz = -1;
        MTEST_OK(MPI_Pack_size(c, z, MPI_COMM_WORLD, &psz));
        MTEST_OK(MPI_Pack_size(c, ref, MPI_COMM_WORLD, &rpsz));
        MTEST_CHECK(psz == rpsz, "%s count %d: Pack_size %d, expected %d", what, c, psz, rpsz);
        size_t pmax = (size_t)rs * (size_t)c + 1;
        char *pz = malloc(pmax), *pr = malloc(pmax);
        int posz = 0, posr = 0;
        MTEST_OK(MPI_Pack(org, c, z, pz, (int)pmax, &posz, MPI_COMM_WORLD));
        MTEST_OK(MPI_Pack(org, c, ref, pr, (int)pmax, &posr, MPI_COMM_WORLD));
        MTEST_CHECK(posz == posr && posz == (int)(rs * c) && !memcmp(pz, pr, (size_t)posz),
                    "%s count %d: packed %d bytes, expected %d (or other bytes)", what, c, posz, posr);
        int uz = 0, ur = 0;
        MTEST_OK(MPI_Unpack(pr, posr, &uz, oa, c, z, MPI_COMM_WORLD));
        MTEST_OK(MPI_Unpack(pr, posr, &ur, ob, c, ref, MPI_COMM_WORLD));
        MTEST_CHECK(uz == ur && !memcmp(a, b, 2 * span), "%s count %d: unpack differs", what, c);
        if (mtest_size > 1 && mtest_rank < 2) { /* over the network: the empty-block type either side */
            memset(a, 0, 2 * span);
            if (mtest_rank == 0) {
                MTEST_OK(MPI_Send(org, c, z, 1, k, MPI_COMM_WORLD));
                MTEST_OK(MPI_Send(org, c, ref, 1, k, MPI_COMM_WORLD));
            } else {
                MPI_Status st;
                int got = -1;
                MTEST_OK(MPI_Recv(oa, c, ref, 0, k, MPI_COMM_WORLD, &st));
                MTEST_OK(MPI_Get_count(&st, ref, &got));
                MTEST_CHECK(got == c && !memcmp(a, b, 2 * span), "%s count %d: received %d, or other bytes", what, c,
                            got);
                memset(a, 0, 2 * span);
                MTEST_OK(MPI_Recv(oa, c, z, 0, k, MPI_COMM_WORLD, &st));
                MTEST_OK(MPI_Get_count(&st, z, &got));
                MTEST_CHECK((got == c || rs == 0) && !memcmp(a, b, 2 * span),
                            "%s count %d: received into the empty-block type %d, or other bytes", what, c, got);
            }
        }
        free(src), free(a), free(b), free(pz), free(pr);
    }
    MTEST_OK(MPI_Type_free(&z));
    MTEST_OK(MPI_Type_free(&ref));
}

/* An all-empty type: size 0, packs to nothing, commits. */
static void empty_type(const char *what, MPI_Datatype t)
{
    MTEST_OK(MPI_Type_commit(&t));
    MPI_Count s = -1;
    int psz = -1, pos = 0;
    char buf[8], pk[8];
    MTEST_OK(MPI_Type_size_x(t, &s));
    MTEST_OK(MPI_Pack_size(5, t, MPI_COMM_WORLD, &psz));
    MTEST_OK(MPI_Pack(buf, 5, t, pk, sizeof pk, &pos, MPI_COMM_WORLD));
    MTEST_CHECK(s == 0 && psz == 0 && pos == 0, "%s: size %lld, Pack_size %d, packed %d", what, (long long)s, psz, pos);
    MTEST_OK(MPI_Type_free(&t));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Datatype z, r, b, rb;

    { /* leading empty block (MPICH's zeroblks) */
        int bl[2] = {0, 40}, d[2] = {0, 20};
        MTEST_OK(MPI_Type_indexed(2, bl, d, MPI_INT, &z));
        MTEST_OK(MPI_Type_indexed(1, bl + 1, d + 1, MPI_INT, &r));
        same_type("indexed, leading empty block", z, r);
    }
    { /* leading empties at negative and far displacements */
        int bl[4] = {0, 0, 2, 1}, d[4] = {-3, 50, 1, 6};
        MTEST_OK(MPI_Type_indexed(4, bl, d, MPI_INT, &z));
        MTEST_OK(MPI_Type_indexed(2, bl + 2, d + 2, MPI_INT, &r));
        same_type("indexed, two leading empty blocks", z, r);
    }
    { /* leading, middle and trailing empties, doubles */
        int bl[5] = {0, 2, 0, 1, 0}, d[5] = {-9, 1, 30, 6, 11}, rbl[2] = {2, 1}, rd[2] = {1, 6};
        MTEST_OK(MPI_Type_indexed(5, bl, d, MPI_DOUBLE, &z));
        MTEST_OK(MPI_Type_indexed(2, rbl, rd, MPI_DOUBLE, &r));
        same_type("indexed, empty blocks everywhere", z, r);
    }
    { /* hindexed: odd byte displacements of the empty blocks */
        int bl[4] = {0, 0, 2, 1};
        MPI_Aint d[4] = {3, -5, 4, 12};
        MTEST_OK(MPI_Type_create_hindexed(4, bl, d, MPI_INT, &z));
        MTEST_OK(MPI_Type_create_hindexed(2, bl + 2, d + 2, MPI_INT, &r));
        same_type("hindexed, odd empty displacements", z, r);
    }
    { /* struct: empty blocks of other types, before and after */
        int bl[3] = {0, 2, 0};
        MPI_Aint d[3] = {-3, 8, 13};
        MPI_Datatype ty[3] = {MPI_DOUBLE, MPI_INT, MPI_CHAR};
        MTEST_OK(MPI_Type_create_struct(3, bl, d, ty, &z));
        MTEST_OK(MPI_Type_create_struct(1, bl + 1, d + 1, ty + 1, &r));
        same_type("struct, leading and trailing empty blocks", z, r);
    }
    { /* as the base of contiguous and vector types, and resized */
        int bl[4] = {0, 0, 2, 1}, d[4] = {-2, 5, 1, 6};
        MTEST_OK(MPI_Type_indexed(4, bl, d, MPI_INT, &b));
        MTEST_OK(MPI_Type_indexed(2, bl + 2, d + 2, MPI_INT, &rb));
        MTEST_OK(MPI_Type_contiguous(3, b, &z));
        MTEST_OK(MPI_Type_contiguous(3, rb, &r));
        same_type("contiguous of an indexed type with empty blocks", z, r);
        MTEST_OK(MPI_Type_vector(2, 2, 3, b, &z));
        MTEST_OK(MPI_Type_vector(2, 2, 3, rb, &r));
        same_type("vector of an indexed type with empty blocks", z, r);
        MTEST_OK(MPI_Type_create_resized(b, -4, 40, &z));
        MTEST_OK(MPI_Type_create_resized(rb, -4, 40, &r));
        same_type("resized indexed type with empty blocks", z, r);
        /* an indexed type of it, with empty blocks of its own */
        int bl2[3] = {0, 2, 1}, d2[3] = {-1, 0, 3};
        MTEST_OK(MPI_Type_indexed(3, bl2, d2, b, &z));
        MTEST_OK(MPI_Type_indexed(2, bl2 + 1, d2 + 1, rb, &r));
        same_type("indexed of indexed, both with empty blocks", z, r);
        MTEST_OK(MPI_Type_free(&b));
        MTEST_OK(MPI_Type_free(&rb));
    }
    { /* chars: the empty block far away, the data unaligned in a vector */
        int bl[2] = {0, 3}, d[2] = {100, 0};
        MTEST_OK(MPI_Type_indexed(2, bl, d, MPI_CHAR, &b));
        MTEST_OK(MPI_Type_contiguous(3, MPI_CHAR, &rb));
        MTEST_OK(MPI_Type_vector(3, 2, 4, b, &z));
        MTEST_OK(MPI_Type_vector(3, 2, 4, rb, &r));
        same_type("vector of chars after an empty block", z, r);
        MTEST_OK(MPI_Type_free(&b));
        MTEST_OK(MPI_Type_free(&rb));
    }
    { /* 64 blocks, every third empty */
        int bl[64], d[64], rbl[64], rd[64], k = 0;
        for (int i = 0; i < 64; i++) {
            bl[i] = i % 3 == 0 ? 0 : i % 5 + 1, d[i] = i * 9 - 40;
            if (bl[i])
                rbl[k] = bl[i], rd[k++] = d[i];
        }
        MTEST_OK(MPI_Type_indexed(64, bl, d, MPI_INT, &z));
        MTEST_OK(MPI_Type_indexed(k, rbl, rd, MPI_INT, &r));
        same_type("indexed, 64 blocks with every third empty", z, r);
    }
    { /* all empty */
        int bl[2] = {0, 0}, d[3] = {4, -2, 9};
        MPI_Aint ad[3] = {-3, 4, 13};
        MTEST_OK(MPI_Type_indexed(2, bl, d, MPI_INT, &z));
        empty_type("indexed, all blocks empty", z);
        MTEST_OK(MPI_Type_create_indexed_block(3, 0, d, MPI_INT, &z));
        empty_type("indexed_block of length 0", z);
        MTEST_OK(MPI_Type_create_hindexed_block(3, 0, ad, MPI_INT, &z));
        empty_type("hindexed_block of length 0", z);
        MTEST_OK(MPI_Type_vector(3, 0, 4, MPI_INT, &z));
        empty_type("vector of blocks of length 0", z);
        MTEST_OK(MPI_Type_indexed(2, bl, d, MPI_INT, &b));
        MTEST_OK(MPI_Type_contiguous(4, b, &z));
        empty_type("contiguous of an empty indexed type", z);
        MTEST_OK(MPI_Type_free(&b));
    }
    return mtest_finalize();
}
