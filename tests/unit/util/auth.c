/* util/auth.c: hex encoding both ways, constant-time compare, the HMAC-SHA-256 of (label,
 * msg) against values computed independently (Python's hmac module), and the PMI port
 * handshake's MAC (docs/wire/pmi.md): every changed input must change the answer. */
#include "../unit_check.h"
#include "util/util.h"

static const char *const KAT_MAC = "c7d3da7dc3b55bd4398d9ef1e095c8b14b63a0d205e2f28028fd0db9cb6f5934";
static const char *const KAT_PMI = "715dddd9c116d255493707d4c1da5d87c307dfb0402096dcb1f6d3399c67fd5d";

static void hex_round_trip(void)
{
    uint8_t in[256], back[256];
    char hex[2 * sizeof in + 1];
    for (size_t i = 0; i < sizeof in; i++)
        in[i] = (uint8_t)i;
    rmpi_auth_hex(in, sizeof in, hex);
    CHECK(strlen(hex) == 2 * sizeof in, "hex of 256 bytes has %zu digits", strlen(hex));
    CHECK(!strncmp(hex, "000102", 6) && !strcmp(hex + 2 * 250, "fafbfcfdfeff"), "hex digits: %.6s...%s", hex,
          hex + 2 * 250);
    CHECK(rmpi_auth_unhex(hex, back, sizeof back) == 0 && !memcmp(in, back, sizeof in), "round trip");
    /* upper case is accepted on the way back */
    CHECK(rmpi_auth_unhex("ABcdEF09", back, 4) == 0 && back[0] == 0xab && back[1] == 0xcd && back[2] == 0xef &&
              back[3] == 0x09,
          "mixed case");
    /* exactly 2n hex digits, nothing else */
    static const struct {
        const char *hex;
        size_t n;
    } bad[] = {{"abc", 2},  {"abcdef", 2}, {"abcd", 3}, {"abcdef01", 4} /* fine */, {"0x12", 2}, {"12 4", 2}, {"", 1},
               {"zz00", 2}, {"12g4", 2},   {"-1ab", 2}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int want = i == 3 ? 0 : -1;
        CHECK(rmpi_auth_unhex(bad[i].hex, back, bad[i].n) == want, "unhex(\"%s\", %zu) should give %d", bad[i].hex,
              bad[i].n, want);
    }
    CHECK(rmpi_auth_unhex(NULL, back, 1) == -1, "unhex(NULL)");
    CHECK(rmpi_auth_unhex("", back, 0) == 0, "zero bytes from an empty string");
}

static void equal(void)
{
    uint8_t a[64], b[64];
    for (size_t i = 0; i < sizeof a; i++)
        a[i] = b[i] = (uint8_t)(i * 7);
    CHECK(rmpi_auth_equal(a, b, sizeof a) == 1, "equal buffers");
    for (size_t i = 0; i < sizeof a; i++)
        for (int bit = 0; bit < 8; bit++) {
            b[i] ^= (uint8_t)(1 << bit);
            CHECK(rmpi_auth_equal(a, b, sizeof a) == 0, "byte %zu bit %d differs, called equal", i, bit);
            CHECK(rmpi_auth_equal(a, b, i) == 1, "the first %zu bytes are equal", i);
            b[i] ^= (uint8_t)(1 << bit);
        }
}

static void macs(void)
{
    uint8_t key[RMPI_AUTH_KEY_BYTES], mac[RMPI_AUTH_MAC_BYTES], want[RMPI_AUTH_MAC_BYTES];
    char hex[2 * RMPI_AUTH_MAC_BYTES + 1];
    for (size_t i = 0; i < sizeof key; i++)
        key[i] = (uint8_t)i;
    const char *msg = "The quick brown fox";
    rmpi_auth_mac(key, "railmpi test label", msg, strlen(msg), mac);
    rmpi_auth_hex(mac, sizeof mac, hex);
    CHECK(!strcmp(hex, KAT_MAC), "HMAC-SHA-256(key, label NUL msg) = %s, expected %s", hex, KAT_MAC);
    CHECK(rmpi_auth_verify(key, "railmpi test label", msg, strlen(msg), mac) == 0, "verify of its own MAC");
    CHECK(rmpi_auth_verify(key, "railmpi test labe", msg, strlen(msg), mac) == -1, "another label verified");
    CHECK(rmpi_auth_verify(key, "railmpi test label", msg, strlen(msg) - 1, mac) == -1, "a shorter message verified");
    /* the label's NUL separates it from the message: moving a byte across must not verify */
    CHECK(rmpi_auth_verify(key, "railmpi test labelT", msg + 1, strlen(msg) - 1, mac) == -1,
          "a byte moved from the message into the label verified");
    for (size_t i = 0; i < sizeof mac; i++) {
        mac[i] ^= 0x80;
        CHECK(rmpi_auth_verify(key, "railmpi test label", msg, strlen(msg), mac) == -1, "MAC byte %zu flipped", i);
        mac[i] ^= 0x80;
    }
    key[31] ^= 1;
    CHECK(rmpi_auth_verify(key, "railmpi test label", msg, strlen(msg), mac) == -1, "another key verified");
    key[31] ^= 1;

    uint8_t nonce[RMPI_AUTH_NONCE_BYTES];
    for (size_t i = 0; i < sizeof nonce; i++)
        nonce[i] = (uint8_t)(100 + i);
    rmpi_auth_pmi_mac(key, nonce, 42, mac);
    rmpi_auth_hex(mac, sizeof mac, hex);
    CHECK(!strcmp(hex, KAT_PMI), "PMI MAC(nonce, 42) = %s, expected %s", hex, KAT_PMI);
    CHECK(rmpi_auth_pmi_verify(key, nonce, 42, mac) == 0, "PMI verify of its own MAC");
    CHECK(rmpi_auth_pmi_verify(key, nonce, 4, mac) == -1 && rmpi_auth_pmi_verify(key, nonce, 420, mac) == -1 &&
              rmpi_auth_pmi_verify(key, nonce, -42, mac) == -1,
          "PMI MAC verified for another pmiid");
    nonce[0] ^= 1;
    CHECK(rmpi_auth_pmi_verify(key, nonce, 42, mac) == -1, "PMI MAC verified for another nonce");
    nonce[0] ^= 1;
    /* the widest pmiids still fit the message buffer and are told apart */
    rmpi_auth_pmi_mac(key, nonce, -2147483647 - 1, want);
    rmpi_auth_pmi_mac(key, nonce, 2147483647, mac);
    CHECK(!rmpi_auth_equal(want, mac, sizeof mac), "INT_MIN and INT_MAX pmiids give one MAC");
    CHECK(rmpi_auth_pmi_verify(key, nonce, -2147483647 - 1, want) == 0, "INT_MIN pmiid");

    uint8_t r1[32] = {0}, r2[32] = {0};
    CHECK(rmpi_auth_random(r1, sizeof r1) == 0 && rmpi_auth_random(r2, sizeof r2) == 0, "random");
    CHECK(!rmpi_auth_equal(r1, r2, sizeof r1), "two 32-byte random draws are equal");
}

int main(void)
{
    hex_round_trip();
    equal();
    macs();
    return finish("util_auth");
}
