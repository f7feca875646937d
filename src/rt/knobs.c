#include "rt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

struct rmpi_knobs rmpi_knobs;

static const rmpi_knob_desc_t knob_table[] = {
#define KNOB(n, t, d, l, ch, doc) {#n, RMPI_KNOB_##t, #t, d, #l, ch, doc, offsetof(struct rmpi_knobs, n)},
#include "knobs.def"
#undef KNOB
};

/* The text each knob's value was parsed from (environment, else default): what a message
 * about the value should quote. */
static const char *knob_text[RMPI_ARRAY_LEN(knob_table)];
static int knobs_ready;

const char *rmpi_rt_env(const char *name) { return getenv(name); }

void rmpi_rt_setenv_default(const char *name, const char *value) { setenv(name, value, 0); }

size_t rmpi_knobs_count(void) { return RMPI_ARRAY_LEN(knob_table); }

const rmpi_knob_desc_t *rmpi_knob_at(size_t i) { return i < RMPI_ARRAY_LEN(knob_table) ? &knob_table[i] : NULL; }

const char *rmpi_knob_text(const char *name)
{
    for (size_t i = 0; i < RMPI_ARRAY_LEN(knob_table); i++)
        if (!strcmp(knob_table[i].name, name))
            return knob_text[i] ? knob_text[i] : knob_table[i].dflt;
    return NULL;
}

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

/* Index of v among the '|'-separated choices, or -1. */
static int parse_choice(const char *v, const char *choices)
{
    size_t vlen = strlen(v);
    int idx = 0;
    for (const char *p = choices; *p; idx++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == vlen && !strncmp(p, v, len))
            return idx;
        if (!bar)
            break;
        p = bar + 1;
    }
    return -1;
}

/* Store text value v into knob k; returns -1 when v does not parse (k keeps its value). */
static int knob_set(const rmpi_knob_desc_t *k, const char *v)
{
    char *field = (char *)&rmpi_knobs + k->offset;
    char *end;
    switch (k->type) {
    case RMPI_KNOB_BOOL: return parse_bool(v, (int *)field);
    case RMPI_KNOB_INT: {
        errno = 0;
        long long x = strtoll(v, &end, 0);
        if (errno || end == v || *end)
            return -1;
        *(long long *)field = x;
        return 0;
    }
    case RMPI_KNOB_COUNT: {
        if (!strcmp(v, "auto")) {
            *(long long *)field = 0;
            return 0;
        }
        errno = 0;
        long long x = strtoll(v, &end, 10);
        if (errno || end == v || *end || x < 1)
            return -1;
        *(long long *)field = x;
        return 0;
    }
    case RMPI_KNOB_FLOAT: {
        errno = 0;
        double x = strtod(v, &end);
        if (errno || end == v || *end || x != x)
            return -1;
        *(double *)field = x;
        return 0;
    }
    case RMPI_KNOB_SIZE: {
        long long x = rmpi_parse_size(v);
        if (x < 0)
            return -1;
        *(long long *)field = x;
        return 0;
    }
    case RMPI_KNOB_ENUM: {
        int x = parse_choice(v, k->choices);
        /* an ENUM that grew out of a BOOL (choices "off|on|...") still takes 1, yes, ... */
        if (x < 0 && (strncmp(k->choices, "off|on|", 7) || parse_bool(v, &x)))
            return -1;
        *(int *)field = x;
        return 0;
    }
    case RMPI_KNOB_STR: *(const char **)field = v; return 0;
    }
    return -1;
}

/* Ends the process: value v of knob k does not parse. */
_Noreturn static void knob_bad(const rmpi_knob_desc_t *k, const char *v)
{
    switch (k->type) {
    case RMPI_KNOB_ENUM: rmpi_fatal("RMPI_%s=%s: expected one of %s.", k->name, v, k->choices);
    case RMPI_KNOB_BOOL: rmpi_fatal("RMPI_%s=%s: expected a boolean, one of 1|0|yes|no|true|false|on|off.", k->name, v);
    case RMPI_KNOB_INT: rmpi_fatal("RMPI_%s=%s: expected an integer (default %s).", k->name, v, k->dflt);
    case RMPI_KNOB_COUNT:
        rmpi_fatal("RMPI_%s=%s: expected auto or a count of at least 1 (default %s).", k->name, v, k->dflt);
    case RMPI_KNOB_FLOAT: rmpi_fatal("RMPI_%s=%s: expected a number (default %s).", k->name, v, k->dflt);
    case RMPI_KNOB_SIZE:
        rmpi_fatal("RMPI_%s=%s: expected a size in bytes with an optional k|m|g suffix (default %s).", k->name, v,
                   k->dflt);
    case RMPI_KNOB_STR: break;
    }
    rmpi_fatal("RMPI_%s=%s: bad value.", k->name, v);
}

void rmpi_knobs_init(void)
{
    if (knobs_ready)
        return;
    knobs_ready = 1;
    for (size_t i = 0; i < RMPI_ARRAY_LEN(knob_table); i++) {
        /* gen_knobs.py checked every default (ENUM) or the first run of any program shows it */
        if (knob_set(&knob_table[i], knob_table[i].dflt))
            knob_bad(&knob_table[i], knob_table[i].dflt);
        knob_text[i] = knob_table[i].dflt;
    }
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "RMPI_", 5))
            continue;
        const char *eq = strchr(*e, '=');
        if (!eq)
            continue;
        size_t nlen = (size_t)(eq - *e) - 5, i;
        for (i = 0; i < RMPI_ARRAY_LEN(knob_table); i++)
            if (strlen(knob_table[i].name) == nlen && !strncmp(knob_table[i].name, *e + 5, nlen))
                break;
        if (i == RMPI_ARRAY_LEN(knob_table)) {
            rmpi_warn("unknown variable %.*s ignored (rmpi_info --knobs lists the known ones).", (int)(eq - *e), *e);
            continue;
        }
        if (knob_set(&knob_table[i], eq + 1))
            knob_bad(&knob_table[i], eq + 1);
        knob_text[i] = eq + 1;
    }
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

/* The typed value of k as text (an ENUM as its choice). */
static void knob_format(const rmpi_knob_desc_t *k, char *buf, size_t len)
{
    const char *field = (const char *)&rmpi_knobs + k->offset;
    switch (k->type) {
    case RMPI_KNOB_BOOL: snprintf(buf, len, "%d", *(const int *)field); return;
    case RMPI_KNOB_COUNT:
        if (!*(const long long *)field) {
            snprintf(buf, len, "auto");
            return;
        }
        /* fall through */
    case RMPI_KNOB_INT:
    case RMPI_KNOB_SIZE: snprintf(buf, len, "%lld", *(const long long *)field); return;
    case RMPI_KNOB_FLOAT: snprintf(buf, len, "%g", *(const double *)field); return;
    case RMPI_KNOB_STR: snprintf(buf, len, "%s", *(const char *const *)field); return;
    case RMPI_KNOB_ENUM: {
        const char *p = k->choices;
        for (int idx = *(const int *)field; idx > 0 && p; idx--)
            p = strchr(p, '|') ? strchr(p, '|') + 1 : NULL;
        snprintf(buf, len, "%.*s", p ? (int)strcspn(p, "|") : 1, p ? p : "?");
        return;
    }
    }
    snprintf(buf, len, "?");
}

/* Markdown table cell: '|' would end the cell. */
static void md_cell(FILE *f, const char *text)
{
    for (const char *p = text; *p; p++) {
        if (*p == '|')
            fputc('\\', f);
        fputc(*p, f);
    }
}

int rmpi_knob_given(const char *knob)
{
    char name[64];
    snprintf(name, sizeof name, "RMPI_%s", knob);
    return getenv(name) != NULL;
}

void rmpi_knobs_print(void *file, int markdown)
{
    FILE *f = file;
    rmpi_knobs_init();
    if (markdown) {
        fprintf(f, "| variable | type | default | choices | layer | what it does |\n|---|---|---|---|---|---|\n");
        for (size_t i = 0; i < RMPI_ARRAY_LEN(knob_table); i++) {
            const rmpi_knob_desc_t *k = &knob_table[i];
            fprintf(f, "| RMPI_%s | %s | `", k->name, k->type_name);
            md_cell(f, k->dflt);
            fputs("` | ", f);
            if (*k->choices) {
                fputc('`', f);
                md_cell(f, k->choices);
                fputc('`', f);
            }
            fprintf(f, " | %s | ", k->layer);
            md_cell(f, k->doc);
            fputs(" |\n", f);
        }
        return;
    }
    for (size_t i = 0; i < RMPI_ARRAY_LEN(knob_table); i++) {
        const rmpi_knob_desc_t *k = &knob_table[i];
        char val[256];
        knob_format(k, val, sizeof val);
        fprintf(f, "RMPI_%-16s %-5s %-20s (default %s%s%s) %s\n", k->name, k->type_name, val, k->dflt,
                *k->choices ? "; " : "", k->choices, k->doc);
    }
}
