/* util/util.c: sizes with k/m/g suffixes (every knob of type SIZE goes through it) and the
 * shared-memory name prefix of a job (what mpiexec removes after a killed job: two jobs
 * must never share one, and a name must stay within the limits of /dev/shm names). */
#include <limits.h>

#include "../unit_check.h"
#include "util/util.h"

static void sizes(void)
{
    static const struct {
        const char *s;
        long long v;
    } ok[] = {{"0", 0},          {"123", 123},      {"64k", 65536},     {"64K", 65536},
              {"16kb", 16384},   {"16KiB", -1},     {"4m", 4 << 20},    {"4M", 4 << 20},
              {"1g", 1ll << 30}, {"3G", 3ll << 30}, {"1gb", 1ll << 30}, {"2mb", 2 << 20},
              {"2ki", 2048},     {"007", 7},        {"1024", 1024},     {"9223372036854775807", LLONG_MAX}};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        long long v = rmpi_parse_size(ok[i].s);
        CHECK(v == ok[i].v, "parse_size(\"%s\") = %lld, expected %lld", ok[i].s, v, ok[i].v);
    }
    static const char *const bad[] = {"", "k", "-1", "-1k", "12x", "1.5m", "64 k", "64k!", "1kk", "1t", "0x10", "1e3",
                                      "64k ", "kb",
                                      /* too large, or too large once the suffix is applied */
                                      "99999999999999999999", "9223372036854775807k", "8589934592g", "17179869184g",
                                      "9007199254740992m"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        long long v = rmpi_parse_size(bad[i]);
        CHECK(v == -1, "parse_size(\"%s\") = %lld, expected -1 (malformed or too large)", bad[i], v);
    }
    CHECK(rmpi_parse_size(NULL) == -1, "parse_size(NULL)");
    /* the largest values a suffix still allows */
    CHECK(rmpi_parse_size("8589934591g") == 8589934591ll << 30, "8589934591g");
    CHECK(rmpi_parse_size("9007199254740991k") == 9007199254740991ll << 10, "9007199254740991k");
}

static int prefix_ok(const char *p)
{
    if (strncmp(p, "rmpi-", 5) || p[strlen(p) - 1] != '-')
        return 0;
    for (const char *c = p; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-' ||
              *c == '_'))
            return 0;
    return 1;
}

static void shm_prefix(void)
{
    char p[RMPI_SHM_PREFIX_MAX], q[RMPI_SHM_PREFIX_MAX];
    rmpi_shm_job_prefix("kvs_1234_0", p, sizeof p);
    CHECK(!strcmp(p, "rmpi-kvs_1234_0-"), "prefix '%s'", p);
    rmpi_shm_job_prefix("job/../x y", p, sizeof p);
    CHECK(!strcmp(p, "rmpi-job____x_y-"), "bytes outside [A-Za-z0-9] become '_': '%s'", p);
    rmpi_shm_job_prefix("", p, sizeof p);
    CHECK(!strcmp(p, "rmpi--"), "empty job id: '%s'", p);

    /* 48 bytes are kept as they are; 49 and more are cut and hashed */
    char id[200];
    memset(id, 'a', 48);
    id[48] = '\0';
    rmpi_shm_job_prefix(id, p, sizeof p);
    CHECK(strlen(p) == 5 + 48 + 1 && prefix_ok(p), "48-byte id: '%s'", p);
    unit_rng_t r = unit_seed(3);
    for (int len = 49; len < 200; len += 7) {
        for (int i = 0; i < len; i++)
            id[i] = (char)unit_range(&r, 33, 126);
        id[len] = '\0';
        rmpi_shm_job_prefix(id, p, sizeof p);
        CHECK(strlen(p) == 5 + 48 + 1 && strlen(p) < RMPI_SHM_PREFIX_MAX && prefix_ok(p), "%d-byte id: '%s'", len, p);
        /* ids that differ only after the part kept differ in the hash */
        id[len - 1] = id[len - 1] == 'x' ? 'y' : 'x';
        rmpi_shm_job_prefix(id, q, sizeof q);
        CHECK(strcmp(p, q) != 0, "%d-byte ids differing in the last byte share the prefix '%s'", len, p);
        CHECK(!strncmp(p, q, 5 + 39), "%d-byte ids: the kept part differs: '%s' '%s'", len, p, q);
    }
}

int main(void)
{
    sizes();
    shm_prefix();
    return finish("util_misc");
}
