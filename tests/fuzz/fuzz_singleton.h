/* The harnesses run as a singleton (no process manager): whatever launched them must not
 * hand them a PMI connection meant for another process. */
#ifndef RMPI_FUZZ_SINGLETON_H
#define RMPI_FUZZ_SINGLETON_H

#include <stdlib.h>

static inline void fuzz_singleton(void)
{
    static const char *const vars[] = {"PMI_FD", "PMI_PORT", "PMI_RANK", "PMI_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        unsetenv(vars[i]);
}

#endif
