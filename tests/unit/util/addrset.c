/* util/addrset.c: the set of live handles against a reference model, through growth,
 * tombstones and rebuilds: every address added and not deleted is found, every other
 * (deleted ones, never-added neighbours, made-up small values) is not, whatever the mix. */
#include <stdlib.h>

#include "../unit_check.h"
#include "util/util.h"

#define NADDR 5000

static uintptr_t addr_of(int i)
{
    /* 16-byte aligned like heap objects, spread over a few pages */
    return (uintptr_t)0x7f0000000000ull + (uintptr_t)i * 48;
}

static void check_all(rmpi_addrset_t *s, const unsigned char *in, int locked, const char *when)
{
    for (int i = 0; i < NADDR; i++) {
        int has = rmpi_addrset_has(s, (void *)addr_of(i), locked);
        CHECK(has == in[i], "%s: address %d found %d, expected %d", when, i, has, in[i]);
        CHECK_BAIL();
    }
    /* addresses between the objects and made-up handles are never found */
    static const uintptr_t fake[] = {0x1234, 0x2000, 0xdead0000, (uintptr_t)1 << 40};
    for (size_t i = 0; i < sizeof fake / sizeof *fake; i++)
        CHECK(!rmpi_addrset_has(s, (void *)fake[i], locked), "%s: made-up %#lx found", when, (unsigned long)fake[i]);
    CHECK(!rmpi_addrset_has(s, (void *)(addr_of(7) + 8), locked), "%s: an address inside an object found", when);
}

int main(void)
{
    static unsigned char in[NADDR];
    rmpi_addrset_t s = RMPI_ADDRSET_INIT;
    check_all(&s, in, 0, "empty set");

    /* grow from empty: every add keeps the earlier ones */
    for (int i = 0; i < NADDR; i += 2) {
        rmpi_addrset_add(&s, (void *)addr_of(i));
        in[i] = 1;
    }
    check_all(&s, in, 0, "after adding the even ones");
    CHECK(s.live == NADDR / 2, "live %zu, expected %d", s.live, NADDR / 2);
    CHECK(4 * s.live <= s.mask + 1, "capacity %zu for %zu addresses: more than a quarter full", s.mask + 1, s.live);

    /* random adds and deletes: tombstones pile up and force rebuilds at the same size */
    unit_rng_t r = unit_seed(17);
    for (int step = 0; step < 200000; step++) {
        int i = (int)unit_range(&r, 0, NADDR - 1);
        if (in[i]) {
            rmpi_addrset_del(&s, (void *)addr_of(i));
            in[i] = 0;
        } else {
            rmpi_addrset_add(&s, (void *)addr_of(i));
            in[i] = 1;
        }
        if (step % 20000 == 0)
            check_all(&s, in, step % 40000 == 0, "during the random phase");
        CHECK_BAIL(1);
    }
    check_all(&s, in, 1, "after the random phase");
    size_t live = 0;
    for (int i = 0; i < NADDR; i++)
        live += in[i];
    CHECK(s.live == live, "live %zu, expected %zu", s.live, live);
    CHECK(2 * s.used <= s.mask + 1, "used slots %zu of %zu: more than half (probes get long)", s.used, s.mask + 1);

    /* the remembered last address is forgotten when it is deleted */
    int k = 0;
    while (!in[k])
        k++;
    CHECK(rmpi_addrset_has(&s, (void *)addr_of(k), 0), "address %d", k);
    CHECK(s.last == addr_of(k), "the last address found is not remembered");
    rmpi_addrset_del(&s, (void *)addr_of(k));
    in[k] = 0;
    CHECK(!rmpi_addrset_has(&s, (void *)addr_of(k), 0), "a deleted address found through the remembered one");

    /* delete everything: nothing is found */
    for (int i = 0; i < NADDR; i++)
        if (in[i]) {
            rmpi_addrset_del(&s, (void *)addr_of(i));
            in[i] = 0;
        }
    check_all(&s, in, 0, "after deleting all");
    CHECK(s.live == 0, "live %zu after deleting all", s.live);
    if (s.slot != rmpi_addrset_none)
        free(s.slot);
    return finish("util_addrset");
}
