/* MPI_T: every knob of src/rt/knobs.def is a control variable with its name, type,
 * category (layer), enumeration and value; counters are performance variables that grow
 * with traffic; sessions, start/stop and the MPI_T_ERR_* codes behave as the standard says.
 * Before MPI_Init, during, and after MPI_Finalize.
 * args=report: turns RMPI_REPORT on through MPI_T (the testlist matches the report). */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { T_BOOL, T_INT, T_COUNT, T_FLOAT, T_SIZE, T_STR, T_ENUM };
static const struct knob {
    const char *name;
    int type;
    const char *dflt, *layer, *choices;
} knobs[] = {
#define KNOB(name, type, dflt, layer, choices, doc) {"RMPI_" #name, T_##type, dflt, #layer, choices},
#include "../../../src/rt/knobs.def"
#undef KNOB
};
#define NKNOBS ((int)(sizeof knobs / sizeof knobs[0]))

static const char *const layers[] = {"util", "rt",       "net",  "vc",  "chan", "core",
                                     "comm", "datatype", "coll", "rma", "io",   "api"};

/* The collective knobs a benchmark may switch between calls (MPI_T_SCOPE_ALL_EQ): every
 * coll knob except those that size or switch a communicator's shared segment when it is
 * made, and the site switch, cached per communicator. */
static int all_eq_knob(const struct knob *k)
{
    static const char *const fixed[] = {"RMPI_COLL_SHM",
                                        "RMPI_COLL_SHM_CHUNK",
                                        "RMPI_COLL_SHM_OVERSUBSCRIBED",
                                        "RMPI_COLL_SHM_OVERSUBSCRIBED_SOME",
                                        "RMPI_COLL_SHM_OVERSUBSCRIBED_SLOT",
                                        "RMPI_COLL_SHM_OVERSUBSCRIBED_BCAST_DEEP",
                                        "RMPI_COLL_SITES"};
    if (strcmp(k->layer, "coll"))
        return 0;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (!strcmp(k->name, fixed[i]))
            return 0;
    return 1;
}

static int bad_before;
static int report_written;
/* RMPI_REPORT no longer holds its environment's value */ /* failures before MPI_Init, reported after it */
#define PRE_CHECK(cond, ...)                       \
    do {                                           \
        if (!(cond)) {                             \
            fprintf(stderr, "mpit: " __VA_ARGS__); \
            fprintf(stderr, "\n");                 \
            bad_before++;                          \
        }                                          \
    } while (0)
#define T_IS(call, code) PRE_CHECK((call) == (code), "%s:%d: %s is not %s", __FILE__, __LINE__, #call, #code)

static long long parse_size(const char *s)
{
    char *end;
    long long v = strtoll(s, &end, 0);
    switch (*end) {
    case 'k':
    case 'K': return v << 10;
    case 'm':
    case 'M': return v << 20;
    case 'g':
    case 'G': return v << 30;
    default: return v;
    }
}

static int parse_bool(const char *s)
{
    return !strcasecmp(s, "1") || !strcasecmp(s, "yes") || !strcasecmp(s, "true") || !strcasecmp(s, "on");
}

/* The choice's position in "a|b|c", -1 when absent. */
static int choice_index(const char *choices, const char *c)
{
    int i = 0;
    size_t l = strlen(c);
    for (const char *p = choices; *p; i++) {
        size_t n = strcspn(p, "|");
        if (n == l && !strncmp(p, c, l))
            return i;
        p += n + (p[n] == '|');
    }
    return -1;
}

static void check_cvars(void)
{
    int n = -1;
    T_IS(MPI_T_cvar_get_num(&n), MPI_SUCCESS);
    PRE_CHECK(n == NKNOBS, "%d cvars, knobs.def has %d rows", n, NKNOBS);
    for (int i = 0; i < n && i < NKNOBS; i++) {
        const struct knob *k = &knobs[i];
        char name[128], desc[1024];
        int nl = sizeof name, dl = sizeof desc, verb, bind, scope;
        MPI_Datatype dt;
        MPI_T_enum en;
        T_IS(MPI_T_cvar_get_info(i, name, &nl, &verb, &dt, &en, desc, &dl, &bind, &scope), MPI_SUCCESS);
        PRE_CHECK(!strcmp(name, k->name) && nl == (int)strlen(k->name) + 1, "cvar %d is %s (len %d), expected %s", i,
                  name, nl, k->name);
        PRE_CHECK(dl > 1, "%s has no description", name);
        PRE_CHECK(bind == MPI_T_BIND_NO_OBJECT, "%s bind %d", name, bind);
        int local = !strcmp(name, "RMPI_DEBUG") || !strcmp(name, "RMPI_REPORT"), all_eq = all_eq_knob(k);
        int writable = local || all_eq;
        PRE_CHECK(scope == (local    ? MPI_T_SCOPE_LOCAL
                            : all_eq ? MPI_T_SCOPE_ALL_EQ
                                     : MPI_T_SCOPE_READONLY),
                  "%s scope %d", name, scope);
        MPI_Datatype want = k->type == T_INT || k->type == T_COUNT || k->type == T_SIZE ? MPI_LONG_LONG
                            : k->type == T_FLOAT                                        ? MPI_DOUBLE
                            : k->type == T_STR                                          ? MPI_CHAR
                                                                                        : MPI_INT;
        PRE_CHECK(dt == want, "%s has the wrong datatype", name);
        PRE_CHECK((en != MPI_T_ENUM_NULL) == (k->type == T_ENUM), "%s: enumtype %s", name, en ? "set" : "null");
        int idx = -1;
        T_IS(MPI_T_cvar_get_index(k->name, &idx), MPI_SUCCESS);
        PRE_CHECK(idx == i, "MPI_T_cvar_get_index(%s) = %d, expected %d", k->name, idx, i);
        if (k->type == T_ENUM) {
            int num = 0;
            char ename[128];
            int el = sizeof ename;
            T_IS(MPI_T_enum_get_info(en, &num, ename, &el), MPI_SUCCESS);
            PRE_CHECK(!strcmp(ename, k->name), "enum of %s is named %s", k->name, ename);
            for (int j = 0; j < num; j++) {
                char item[64];
                int il = sizeof item, v = -1;
                T_IS(MPI_T_enum_get_item(en, j, &v, item, &il), MPI_SUCCESS);
                PRE_CHECK(v == j && choice_index(k->choices, item) == j, "%s item %d is %s = %d", k->name, j, item, v);
            }
            int want = 1;
            for (const char *p = k->choices; *p; p++)
                want += *p == '|';
            PRE_CHECK(num == want, "%s has %d items, knobs.def %d", k->name, num, want);
            int v;
            T_IS(MPI_T_enum_get_item(en, num, &v, NULL, NULL), MPI_T_ERR_INVALID_ITEM);
        }
        MPI_T_cvar_handle h;
        int count = 0;
        T_IS(MPI_T_cvar_handle_alloc(i, NULL, &h, &count), MPI_SUCCESS);
        const char *env = getenv(k->name);
        if (k->type == T_STR) {
            char *s = malloc((size_t)count);
            T_IS(MPI_T_cvar_read(h, s), MPI_SUCCESS);
            PRE_CHECK((int)strlen(s) + 1 == count, "%s: count %d for '%s'", name, count, s);
            PRE_CHECK(!strcmp(s, env ? env : k->dflt), "%s reads '%s'", name, s);
            free(s);
        } else {
            union {
                int i;
                long long ll;
                double d;
            } v;
            T_IS(MPI_T_cvar_read(h, &v), MPI_SUCCESS);
            const char *text = env ? env : k->dflt;
            PRE_CHECK(count == 1, "%s count %d", name, count);
            if (report_written && !strcmp(name, "RMPI_REPORT"))
                ; /* written through MPI_T: no longer the environment's value */
            else if (k->type == T_INT || k->type == T_SIZE)
                PRE_CHECK(v.ll == parse_size(text), "%s reads %lld, expected %s", name, v.ll, text);
            else if (k->type == T_COUNT) /* auto reads as 0 */
                PRE_CHECK(v.ll == (strcmp(text, "auto") ? parse_size(text) : 0), "%s reads %lld, expected %s", name,
                          v.ll, text);
            else if (k->type == T_FLOAT)
                PRE_CHECK(v.d == strtod(text, NULL), "%s reads %g, expected %s", name, v.d, text);
            else if (k->type == T_BOOL)
                PRE_CHECK(v.i == parse_bool(text), "%s reads %d, expected %s", name, v.i, text);
            else if (k->type == T_ENUM)
                PRE_CHECK(v.i == choice_index(k->choices, text), "%s reads %d, expected %s", name, v.i, text);
            if (!writable)
                T_IS(MPI_T_cvar_write(h, &v), MPI_T_ERR_CVAR_SET_NEVER);
            if (all_eq) { /* every rank writes the same: its own value back, and values refused */
                T_IS(MPI_T_cvar_write(h, &v), MPI_SUCCESS);
                union {
                    int i;
                    long long ll;
                    double d;
                } bad;
                if (k->type == T_ENUM) {
                    int num = 1;
                    for (const char *p = k->choices; *p; p++)
                        num += *p == '|';
                    bad.i = num;
                } else if (k->type == T_BOOL)
                    bad.i = 2;
                else if (k->type == T_FLOAT)
                    bad.d = -1.0;
                else
                    bad.ll = strstr(name, "CMA_PIECE") ? 100 : -1;
                T_IS(MPI_T_cvar_write(h, &bad), MPI_T_ERR_INVALID);
                union {
                    int i;
                    long long ll;
                    double d;
                } now;
                T_IS(MPI_T_cvar_read(h, &now), MPI_SUCCESS);
                PRE_CHECK(!memcmp(&now, &v, k->type == T_ENUM || k->type == T_BOOL ? sizeof(int) : sizeof(long long)),
                          "%s changed by a refused write", name);
            }
        }
        T_IS(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
        PRE_CHECK(h == MPI_T_CVAR_HANDLE_NULL, "handle_free did not reset the handle");
    }
}

static void check_categories(void)
{
    int n = -1, total_c = 0, total_p = 0, np = 0;
    T_IS(MPI_T_category_get_num(&n), MPI_SUCCESS);
    T_IS(MPI_T_pvar_get_num(&np), MPI_SUCCESS);
    PRE_CHECK(n == 12, "%d categories, expected one per layer", n);
    for (int c = 0; c < n; c++) {
        char name[64];
        int nl = sizeof name, nc, npv, ncat;
        T_IS(MPI_T_category_get_info(c, name, &nl, NULL, NULL, &nc, &npv, &ncat), MPI_SUCCESS);
        PRE_CHECK(!strcmp(name, layers[c]) && ncat == 0, "category %d is %s", c, name);
        int idx[128];
        T_IS(MPI_T_category_get_cvars(c, nc, idx), MPI_SUCCESS);
        for (int j = 0; j < nc; j++)
            PRE_CHECK(!strcmp(knobs[idx[j]].layer, name), "%s in category %s", knobs[idx[j]].name, name);
        T_IS(MPI_T_category_get_pvars(c, npv, idx), MPI_SUCCESS);
        int ci = -1;
        T_IS(MPI_T_category_get_index(name, &ci), MPI_SUCCESS);
        PRE_CHECK(ci == c, "category_get_index(%s) = %d", name, ci);
        total_c += nc, total_p += npv;
    }
    PRE_CHECK(total_c == NKNOBS && total_p == np, "categories hold %d cvars and %d pvars", total_c, total_p);
}

static void check_errors(void)
{
    int n, v;
    MPI_T_cvar_handle ch;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle ph;
    T_IS(MPI_T_cvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    T_IS(MPI_T_cvar_get_info(NKNOBS, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    T_IS(MPI_T_cvar_get_num(NULL), MPI_T_ERR_INVALID);
    T_IS(MPI_T_cvar_get_index("RMPI_NO_SUCH_KNOB", &n), MPI_T_ERR_INVALID_NAME);
    T_IS(MPI_T_cvar_get_index(NULL, &n), MPI_T_ERR_INVALID);
    T_IS(MPI_T_cvar_handle_alloc(NKNOBS, NULL, &ch, &n), MPI_T_ERR_INVALID_INDEX);
    T_IS(MPI_T_cvar_handle_alloc(0, NULL, NULL, &n), MPI_T_ERR_INVALID);
    T_IS(MPI_T_cvar_read((MPI_T_cvar_handle)&n, &v), MPI_T_ERR_INVALID_HANDLE);
    T_IS(MPI_T_cvar_write(MPI_T_CVAR_HANDLE_NULL, &v), MPI_T_ERR_INVALID_HANDLE);
    ch = (MPI_T_cvar_handle)&v;
    T_IS(MPI_T_cvar_handle_free(&ch), MPI_T_ERR_INVALID_HANDLE);
    T_IS(MPI_T_enum_get_info((MPI_T_enum)&n, &v, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    T_IS(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &v, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    T_IS(MPI_T_pvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
         MPI_T_ERR_INVALID_INDEX);
    T_IS(MPI_T_pvar_get_index("rmpi_frames_out", MPI_T_PVAR_CLASS_LEVEL, &n), MPI_T_ERR_INVALID_NAME);
    T_IS(MPI_T_pvar_session_create(NULL), MPI_T_ERR_INVALID);
    T_IS(MPI_T_pvar_handle_alloc(MPI_T_PVAR_SESSION_NULL, 0, NULL, &ph, &n), MPI_T_ERR_INVALID_SESSION);
    T_IS(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
    T_IS(MPI_T_pvar_handle_alloc(s, 9999, NULL, &ph, &n), MPI_T_ERR_INVALID_INDEX);
    T_IS(MPI_T_pvar_read(s, (MPI_T_pvar_handle)&n, &v), MPI_T_ERR_INVALID_HANDLE);
    T_IS(MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
    T_IS(MPI_T_pvar_start(s, (MPI_T_pvar_handle)&n), MPI_T_ERR_INVALID_HANDLE);
    int lvl;
    T_IS(MPI_T_pvar_get_index("rmpi_mr_entries", MPI_T_PVAR_CLASS_LEVEL, &lvl), MPI_SUCCESS);
    T_IS(MPI_T_pvar_handle_alloc(s, lvl, NULL, &ph, &n), MPI_SUCCESS);
    unsigned long long u = 0;
    T_IS(MPI_T_pvar_start(s, ph), MPI_T_ERR_PVAR_NO_STARTSTOP);
    T_IS(MPI_T_pvar_write(s, ph, &u), MPI_T_ERR_PVAR_NO_WRITE);
    T_IS(MPI_T_pvar_reset(s, ph), MPI_T_ERR_PVAR_NO_WRITE);
    T_IS(MPI_T_pvar_read(s, ph, NULL), MPI_T_ERR_INVALID);
    T_IS(MPI_T_pvar_read(s, ph, &u), MPI_SUCCESS);
    T_IS(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
    T_IS(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
    T_IS(MPI_T_pvar_session_free(&s), MPI_T_ERR_INVALID_SESSION);
    T_IS(MPI_T_category_get_info(12, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    T_IS(MPI_T_category_get_cvars(-1, 0, NULL), MPI_T_ERR_INVALID_INDEX);
    T_IS(MPI_T_category_get_index("nope", &n), MPI_T_ERR_INVALID_NAME);
    T_IS(MPI_T_event_get_num(&n), MPI_SUCCESS);
    PRE_CHECK(n == 0, "%d events", n);
    T_IS(MPI_T_event_get_info(0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
         MPI_T_ERR_INVALID_INDEX);
    T_IS(MPI_T_event_handle_free((MPI_T_event_registration)&n, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    T_IS(MPI_T_event_read((MPI_T_event_instance)&n, 0, &v), MPI_T_ERR_INVALID_HANDLE);
    T_IS(MPI_T_source_get_num(&n), MPI_SUCCESS);
    PRE_CHECK(n == 0, "%d sources", n);
}

/* A started counter grows with traffic between ranks; a stopped one does not; reset and write work. */
static void check_pvars(void)
{
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h, hc;
    int idx, n, cls, cont, ro;
    /* Alone, messages go to self, which the sums leave out (as RMPI_REPORT does): 0. */
    const char *which = mtest_size > 1 ? "rmpi_frame_bytes" : "rmpi_frames_out";
    T_IS(MPI_T_pvar_get_index(which, MPI_T_PVAR_CLASS_COUNTER, &idx), MPI_SUCCESS);
    T_IS(MPI_T_pvar_get_info(idx, NULL, NULL, NULL, &cls, NULL, NULL, NULL, NULL, NULL, &ro, &cont, NULL), MPI_SUCCESS);
    PRE_CHECK(cls == MPI_T_PVAR_CLASS_COUNTER && !cont && !ro, "%s: class %d continuous %d readonly %d", which, cls,
              cont, ro);
    T_IS(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
    T_IS(MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &n), MPI_SUCCESS);
    T_IS(MPI_T_pvar_handle_alloc(s, idx, NULL, &hc, &n), MPI_SUCCESS);
    PRE_CHECK(n == 1, "count %d", n);
    unsigned long long a = 1, b = 0, c = 0;
    T_IS(MPI_T_pvar_read(s, h, &a), MPI_SUCCESS);
    PRE_CHECK(a == 0, "%s counted %llu before start", which, a);
    T_IS(MPI_T_pvar_start(s, h), MPI_SUCCESS);
    char buf[4096] = {0};
    int peer = (mtest_rank + 1) % mtest_size, from = (mtest_rank + mtest_size - 1) % mtest_size;
    for (int i = 0; i < 4; i++) {
        MPI_Request r;
        /* the send goes first, so at one rank the message is unexpected */
        MTEST_OK(MPI_Isend(buf, sizeof buf, MPI_CHAR, peer, i, MPI_COMM_WORLD, &r));
        MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
        MTEST_OK(MPI_Recv(buf, sizeof buf, MPI_CHAR, from, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MTEST_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    }
    T_IS(MPI_T_pvar_read(s, h, &b), MPI_SUCCESS);
    if (mtest_size > 1)
        MTEST_CHECK(b > 0, "%s did not grow with traffic (%llu)", which, b);
    else
        MTEST_CHECK(b == 0, "%s counted %llu for messages to self", which, b);
    T_IS(MPI_T_pvar_read(s, hc, &c), MPI_SUCCESS);
    MTEST_CHECK(c == 0, "%s counted %llu while never started", which, c);
    T_IS(MPI_T_pvar_stop(s, h), MPI_SUCCESS);
    T_IS(MPI_T_pvar_read(s, h, &a), MPI_SUCCESS);
    MTEST_CHECK(a >= b, "%s went down at stop: %llu < %llu", which, a, b);
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
    MTEST_OK(MPI_Sendrecv(buf, sizeof buf, MPI_CHAR, peer, 9, buf, sizeof buf, MPI_CHAR, from, 9, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
    T_IS(MPI_T_pvar_read(s, h, &b), MPI_SUCCESS);
    MTEST_CHECK(a == b, "%s counted while stopped: %llu -> %llu", which, a, b);
    T_IS(MPI_T_pvar_readreset(s, h, &b), MPI_SUCCESS);
    T_IS(MPI_T_pvar_read(s, h, &b), MPI_SUCCESS);
    MTEST_CHECK(b == 0, "%s is %llu after readreset", which, b);
    unsigned long long w = 1000;
    T_IS(MPI_T_pvar_write(s, h, &w), MPI_SUCCESS);
    T_IS(MPI_T_pvar_read(s, h, &b), MPI_SUCCESS);
    MTEST_CHECK(b == 1000, "%s is %llu after writing 1000", which, b);
    T_IS(MPI_T_pvar_handle_free(s, &h), MPI_SUCCESS);
    T_IS(MPI_T_pvar_handle_free(s, &h), MPI_T_ERR_INVALID_HANDLE);
    T_IS(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
}

int main(int argc, char **argv)
{
    int provided, n;
    T_IS(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    T_IS(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    T_IS(MPI_T_init_thread(MPI_THREAD_SINGLE, NULL), MPI_T_ERR_INVALID);
    T_IS(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    T_IS(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided), MPI_SUCCESS);
    PRE_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    check_cvars();
    check_categories();
    check_errors();
    T_IS(MPI_T_finalize(), MPI_SUCCESS);
    T_IS(MPI_T_cvar_get_num(&n), MPI_SUCCESS); /* one init is still open */

    mtest_init(&argc, &argv);
    MTEST_CHECK(!bad_before, "%d MPI_T checks failed before MPI_Init", bad_before);
    bad_before = 0;
    check_pvars();
    char es[MPI_MAX_ERROR_STRING];
    int esl;
    MTEST_OK(MPI_Error_string(MPI_T_ERR_CVAR_SET_NEVER, es, &esl));
    MTEST_CHECK(strstr(es, "MPI_T_ERR_CVAR_SET_NEVER") != NULL, "MPI_Error_string(MPI_T_ERR_CVAR_SET_NEVER): %s", es);
    if (argc > 1 && !strcmp(argv[1], "report")) {
        int i, on = 1;
        MPI_T_cvar_handle h;
        T_IS(MPI_T_cvar_get_index("RMPI_REPORT", &i), MPI_SUCCESS);
        T_IS(MPI_T_cvar_handle_alloc(i, NULL, &h, &n), MPI_SUCCESS);
        T_IS(MPI_T_cvar_write(h, &on), MPI_SUCCESS);
        report_written = 1;
        on = 0;
        T_IS(MPI_T_cvar_read(h, &on), MPI_SUCCESS);
        PRE_CHECK(on == 1, "RMPI_REPORT reads %d after writing 1", on);
        T_IS(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
    }
    MTEST_CHECK(!bad_before, "%d MPI_T checks failed after MPI_Init", bad_before);
    T_IS(MPI_T_finalize(), MPI_SUCCESS);
    T_IS(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    int rc = mtest_finalize();

    /* After MPI_Finalize MPI_T still starts, and the counters keep what they counted. */
    bad_before = 0;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    int idx;
    unsigned long long v = 1;
    T_IS(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    check_cvars();
    T_IS(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
    T_IS(MPI_T_pvar_get_index("rmpi_frames_out", MPI_T_PVAR_CLASS_COUNTER, &idx), MPI_SUCCESS);
    T_IS(MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &n), MPI_SUCCESS);
    T_IS(MPI_T_pvar_start(s, h), MPI_SUCCESS);
    T_IS(MPI_T_pvar_read(s, h, &v), MPI_SUCCESS);
    PRE_CHECK(v == 0, "rmpi_frames_out moved after MPI_Finalize: %llu", v);
    T_IS(MPI_T_finalize(), MPI_SUCCESS);
    if (bad_before)
        fprintf(stderr, " Found %d errors after MPI_Finalize\n", bad_before);
    return rc ? rc : bad_before != 0;
}
