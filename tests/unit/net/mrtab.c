/* Registration table of the emulated-RDMA providers (src/net/mrtab.c): keys of live
 * registrations are unguessable (random high bits, never a counter), every access is
 * checked against the registered range, and a key outlives neither its registration nor
 * a later registration of the same slot; range-list registrations (dynamic windows). Also the auth primitives' hex and MAC helpers. */
#include "../unit_check.h"
#include "net/net.h"

#include <string.h>

#define N 2000

/* A range-list registration (dynamic windows): an access is accepted inside one range or
 * over ranges that touch, never over a gap, after the range's removal, or with a stale
 * key; random lists against a byte map. */
static void ranges(void)
{
    enum { SPACE = 4096 };
    static char space[SPACE + 64];
    static unsigned char map[SPACE + 64];
    uint64_t b = (uintptr_t)space;
    rmpi_net_mrtab_t t = {0};
    rmpi_net_ranges_t rs = {0};
    rmpi_mr_t plain, mr;
    rmpi_net_mrtab_reg(&t, space, 16, &plain);
    rmpi_net_mrtab_reg_ranges(&t, &rs, &mr);
    CHECK(mr.rkey & RMPI_NET_KEY_RANGES, "a range-list key without its mark");
    CHECK(!(plain.rkey & RMPI_NET_KEY_RANGES), "a plain key with the range-list mark");
    CHECK(rmpi_net_mrtab_check(&t, mr.rkey, b + 100, 1) != 0, "an empty list accepts");
    /* attached out of order: [100,200) [200,300) touch, then a gap, [400,500) */
    CHECK(rmpi_net_ranges_add(&rs, b + 400, 100) == 0 && rmpi_net_ranges_add(&rs, b + 100, 100) == 0 &&
              rmpi_net_ranges_add(&rs, b + 200, 100) == 0,
          "adding disjoint ranges");
    CHECK(rmpi_net_ranges_add(&rs, b + 150, 10) != 0, "a range inside another added");
    CHECK(rmpi_net_ranges_add(&rs, b + 350, 60) != 0, "a range overlapping the next added");
    CHECK(rmpi_net_ranges_add(&rs, b + 400, 1) != 0, "a second range at the same address added");
    CHECK(rmpi_net_ranges_add(&rs, UINT64_MAX - 4, 10) != 0, "a range wrapping around added");
    CHECK(rs.n == 3 && rs.r[0].addr == b + 100 && rs.r[1].addr == b + 200 && rs.r[2].addr == b + 400,
          "the list is not sorted");
    /* ranges of 0 bytes (MPI_Win_attach of size 0): they overlap only a range they lie
     * strictly inside, and change nothing an access may reach */
    CHECK(rmpi_net_ranges_add(&rs, b + 150, 0) != 0, "0 bytes inside a range added");
    CHECK(rmpi_net_ranges_add(&rs, b + 400, 0) == 0 && rmpi_net_ranges_add(&rs, b + 400, 0) == 0 &&
              rmpi_net_ranges_add(&rs, b + 350, 0) == 0,
          "0 bytes at a range's start or in a gap refused");
    CHECK(rmpi_net_mrtab_check(&t, mr.rkey, b + 400, 8) == 0, "a range behind 0-byte ones at its address refused");
    CHECK(rmpi_net_mrtab_check(&t, mr.rkey, b + 340, 20) != 0, "a 0-byte range filled the gap");
    CHECK(rmpi_net_ranges_remove(&rs, b + 350) == 0 && rmpi_net_ranges_remove(&rs, b + 400) == 0 &&
              rmpi_net_mrtab_check(&t, mr.rkey, b + 400, 8) != 0 && rmpi_net_ranges_remove(&rs, b + 400) == 0 &&
              rmpi_net_ranges_remove(&rs, b + 400) == 0 && rmpi_net_ranges_add(&rs, b + 400, 100) == 0,
          "removing ranges at a shared address (the one with bytes first)");
    CHECK(rs.n == 3, "%d ranges left", rs.n);
    CHECK(rmpi_net_mrtab_check(&t, mr.rkey, b + 420, 80) == 0, "inside one range refused");
    CHECK(rmpi_net_mrtab_check(&t, mr.rkey, b + 150, 100) == 0, "over two touching ranges refused");
    CHECK(rmpi_net_mrtab_check(&t, mr.rkey, b + 250, 160) != 0, "over two ranges and the gap between accepted");
    CHECK(rmpi_net_mrtab_check(&t, mr.rkey, b + 299, 2) != 0, "into the gap accepted");
    CHECK(rmpi_net_mrtab_check(&t, mr.rkey, b + 99, 2) != 0, "from below the first range accepted");
    CHECK(rmpi_net_mrtab_check(&t, mr.rkey, b + 499, 2) != 0, "past the last range accepted");
    CHECK(rmpi_net_mrtab_check(&t, mr.rkey, b + 150, UINT64_MAX - 10) != 0, "a length wrapping around accepted");
    CHECK(rmpi_net_mrtab_check(&t, plain.rkey, b + 420, 8) != 0, "the plain key reaches the list's range");
    CHECK(rmpi_net_ranges_remove(&rs, b + 150) != 0, "removed a range by an address inside it");
    CHECK(rmpi_net_ranges_remove(&rs, b + 200) == 0, "removing [200,300)");
    CHECK(rmpi_net_mrtab_check(&t, mr.rkey, b + 210, 8) != 0, "a removed range still accepted");
    CHECK(rmpi_net_mrtab_check(&t, mr.rkey, b + 150, 100) != 0, "over a removed neighbour accepted");
    CHECK(rmpi_net_mrtab_check(&t, mr.rkey, b + 150, 50) == 0, "the range before the removed one refused");
    uint64_t old = mr.rkey;
    rmpi_net_mrtab_dereg(&t, &mr);
    CHECK(rmpi_net_mrtab_check(&t, old, b + 420, 8) != 0, "a deregistered list's key still works");
    rmpi_net_mrtab_reg_ranges(&t, &rs, &mr);
    CHECK((mr.rkey & 0xffffff) == (old & 0xffffff), "the slot was not reused (test premise)");
    CHECK(rmpi_net_mrtab_check(&t, old, b + 420, 8) != 0, "a stale key names the slot's new list");
    CHECK(rmpi_net_mrtab_check(&t, mr.rkey, b + 420, 8) == 0, "the new key refused");
    rmpi_net_ranges_free(&rs);

    /* random lists (some touching, added in random order) against the byte map */
    unit_rng_t x = unit_seed(7);
    for (int round = 0; round < 2000; round++) {
        memset(map, 0, sizeof map);
        uint64_t at = unit_range(&x, 0, 59), st[16], ln[16];
        int n = 0;
        while (n < 16 && at < SPACE - 1) {
            uint64_t len = unit_range(&x, 1, 150);
            len = at + len > SPACE ? SPACE - at : len;
            st[n] = at, ln[n++] = len;
            memset(map + at, 1, len);
            at += len + (unit_range(&x, 0, 2) ? 0 : unit_range(&x, 1, 80));
        }
        for (int i = n - 1; i > 0; i--) {
            int j = (int)unit_range(&x, 0, (uint64_t)i);
            uint64_t a = st[i], l = ln[i];
            st[i] = st[j], ln[i] = ln[j], st[j] = a, ln[j] = l;
        }
        for (int i = 0; i < n; i++)
            CHECK(rmpi_net_ranges_add(&rs, b + st[i], ln[i]) == 0, "adding a disjoint range");
        for (int k = 0; k < 20; k++) {
            uint64_t a = unit_range(&x, 0, SPACE - 1), len = unit_range(&x, 1, 400);
            len = a + len > SPACE + 64 ? SPACE + 64 - a : len;
            int want = 1;
            for (uint64_t i = a; i < a + len; i++)
                want &= map[i];
            CHECK((rmpi_net_mrtab_check(&t, mr.rkey, b + a, len) == 0) == want, "[%llu, +%llu): %s, the map says %s",
                  (unsigned long long)a, (unsigned long long)len, want ? "refused" : "accepted",
                  want ? "inside" : "outside");
        }
        rmpi_net_ranges_free(&rs);
        CHECK_BAIL();
    }
    rmpi_net_mrtab_free(&t);
}

int main(void)
{
    static char buf[N][16];
    static rmpi_mr_t mr[N];
    rmpi_net_mrtab_t t = {0};
    for (int i = 0; i < N; i++)
        rmpi_net_mrtab_reg(&t, buf[i], sizeof buf[i], &mr[i]);
    int distinct_tags = 1, small = 0;
    for (int i = 0; i < N; i++) {
        uint64_t tag = mr[i].rkey >> 24;
        small += tag < (1ull << 20); /* a 39-bit random tag is this small twice in a million */
        if (i && tag == mr[i - 1].rkey >> 24)
            distinct_tags = 0;
        CHECK(rmpi_net_mrtab_check(&t, mr[i].rkey, (uintptr_t)buf[i], 16) == 0, "key %d refused", i);
        CHECK(rmpi_net_mrtab_check(&t, mr[i].rkey, (uintptr_t)buf[i] + 1, 16) != 0, "overrun of %d accepted", i);
        CHECK(rmpi_net_mrtab_check(&t, mr[i].rkey ^ (1ull << 40), (uintptr_t)buf[i], 16) != 0,
              "a key one bit off names registration %d", i);
    }
    CHECK(distinct_tags, "two registrations in a row got the same tag");
    CHECK(small <= 2, "%d tags look like counters, not random", small);
    /* The key of the first registration made in the old format, 0x100000001, names nothing. */
    CHECK(rmpi_net_mrtab_check(&t, 0x100000001ull, (uintptr_t)buf[0], 16) != 0, "a guessable key works");
    uint64_t old = mr[5].rkey;
    rmpi_net_mrtab_dereg(&t, &mr[5]);
    CHECK(rmpi_net_mrtab_check(&t, old, (uintptr_t)buf[5], 16) != 0, "a deregistered key still works");
    rmpi_net_mrtab_reg(&t, buf[5], sizeof buf[5], &mr[5]);
    CHECK((mr[5].rkey & 0xffffff) == (old & 0xffffff), "the slot was not reused (test premise)");
    CHECK(rmpi_net_mrtab_check(&t, old, (uintptr_t)buf[5], 16) != 0, "a stale key names the slot's new registration");
    rmpi_net_mrtab_free(&t);
    ranges();

    uint8_t key[RMPI_AUTH_KEY_BYTES], back[RMPI_AUTH_KEY_BYTES], mac[RMPI_AUTH_MAC_BYTES];
    char hex[2 * RMPI_AUTH_KEY_BYTES + 1];
    CHECK(rmpi_auth_random(key, sizeof key) == 0, "getrandom");
    rmpi_auth_hex(key, sizeof key, hex);
    CHECK(rmpi_auth_unhex(hex, back, sizeof back) == 0 && !memcmp(key, back, sizeof key), "hex round trip");
    CHECK(rmpi_auth_unhex("12", back, sizeof back) != 0, "short hex accepted");
    hex[3] = 'g';
    CHECK(rmpi_auth_unhex(hex, back, sizeof back) != 0, "non-hex digit accepted");
    rmpi_auth_mac(key, "a", "msg", 3, mac);
    CHECK(rmpi_auth_verify(key, "a", "msg", 3, mac) == 0, "MAC does not verify");
    CHECK(rmpi_auth_verify(key, "b", "msg", 3, mac) != 0, "MAC verifies under another label");
    CHECK(rmpi_auth_verify(key, "a", "msh", 3, mac) != 0, "MAC verifies another message");
    key[0] ^= 1;
    CHECK(rmpi_auth_verify(key, "a", "msg", 3, mac) != 0, "MAC verifies under another key");
    return finish("net/mrtab");
}
