/*
 * The PMI wire's word splitting, one implementation for the client (src/rt/pmi.c) and the
 * server (tools/mpiexec/pmi_server.c), so the two cannot drift apart.
 * PMI-1: a line of "key=value" words separated by blanks. PMI-2: a frame body of
 * "key=value;" pairs (docs/wire/pmi.md).
 */
#include "util.h"

#include <string.h>

static void add_word(rmpi_pmi_words_t *w, char *tok)
{
    char *eq = strchr(tok, '=');
    if (eq)
        *eq = '\0';
    w->key[w->n] = tok;
    w->val[w->n] = eq ? eq + 1 : tok + strlen(tok);
    w->n++;
}

int rmpi_pmi_split(char *line, rmpi_pmi_words_t *w)
{
    char *save = NULL;
    w->n = 0;
    for (char *t = strtok_r(line, RMPI_PMI_BLANKS, &save); t; t = strtok_r(NULL, RMPI_PMI_BLANKS, &save)) {
        if (w->n == RMPI_PMI_MAX_WORDS)
            return -1;
        add_word(w, t);
    }
    return 0;
}

int rmpi_pmi2_split(char *body, rmpi_pmi_words_t *w)
{
    w->n = 0;
    char *p = body;
    while (*p) {
        char *semi = strchr(p, ';');
        if (!semi || w->n == RMPI_PMI_MAX_WORDS)
            return -1;
        *semi = '\0';
        if (!strchr(p, '='))
            return -1;
        add_word(w, p);
        p = semi + 1;
    }
    return 0;
}

const char *rmpi_pmi_word(const rmpi_pmi_words_t *w, const char *key)
{
    for (int i = 0; i < w->n; i++)
        if (strcmp(w->key[i], key) == 0)
            return w->val[i];
    return NULL;
}
