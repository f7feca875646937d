/*
 * Authentication primitives for the job's trust boundary (docs/wire/auth.md): random bytes
 * from the kernel and HMAC-SHA-256 from libsodium, so no hand-written cryptography sits on
 * the wire. Also compiled into mpiexec, which makes the job key and checks PMI clients.
 */
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include <sodium.h>

int rmpi_auth_random(void *buf, size_t len)
{
    unsigned char *p = buf;
    while (len > 0) {
        ssize_t n = getrandom(p, len, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

void rmpi_auth_mac(const uint8_t key[RMPI_AUTH_KEY_BYTES], const char *label, const void *msg, size_t len,
                   uint8_t mac[RMPI_AUTH_MAC_BYTES])
{
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init(&st, key, RMPI_AUTH_KEY_BYTES);
    /* The label (with its NUL) separates the uses of one key: a MAC made for one step of
     * one protocol is never valid for another. */
    crypto_auth_hmacsha256_update(&st, (const unsigned char *)label, strlen(label) + 1);
    crypto_auth_hmacsha256_update(&st, msg, len);
    crypto_auth_hmacsha256_final(&st, mac);
    sodium_memzero(&st, sizeof st);
}

int rmpi_auth_verify(const uint8_t key[RMPI_AUTH_KEY_BYTES], const char *label, const void *msg, size_t len,
                     const uint8_t mac[RMPI_AUTH_MAC_BYTES])
{
    uint8_t want[RMPI_AUTH_MAC_BYTES];
    rmpi_auth_mac(key, label, msg, len, want);
    int ok = sodium_memcmp(want, mac, RMPI_AUTH_MAC_BYTES) == 0;
    sodium_memzero(want, sizeof want);
    return ok ? 0 : -1;
}

static size_t pmi_message(const uint8_t nonce[RMPI_AUTH_NONCE_BYTES], int pmiid, uint8_t *msg, size_t len)
{
    memcpy(msg, nonce, RMPI_AUTH_NONCE_BYTES);
    int n = snprintf((char *)msg + RMPI_AUTH_NONCE_BYTES, len - RMPI_AUTH_NONCE_BYTES, "%d", pmiid);
    return RMPI_AUTH_NONCE_BYTES + (size_t)n;
}

void rmpi_auth_pmi_mac(const uint8_t key[RMPI_AUTH_KEY_BYTES], const uint8_t nonce[RMPI_AUTH_NONCE_BYTES], int pmiid,
                       uint8_t mac[RMPI_AUTH_MAC_BYTES])
{
    uint8_t msg[RMPI_AUTH_NONCE_BYTES + 16];
    rmpi_auth_mac(key, RMPI_AUTH_PMI_LABEL, msg, pmi_message(nonce, pmiid, msg, sizeof msg), mac);
}

int rmpi_auth_pmi_verify(const uint8_t key[RMPI_AUTH_KEY_BYTES], const uint8_t nonce[RMPI_AUTH_NONCE_BYTES], int pmiid,
                         const uint8_t mac[RMPI_AUTH_MAC_BYTES])
{
    uint8_t msg[RMPI_AUTH_NONCE_BYTES + 16];
    return rmpi_auth_verify(key, RMPI_AUTH_PMI_LABEL, msg, pmi_message(nonce, pmiid, msg, sizeof msg), mac);
}

int rmpi_auth_equal(const void *a, const void *b, size_t n) { return sodium_memcmp(a, b, n) == 0; }

void rmpi_auth_hex(const uint8_t *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int rmpi_auth_unhex(const char *hex, uint8_t *out, size_t n)
{
    if (!hex || strlen(hex) != 2 * n)
        return -1;
    for (size_t i = 0; i < n; i++) {
        int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}
