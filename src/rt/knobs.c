#include "rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

struct rmpi_knobs rmpi_knobs;

typedef struct knob_desc {
    const char *name, *type, *dflt, *layer, *doc;
    size_t offset;
} knob_desc_t;

static const knob_desc_t knob_table[] = {
#define KNOB(n, t, d, l, doc) {#n, #t, d, #l, doc, offsetof(struct rmpi_knobs, n)},
#include "knobs.def"
#undef KNOB
};

static int knobs_ready;

const char *rmpi_rt_env(const char *name)
{
    return getenv(name);
}

void rmpi_rt_setenv_default(const char *name, const char *value) { setenv(name, value, 0); }

static int parse_bool(const char *v, int *out)
{
    if (!strcmp(v, "1") || !strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcasecmp(v, "on"))
        *out = 1;
    else if (!strcmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcasecmp(v, "off"))
        *out = 0;
    else
        return -1;
    return 0;
}

/* Store text value v into knob k; returns -1 when v does not parse (k keeps its value). */
static int knob_set(const knob_desc_t *k, const char *v)
{
    char *field = (char *)&rmpi_knobs + k->offset;
    if (!strcmp(k->type, "BOOL")) {
        int b;
        if (parse_bool(v, &b))
            return -1;
        *(int *)field = b;
    } else if (!strcmp(k->type, "INT")) {
        char *end;
        long long x = strtoll(v, &end, 0);
        if (end == v || *end)
            return -1;
        *(long long *)field = x;
    } else if (!strcmp(k->type, "FLOAT")) {
        char *end;
        double x = strtod(v, &end);
        if (end == v || *end)
            return -1;
        *(double *)field = x;
    } else if (!strcmp(k->type, "SIZE")) {
        long long x = rmpi_parse_size(v);
        if (x < 0)
            return -1;
        *(long long *)field = x;
    } else {
        *(const char **)field = v;
    }
    return 0;
}

void rmpi_knobs_init(void)
{
    if (knobs_ready)
        return;
    knobs_ready = 1;
    for (size_t i = 0; i < RMPI_ARRAY_LEN(knob_table); i++)
        knob_set(&knob_table[i], knob_table[i].dflt);
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "RMPI_", 5))
            continue;
        const char *eq = strchr(*e, '=');
        if (!eq)
            continue;
        size_t nlen = (size_t)(eq - *e) - 5;
        const knob_desc_t *k = NULL;
        for (size_t i = 0; i < RMPI_ARRAY_LEN(knob_table); i++)
            if (strlen(knob_table[i].name) == nlen && !strncmp(knob_table[i].name, *e + 5, nlen))
                k = &knob_table[i];
        if (!k) {
            rmpi_warn("unknown variable %.*s ignored (rmpi_info --knobs lists the known ones).",
                      (int)(eq - *e), *e);
            continue;
        }
        if (knob_set(k, eq + 1))
            rmpi_warn("RMPI_%s=%s is not a valid %s value; keeping the default %s.", k->name, eq + 1,
                      k->type, k->dflt);
    }
}

int rmpi_knob_choice(const char *knob, const char *value, const char *choices)
{
    size_t vlen = strlen(value);
    int idx = 0;
    for (const char *p = choices; *p; idx++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == vlen && !strncmp(p, value, len))
            return idx;
        if (!bar)
            break;
        p = bar + 1;
    }
    rmpi_fatal("RMPI_%s=%s is not one of %s; set RMPI_%s to one of them.", knob, value, choices, knob);
}

long long rmpi_knob_scoped_size(const char *knob, const char *value, const char *scope, long long dflt)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", value);
    long long plain = -1;
    for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':');
        if (!colon) {
            plain = rmpi_parse_size(tok);
            if (plain < 0)
                rmpi_fatal("RMPI_%s=%s: '%s' is not a size (use e.g. 64k).", knob, value, tok);
            continue;
        }
        *colon = 0;
        if (strcmp(tok, scope))
            continue;
        long long v = rmpi_parse_size(colon + 1);
        if (v < 0)
            rmpi_fatal("RMPI_%s=%s: '%s' is not a size (use e.g. %s:64k).", knob, value, colon + 1, tok);
        return v;
    }
    return plain >= 0 ? plain : dflt;
}

void rmpi_knobs_print(void *file, int markdown)
{
    FILE *f = file;
    rmpi_knobs_init();
    if (markdown) {
        fprintf(f, "| variable | type | default | layer | what it does |\n|---|---|---|---|---|\n");
        for (size_t i = 0; i < RMPI_ARRAY_LEN(knob_table); i++) {
            const knob_desc_t *k = &knob_table[i];
            fprintf(f, "| RMPI_%s | %s | `%s` | %s | %s |\n", k->name, k->type, k->dflt, k->layer, k->doc);
        }
        return;
    }
    for (size_t i = 0; i < RMPI_ARRAY_LEN(knob_table); i++) {
        const knob_desc_t *k = &knob_table[i];
        const char *field = (const char *)&rmpi_knobs + k->offset;
        char val[256];
        if (!strcmp(k->type, "BOOL"))
            snprintf(val, sizeof val, "%d", *(const int *)field);
        else if (!strcmp(k->type, "FLOAT"))
            snprintf(val, sizeof val, "%g", *(const double *)field);
        else if (!strcmp(k->type, "INT") || !strcmp(k->type, "SIZE"))
            snprintf(val, sizeof val, "%lld", *(const long long *)field);
        else
            snprintf(val, sizeof val, "%s", *(const char *const *)field);
        fprintf(f, "RMPI_%-16s %-5s %-20s (default %s) %s\n", k->name, k->type, val, k->dflt, k->doc);
    }
}
