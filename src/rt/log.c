#include "rt.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int log_rank = -1;

void rmpi_log_set_rank(int rank) { log_rank = rank; }

static void vlog(const char *what, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (log_rank >= 0)
        fprintf(stderr, "[rmpi rank %d] %s%s\n", log_rank, what, msg);
    else
        fprintf(stderr, "[rmpi] %s%s\n", what, msg);
}

void rmpi_log(int level, const char *fmt, ...)
{
    if (level > rmpi_knobs.DEBUG)
        return;
    va_list ap;
    va_start(ap, fmt);
    vlog("", fmt, ap);
    va_end(ap);
}

void rmpi_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog("warning: ", fmt, ap);
    va_end(ap);
}

_Noreturn void rmpi_fatal(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (log_rank >= 0)
        fprintf(stderr, "[rmpi rank %d] error: %s\n", log_rank, msg);
    else
        fprintf(stderr, "[rmpi] error: %s\n", msg);
    fflush(stderr);
    rmpi_pmi_abort(1, NULL);
}
