/* Registration table of the emulated-RDMA providers (src/net/mrtab.c): keys of live
 * registrations are unguessable (random high bits, never a counter), every access is
 * checked against the registered range, and a key outlives neither its registration nor
 * a later registration of the same slot. Also the auth primitives' hex and MAC helpers. */
#include "../unit_check.h"
#include "net/net.h"

#include <string.h>

#define N 2000

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
        small += tag < (1ull << 20); /* a 40-bit random tag is this small once in a million */
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
