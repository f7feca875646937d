/*
 * TCP rail matching and address cards (src/net/tcp/tcp_match.c), pure logic:
 *  - cards: format and parse round trip (streams, prefixes /0../32), malformed cards refused;
 *  - matching cases: equal rails on two hosts, crossed names, an interface missing on one
 *    side, loopback never across nodes, an address both hosts have (a docker bridge) is no
 *    path, within a node only loopback unless both ranks listed their interfaces, streams
 *    pair with equal stream numbers, different masks, the routed fallback;
 *  - properties over 20000 random card pairs: the pairing is one-to-one, keeps both rail
 *    orders (subchannel k talks to subchannel k), only pairs rails that may pair (or is the
 *    single routed fallback), and is as large as any order-keeping pairing (brute force).
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "../unit_check.h"
#include "net/tcp/tcp.h"

static rmpi_tcp_entry_t ent(const char *name, const char *ip, int prefix)
{
    rmpi_tcp_entry_t e;
    memset(&e, 0, sizeof e);
    snprintf(e.name, sizeof e.name, "%s", name);
    const char *hash = strchr(name, '#');
    e.stream = hash ? atoi(hash + 1) : 0;
    inet_pton(AF_INET, ip, &e.addr);
    e.mask.s_addr = htonl(prefix ? 0xffffffffu << (32 - prefix) : 0);
    e.port = 4000;
    e.loopback = (ntohl(e.addr.s_addr) >> 24) == 127;
    return e;
}

static rmpi_tcp_card_t mk(int listed, size_t n, const rmpi_tcp_entry_t *es)
{
    rmpi_tcp_card_t c;
    memset(&c, 0, sizeof c);
    c.listed = listed;
    c.n = (int)n;
    memcpy(c.e, es, n * sizeof *es);
    return c;
}
#define CARD(listed, ...) \
    mk(listed, sizeof((rmpi_tcp_entry_t[]){__VA_ARGS__}) / sizeof(rmpi_tcp_entry_t), (rmpi_tcp_entry_t[]){__VA_ARGS__})

/* Pairs as "a0-b0,a1-b1" (+" routed"), for readable expectations. */
static const char *pairing(const rmpi_tcp_card_t *a, const rmpi_tcp_card_t *b, int same_node)
{
    static char out[256];
    int pa[RMPI_TCP_MAX_RAILS], pb[RMPI_TCP_MAX_RAILS], routed = -1;
    int n = rmpi_tcp_match(a, b, same_node, pa, pb, &routed);
    size_t len = 0;
    out[0] = '\0';
    int k = 0;
    for (int i = 0; i < a->n; i++)
        if (pa[i] >= 0) {
            len += (size_t)snprintf(out + len, sizeof out - len, "%s%d-%d", k++ ? "," : "", i, pa[i]);
            CHECK(pb[pa[i]] == i, "pb does not mirror pa");
        }
    CHECK(k == n, "returned %d pairs, listed %d", n, k);
    if (routed)
        snprintf(out + len, sizeof out - len, " routed");
    return out;
}

#define EXPECT(a, b, same, want)                                                                      \
    do {                                                                                              \
        rmpi_tcp_card_t ca_ = (a), cb_ = (b);                                                         \
        const char *got_ = pairing(&ca_, &cb_, same);                                                 \
        CHECK(strcmp(got_, want) == 0, "line %d: pairing '%s', expected '%s'", __LINE__, got_, want); \
    } while (0)

static void cards(void)
{
    rmpi_tcp_card_t c = CARD(1, ent("eth0", "10.1.2.3", 24), ent("eth0#1", "10.1.2.3", 24), ent("lo", "127.0.0.1", 8),
                             ent("wg0", "192.168.7.9", 32), ent("x", "1.2.3.4", 0));
    c.e[1].stream = 1;
    char buf[1024];
    CHECK(rmpi_tcp_card_format(&c, buf, sizeof buf) > 0, "format");
    CHECK(strcmp(buf, "L,eth0@10.1.2.3/24:4000,eth0#1@10.1.2.3/24:4000,lo@127.0.0.1/8:4000,"
                      "wg0@192.168.7.9/32:4000,x@1.2.3.4/0:4000") == 0,
          "card text %s", buf);
    rmpi_tcp_card_t d;
    CHECK(rmpi_tcp_card_parse(buf, &d) == 0, "parse %s", buf);
    CHECK(d.listed == 1 && d.n == c.n, "parsed %d entries", d.n);
    for (int i = 0; i < c.n && i < d.n; i++)
        CHECK(!strcmp(c.e[i].name, d.e[i].name) && c.e[i].addr.s_addr == d.e[i].addr.s_addr &&
                  c.e[i].mask.s_addr == d.e[i].mask.s_addr && c.e[i].port == d.e[i].port &&
                  c.e[i].stream == d.e[i].stream && c.e[i].loopback == d.e[i].loopback,
              "entry %d differs after the round trip", i);
    CHECK(rmpi_tcp_card_format(&c, buf, 40) < 0, "a card that does not fit is refused");
    CHECK(rmpi_tcp_card_parse("A", &d) == 0 && d.n == 0 && d.listed == 0, "empty automatic card");
    const char *bad[] = {"",
                         "X,eth0@1.2.3.4/24:80",
                         "A,eth0@1.2.3.4:80",
                         "A,eth0@1.2.3.4/24:0",
                         "A,eth0@1.2.3.4/33:80",
                         "A,eth0@1.2.3/24:80",
                         "A,@1.2.3.4/24:80",
                         "A,eth0#9@1.2.3.4/24:80",
                         "A,averyveryverylonginterfacename@1.2.3.4/24:80",
                         "127.0.0.1:1,A,eth0@1.2.3.4/24:80",
                         "A,eth0=1.2.3.4/24:80"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(rmpi_tcp_card_parse(bad[i], &d) != 0, "accepted '%s'", bad[i]);
}

static void cases(void)
{
    /* Two hosts, two rails each (the namespace rails). */
    EXPECT(CARD(1, ent("rail0", "10.201.0.1", 24), ent("rail1", "10.201.1.1", 24)),
           CARD(1, ent("rail0", "10.201.0.2", 24), ent("rail1", "10.201.1.2", 24)), 0, "0-0,1-1");
    /* Names crossed between the hosts: only an order-keeping pairing is allowed. */
    EXPECT(CARD(1, ent("a", "10.0.1.1", 24), ent("b", "10.0.2.1", 24)),
           CARD(1, ent("a", "10.0.2.2", 24), ent("b", "10.0.1.2", 24)), 0, "1-0");
    /* An interface missing on one side. */
    EXPECT(CARD(0, ent("eth0", "10.0.0.1", 24), ent("eth1", "10.0.1.1", 24)), CARD(0, ent("eth1", "10.0.1.2", 24)), 0,
           "1-0");
    /* Loopback never across nodes; a shared docker bridge address is no path between hosts. */
    EXPECT(CARD(0, ent("docker0", "172.17.0.1", 16), ent("eth0", "10.0.0.1", 24), ent("lo", "127.0.0.1", 8)),
           CARD(0, ent("docker0", "172.17.0.1", 16), ent("eth0", "10.0.0.2", 24), ent("lo", "127.0.0.1", 8)), 0, "1-1");
    /* Within a node: loopback only, unless both listed their interfaces. */
    rmpi_tcp_card_t auto1 = CARD(0, ent("eth0", "10.0.0.1", 24), ent("lo", "127.0.0.1", 8));
    rmpi_tcp_card_t list1 = CARD(1, ent("eth0", "10.0.0.1", 24), ent("lo", "127.0.0.1", 8));
    EXPECT(auto1, auto1, 1, "1-1");
    EXPECT(list1, list1, 1, "0-0,1-1");
    EXPECT(list1, auto1, 1, "1-1");
    EXPECT(CARD(0, ent("lo", "127.0.0.1", 8)), CARD(0, ent("lo", "127.0.0.1", 8)), 1, "0-0");
    /* Streams pair with equal stream numbers; a side with fewer streams pairs fewer rails. */
    rmpi_tcp_card_t s2a = CARD(1, ent("r0#0", "10.0.0.1", 24), ent("r0#1", "10.0.0.1", 24), ent("r1#0", "10.0.1.1", 24),
                               ent("r1#1", "10.0.1.1", 24));
    rmpi_tcp_card_t s2b = CARD(1, ent("r0#0", "10.0.0.2", 24), ent("r0#1", "10.0.0.2", 24), ent("r1#0", "10.0.1.2", 24),
                               ent("r1#1", "10.0.1.2", 24));
    EXPECT(s2a, s2b, 0, "0-0,1-1,2-2,3-3");
    EXPECT(s2a, CARD(1, ent("r0", "10.0.0.2", 24), ent("r1", "10.0.1.2", 24)), 0, "0-0,2-1");
    /* Masks differ: the shorter prefix decides, the same way from both sides. */
    EXPECT(CARD(1, ent("e", "10.0.0.1", 16)), CARD(1, ent("e", "10.0.1.1", 24)), 0, "0-0");
    EXPECT(CARD(1, ent("e", "10.0.1.1", 24)), CARD(1, ent("e", "10.0.0.1", 16)), 0, "0-0");
    /* No shared subnet at all: the first eligible rails, routed. */
    EXPECT(CARD(0, ent("eth0", "10.1.0.1", 24), ent("eth1", "10.1.1.1", 24)),
           CARD(0, ent("eth0", "10.2.0.1", 24), ent("eth1", "10.2.1.1", 24)), 0, "0-0 routed");
    EXPECT(CARD(0, ent("eth0", "10.1.0.1", 24), ent("lo", "127.0.0.1", 8)), CARD(0, ent("eth5", "10.9.0.1", 24)), 0,
           "0-0 routed");
    EXPECT(CARD(1, ent("a", "127.0.0.1", 8), ent("b", "10.1.0.1", 24)), CARD(1, ent("c", "10.9.0.1", 24)), 0,
           "1-0 routed");
    EXPECT(CARD(1, ent("lo", "127.0.0.1", 8)), CARD(1, ent("eth0", "192.0.2.2", 24)), 1, "0-0 routed");
    /* Nothing eligible: loopback only, across nodes. */
    EXPECT(CARD(0, ent("lo", "127.0.0.1", 8)), CARD(0, ent("eth0", "10.0.0.1", 24)), 0, "");
}

/* May a and b pair (the rule the documentation states, written independently)? */
static int may_pair(const rmpi_tcp_entry_t *a, const rmpi_tcp_entry_t *b, int same, int all)
{
    if (same ? !all && !(a->loopback && b->loopback) : a->loopback || b->loopback)
        return 0;
    if (a->stream != b->stream || (!same && a->addr.s_addr == b->addr.s_addr))
        return 0;
    uint32_t m = a->mask.s_addr & b->mask.s_addr;
    return (a->addr.s_addr & m) == (b->addr.s_addr & m);
}

/* Largest order-keeping pairing, by brute force over a's choices. */
static int brute(const rmpi_tcp_card_t *a, const rmpi_tcp_card_t *b, int i, int j, int same, int all)
{
    if (i == a->n)
        return 0;
    int best = brute(a, b, i + 1, j, same, all);
    for (int k = j; k < b->n; k++)
        if (may_pair(&a->e[i], &b->e[k], same, all)) {
            int v = 1 + brute(a, b, i + 1, k + 1, same, all);
            best = v > best ? v : best;
        }
    return best;
}

static void random_card(unit_rng_t *rng, rmpi_tcp_card_t *c)
{
    static const char *nets[] = {"10.0.0.", "10.0.1.", "10.0.2.", "127.0.0."};
    memset(c, 0, sizeof *c);
    c->listed = (int)unit_range(rng, 0, 1);
    c->n = (int)unit_range(rng, 0, 6);
    for (int i = 0; i < c->n; i++) {
        char ip[32], name[16];
        snprintf(ip, sizeof ip, "%s%d", nets[unit_range(rng, 0, 3)], (int)unit_range(rng, 1, 3));
        snprintf(name, sizeof name, "if%d", i);
        c->e[i] = ent(name, ip, unit_range(rng, 0, 5) ? 24 : 16);
        c->e[i].stream = (int)unit_range(rng, 0, 1);
    }
}

static void properties(void)
{
    unit_rng_t rng = unit_seed(3);
    for (int t = 0; t < 20000; t++) {
        CHECK_BAIL();
        rmpi_tcp_card_t a, b;
        random_card(&rng, &a);
        random_card(&rng, &b);
        int same = (int)unit_range(&rng, 0, 1), all = a.listed && b.listed;
        int pa[RMPI_TCP_MAX_RAILS], pb[RMPI_TCP_MAX_RAILS], routed;
        int n = rmpi_tcp_match(&a, &b, same, pa, pb, &routed);
        int k = 0, last = -1;
        for (int i = 0; i < a.n; i++) {
            if (pa[i] < 0)
                continue;
            k++;
            CHECK(pa[i] < b.n && pb[pa[i]] == i, "case %d: not one-to-one", t);
            CHECK(pa[i] > last, "case %d: pairing crosses (a%d-b%d after b%d)", t, i, pa[i], last);
            last = pa[i];
            CHECK(routed || may_pair(&a.e[i], &b.e[pa[i]], same, all), "case %d: a%d-b%d may not pair", t, i, pa[i]);
        }
        for (int j = 0; j < b.n; j++)
            CHECK(pb[j] < 0 || pa[pb[j]] == j, "case %d: pb not mirrored", t);
        CHECK(k == n, "case %d: %d pairs returned, %d found", t, n, k);
        int max = brute(&a, &b, 0, 0, same, all);
        if (routed)
            CHECK(max == 0 && n == 1, "case %d: routed with %d possible pairs", t, max);
        else
            CHECK(n == max, "case %d: %d pairs, %d possible", t, n, max);
    }
}

int main(void)
{
    cards();
    cases();
    properties();
    return finish("tcp_match");
}
