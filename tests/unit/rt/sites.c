/* rt/site.c: the RMPI_SITES syntax (ranks, ranges, host names, every malformed form named),
 * the clustering of round-trip matrices: one site, two, three, noisy, all equal,
 * unmeasured pairs, the floor and the gap; and whether sites come in runs of nodes. */
#include <math.h>
#include <stdlib.h>

#include "../unit_check.h"
#include "rt/rt.h"

static void check_map(const char *what, const int *got, const int *want, int n)
{
    for (int i = 0; i < n; i++)
        CHECK(got[i] == want[i], "%s: item %d in site %d, expected %d", what, i, got[i], want[i]);
}

static void parse_good(void)
{
    static const char *hosts[] = {"nsA1", "nsA2", "nsB1", "nsB2", "nsA1", "nsB2"};
    static const struct {
        const char *spec;
        int n, nsites, site[8];
        int with_hosts;
    } t[] = {
        {"0-3", 4, 1, {0, 0, 0, 0}, 0},
        {"0-3:4-7", 8, 2, {0, 0, 0, 0, 1, 1, 1, 1}, 0},
        {"0,1;2,3", 4, 2, {0, 0, 1, 1}, 0},
        {"0,2:1,3", 4, 2, {0, 1, 0, 1}, 0},
        {"3:0-1:2", 4, 3, {1, 1, 2, 0}, 0},
        {"0:1:2:3", 4, 4, {0, 1, 2, 3}, 0},
        {"nsA*:nsB*", 6, 2, {0, 0, 1, 1, 0, 1}, 1},
        {"nsA1,nsA2:nsB1,nsB2", 6, 2, {0, 0, 1, 1, 0, 1}, 1},
        {"nsB2:0-2,4", 6, 2, {1, 1, 1, 0, 1, 0}, 1},
        {"nsA1,0:1-3,5", 6, 2, {0, 1, 1, 1, 0, 1}, 1}, /* a host and its rank named twice in one site */
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        int site[8];
        char msg[256] = "";
        int ns = rmpi_site_parse(t[i].spec, t[i].n, t[i].with_hosts ? hosts : NULL, site, msg, sizeof msg);
        CHECK(ns == t[i].nsites, "'%s': %d sites (%s), expected %d", t[i].spec, ns, msg, t[i].nsites);
        if (ns == t[i].nsites)
            check_map(t[i].spec, site, t[i].site, t[i].n);
    }
}

static void parse_bad(void)
{
    static const char *hosts[] = {"a", "b", "c", "d"};
    static const struct {
        const char *spec, *says;
    } t[] = {
        {"", "site 1 is empty"},
        {"0-1:", "site 2 is empty"},
        {"0-1::2-3", "site 2 is empty"},
        {"0,,1:2-3", "site 1 has an empty item"},
        {"0-1:2-4", "'2-4' names a rank past the job's last (3)"},
        {"0-1:1-3", "rank 1 is in two sites"},
        {"0-2", "rank 3 is in no site"},
        {"3-0", "range '3-0' runs backwards"},
        {"0-1x:2-3", "'0-1x' is neither a rank, a range A-B nor a host name"},
        {"0-1:2-3:zz", "host 'zz' runs no rank of the job"},
        {"a,b:b,c,d", "rank 1 is in two sites"},
        {"0-1:2-3,a", "rank 0 is in two sites"},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        int site[4];
        char msg[256] = "";
        int ns = rmpi_site_parse(t[i].spec, 4, hosts, site, msg, sizeof msg);
        CHECK(ns == -1, "'%s' accepted (%d sites)", t[i].spec, ns);
        CHECK(!strcmp(msg, t[i].says), "'%s' says '%s', expected '%s'", t[i].spec, msg, t[i].says);
    }
    int site[4];
    char msg[256] = "";
    CHECK(rmpi_site_parse("a:b-d", 4, NULL, site, msg, sizeof msg) == -1 && strstr(msg, "no host names"),
          "a host name without host names: '%s'", msg);
}

static void format(void)
{
    static const struct {
        int n, site[8];
        const char *want;
    } t[] = {
        {4, {0, 0, 0, 0}, "0-3"},
        {8, {0, 0, 0, 0, 1, 1, 1, 1}, "0-3:4-7"},
        {4, {0, 1, 0, 1}, "0,2:1,3"},
        {6, {0, 0, 1, 1, 0, 2}, "0-1,4:2-3:5"},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        char buf[64];
        size_t len = rmpi_site_format(t[i].site, t[i].n, buf, sizeof buf);
        CHECK(!strcmp(buf, t[i].want) && len == strlen(t[i].want), "format: '%s', expected '%s'", buf, t[i].want);
        int back[8];
        char msg[128];
        CHECK(rmpi_site_parse(buf, t[i].n, NULL, back, msg, sizeof msg) >= 1, "'%s' does not parse: %s", buf, msg);
        check_map(buf, back, t[i].site, t[i].n);
    }
    char small[4];
    size_t need = rmpi_site_format((const int[]){0, 1, 0, 1}, 4, small, sizeof small);
    CHECK(need == 7 && strlen(small) < sizeof small, "a short buffer: need %zu, got '%s'", need, small);
}

/* A matrix from site numbers: within a site lan (ns), between sites a and b wan[a][b]. */
static void matrix(double *m, const int *site, int n, double lan, double wan[][4])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            m[i * n + j] = i == j ? 0 : site[i] == site[j] ? lan : wan[site[i]][site[j]];
}

#define US 1e3
#define MS 1e6

static void cluster_case(const char *what, const double *m, int n, const int *want, int nwant)
{
    int got[16];
    int ns = rmpi_site_cluster(m, n, 100 * US, 4, got);
    CHECK(ns == nwant, "%s: %d sites, expected %d", what, ns, nwant);
    check_map(what, got, want, n);
}

static void clusters(void)
{
    double m[16 * 16];
    double wan[4][4] = {{0, 4 * MS, 10 * MS, 0}, {4 * MS, 0, 6 * MS, 0}, {10 * MS, 6 * MS, 0, 0}};
    int one[6] = {0, 0, 0, 0, 0, 0};
    matrix(m, one, 6, 50 * US, wan);
    cluster_case("one site", m, 6, one, 1);

    int two[4] = {0, 0, 1, 1};
    matrix(m, two, 4, 60 * US, wan);
    cluster_case("two sites", m, 4, two, 2);

    int inter[6] = {0, 1, 0, 1, 0, 1}; /* sites interleaved in rank order: numbered by lowest */
    matrix(m, inter, 6, 60 * US, wan);
    cluster_case("two interleaved sites", m, 6, inter, 2);

    int three[7] = {0, 0, 1, 1, 1, 2, 2};
    matrix(m, three, 7, 80 * US, wan);
    cluster_case("three sites", m, 7, three, 3);

    /* two nodes alone: only the floor tells a long link from a short one */
    int pair[2] = {0, 1};
    matrix(m, pair, 2, 0, wan);
    cluster_case("two nodes 4 ms apart", m, 2, pair, 2);
    int near[2] = {0, 0};
    m[1] = m[2] = 150 * US;
    cluster_case("two nodes 150 us apart", m, 2, near, 1);

    /* noisy: LAN 20..400 us (a loaded switch), WAN 3..5 ms, asymmetric samples */
    uint64_t seed = 12345;
    int noisy[12] = {0, 0, 0, 1, 1, 1, 0, 1, 2, 2, 2, 2};
    for (int i = 0; i < 12; i++)
        for (int j = 0; j < 12; j++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            double u = (double)(seed >> 11) / (double)(1ull << 53);
            m[i * 12 + j] = i == j ? 0 : noisy[i] == noisy[j] ? 20 * US + u * 380 * US : 3 * MS + u * 2 * MS;
        }
    cluster_case("noisy three sites", m, 12, noisy, 3);

    /* all equal: one site whatever the value below the gap from the floor */
    int eq[5] = {0, 0, 0, 0, 0};
    for (int i = 0; i < 25; i++)
        m[i] = i % 6 ? 300 * US : 0;
    cluster_case("all equal at 300 us", m, 5, eq, 1);
    /* all equal far apart: every node is its own site (nothing is near anything) */
    int apart[5] = {0, 1, 2, 3, 4};
    for (int i = 0; i < 25; i++)
        m[i] = i % 6 ? 8 * MS : 0;
    cluster_case("all equal at 8 ms", m, 5, apart, 5);

    /* one direction unmeasured (0): the other counts; both unmeasured: never joined */
    int half[4] = {0, 0, 1, 1};
    matrix(m, half, 4, 50 * US, wan);
    m[0 * 4 + 1] = 0;
    m[2 * 4 + 3] = NAN;
    cluster_case("half-measured pairs", m, 4, half, 2);

    /* a gap below the ratio: LAN 100 us, WAN 300 us is one site at gap 4 */
    double low[4][4] = {{0, 300 * US}, {300 * US, 0}};
    matrix(m, two, 4, 100 * US, low);
    cluster_case("a jump of 3x", m, 4, one, 1);

    int single[1] = {0};
    m[0] = 0;
    cluster_case("one node", m, 1, single, 1);
}

/* Sites in runs of nodes (coll keeps Allreduce node-aware then): block and cyclic
 * placements with several ranks per node, a site coming back, a node in two sites. */
static void runs(void)
{
    static const struct {
        const char *what;
        int n, node[8], site[8], want;
    } t[] = {
        {"block, 1 per node", 4, {0, 1, 2, 3}, {0, 0, 1, 1}, 1},
        {"block, 2 per node", 8, {0, 0, 1, 1, 2, 2, 3, 3}, {0, 0, 0, 0, 1, 1, 1, 1}, 1},
        {"cyclic nodes", 8, {0, 0, 2, 2, 1, 1, 3, 3}, {0, 0, 1, 1, 0, 0, 1, 1}, 0},
        {"cyclic ranks, block nodes", 8, {0, 1, 0, 1, 2, 3, 2, 3}, {0, 0, 0, 0, 1, 1, 1, 1}, 1},
        {"ranks alternate nodes of two sites", 4, {0, 2, 0, 2}, {0, 1, 0, 1}, 1},
        {"three sites in runs", 6, {0, 1, 2, 3, 4, 5}, {2, 2, 0, 1, 1, 1}, 1},
        {"site A back after B", 6, {0, 1, 2, 3, 4, 5}, {0, 0, 1, 1, 0, 2}, 0},
        {"a node in two sites", 4, {0, 1, 1, 2}, {0, 1, 0, 1}, 0},
        {"one site", 3, {0, 1, 2}, {0, 0, 0}, 1},
        {"empty", 0, {0}, {0}, 1},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        CHECK(rmpi_site_runs(t[i].node, t[i].site, t[i].n) == t[i].want, "%s: runs %d, expected %d", t[i].what,
              rmpi_site_runs(t[i].node, t[i].site, t[i].n), t[i].want);
}

/* The probe's rule for another batch of rounds (core_sites.c): far = 400 us. */
static void doubt(void)
{
    const double far = 400 * US;
    struct {
        const char *what;
        double rtt, lo, hi, prev;
        int want;
    } t[] = {
        {"near: never", 60 * US, 60 * US, 900 * US, 0, 0},
        {"just below far, spread", 399 * US, 399 * US, 2 * MS, 0, 0},
        {"steady long link, first batch", 10 * MS, 10 * MS, 10.3 * MS, 0, 0},
        {"steady long link, later batch", 10 * MS, 10 * MS, 10.2 * MS, 10.05 * MS, 0},
        {"loaded host: rounds spread", 1.2 * MS, 1.2 * MS, 3.5 * MS, 0, 1},
        {"spread of exactly a quarter", 1 * MS, 1 * MS, 1.25 * MS, 0, 0},
        {"minimum still falling", 2 * MS, 2 * MS, 2.1 * MS, 2.5 * MS, 1},
        {"minimum fell less than a tenth", 2 * MS, 2 * MS, 2.1 * MS, 2.1 * MS, 0},
        {"unmeasured", 0, 0, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        CHECK(rmpi_site_doubt(t[i].rtt, t[i].lo, t[i].hi, t[i].prev, far) == t[i].want, "%s: doubt %d, expected %d",
              t[i].what, rmpi_site_doubt(t[i].rtt, t[i].lo, t[i].hi, t[i].prev, far), t[i].want);
}

int main(void)
{
    parse_good();
    parse_bad();
    format();
    clusters();
    runs();
    doubt();
    return finish("rt/sites");
}
