#include "mpiexec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A line longer than this is forwarded in pieces rather than held without bound. */
#define PARTIAL_FLUSH 65536

int mpx_write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                struct pollfd p = {.fd = fd, .events = POLLOUT};
                poll(&p, 1, 1000);
                continue;
            }
            return -1;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

void mpx_ostream_init(struct mpx_ostream *s, int fd, int out)
{
    memset(s, 0, sizeof *s);
    s->fd = fd;
    s->out = out;
    fcntl(fd, F_SETFL, O_NONBLOCK);
}

/* Forward buf[0..len) which holds whole lines (or, when final, a last partial one).
 * With a prefix, each line goes out in one write so lines never interleave. */
static void emit(struct mpx_job *job, struct mpx_rank *r, struct mpx_ostream *s, const char *buf, size_t len,
                 int add_newline)
{
    if (len == 0)
        return;
    if (!job->opts->prefix) {
        mpx_write_all(s->out, buf, len);
        return;
    }
    char prefix[32];
    size_t pl = (size_t)snprintf(prefix, sizeof prefix, "[%d] ", r->rank), lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += buf[i] == '\n';
    char *tmp = malloc(len + lines * pl + 1);
    if (!tmp) {
        mpx_write_all(s->out, buf, len);
        return;
    }
    size_t i = 0, o = 0;
    while (i < len) {
        const char *nl = memchr(buf + i, '\n', len - i);
        size_t l = nl ? (size_t)(nl - (buf + i)) + 1 : len - i;
        memcpy(tmp + o, prefix, pl);
        memcpy(tmp + o + pl, buf + i, l);
        o += pl + l;
        if (!nl && add_newline)
            tmp[o++] = '\n';
        i += l;
    }
    mpx_write_all(s->out, tmp, o);
    free(tmp);
}

static void flush_lines(struct mpx_job *job, struct mpx_rank *r, struct mpx_ostream *s, int final)
{
    size_t upto = 0;
    for (size_t i = s->len; i > 0; i--) {
        if (s->buf[i - 1] == '\n') {
            upto = i;
            break;
        }
    }
    if (final || (upto == 0 && s->len >= PARTIAL_FLUSH))
        upto = s->len;
    emit(job, r, s, s->buf, upto, 1);
    memmove(s->buf, s->buf + upto, s->len - upto);
    s->len -= upto;
}

int mpx_ostream_read(struct mpx_job *job, struct mpx_rank *r, struct mpx_ostream *s)
{
    for (;;) {
        if (s->cap - s->len < 4096) {
            size_t ncap = s->cap ? s->cap * 2 : 16384;
            char *nb = realloc(s->buf, ncap);
            if (!nb) {
                perror("mpiexec");
                exit(1);
            }
            s->buf = nb;
            s->cap = ncap;
        }
        ssize_t n = read(s->fd, s->buf + s->len, s->cap - s->len);
        if (n > 0) {
            s->len += (size_t)n;
            if (s->len >= PARTIAL_FLUSH)
                flush_lines(job, r, s, 0);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            flush_lines(job, r, s, 0);
            return 0;
        }
        mpx_ostream_close(job, r, s);
        return -1;
    }
}

void mpx_ostream_close(struct mpx_job *job, struct mpx_rank *r, struct mpx_ostream *s)
{
    if (s->fd < 0)
        return;
    flush_lines(job, r, s, 1);
    close(s->fd);
    s->fd = -1;
    free(s->buf);
    s->buf = NULL;
    s->len = s->cap = 0;
}
