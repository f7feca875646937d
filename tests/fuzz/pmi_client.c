/*
 * libFuzzer harness of the process-manager client (src/rt/pmi.c): PMI-1 lines and PMI-2
 * frames as a broken or hostile server would send them. Byte 0 picks the wire (even: PMI-2
 * with PMI_JOBID, odd: PMI-1 over PMI_FD); the rest is everything the server says, written
 * into the other end of a socketpair that is then shut for writing. The client runs init,
 * put, get, fence, a name lookup and finalize on it: a bad reply must make a call fail
 * with a message, never crash, hang (the input's end is a closed connection, and
 * RMPI_PMI_TIMEOUT is 1 s) or exit.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rt/rt.h"
#include "fuzz_singleton.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    fuzz_singleton();
    unsetenv("PMIX_NAMESPACE");
    setenv("RMPI_PMI_TIMEOUT", "1", 1);
    rmpi_knobs_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 32768)
        return 0;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        return 0;
    int sndbuf = 1 << 20;
    setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    const char *p = (const char *)data + 1;
    size_t left = size - 1;
    while (left > 0) {
        ssize_t n = write(sv[1], p, left);
        if (n <= 0)
            break;
        p += n;
        left -= (size_t)n;
    }
    shutdown(sv[1], SHUT_WR);
    char fd[16];
    snprintf(fd, sizeof fd, "%d", sv[0]);
    setenv("PMI_FD", fd, 1);
    setenv("PMI_RANK", "0", 1);
    setenv("PMI_SIZE", "2", 1);
    if (data[0] % 2 == 0)
        setenv("PMI_JOBID", "fuzz.0", 1);
    else
        unsetenv("PMI_JOBID");
    rmpi_pm_info_t info;
    if (rmpi_pmi_init(&info) == 0) {
        char buf[256];
        rmpi_pmi_put("host-0", "a value with spaces");
        rmpi_pmi_get("host-1", buf, sizeof buf);
        rmpi_pmi_fence();
        rmpi_pmi_lookup("service", buf, sizeof buf);
        rmpi_pmi_finalize(); /* closes sv[0] */
    } else {
        close(sv[0]);
    }
    close(sv[1]);
    return 0;
}
