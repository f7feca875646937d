/* The template provider (src/net/template) against the provider contract (net.h): two
 * ranks in this process; frames copied at send and delivered in order only inside the
 * receiver's progress; emulated RDMA checked against the target's registrations, completed
 * only inside the initiator's progress with both timestamps; rmpi_net_ops_check accepts it
 * and refuses a wrong version or a missing operation, naming them. */
#include "net/net.h"

#include <errno.h>
#include <string.h>

#include "../unit_check.h"

typedef struct seen {
    int rank, from;
    size_t len;
    char data[64];
} seen_t;
static seen_t seen[16];
static int nseen;
static int in_post; /* set while a posting call runs: no callback may happen then */

static void frame_at(int rank, rmpi_rail_t *rail, int peer, const void *frame, size_t len)
{
    CHECK(!in_post, "on_frame ran inside a posting call");
    if (nseen < 16 && len <= sizeof seen[0].data) {
        seen[nseen] = (seen_t){rank, peer, len, {0}};
        memcpy(seen[nseen++].data, frame, len);
    }
}
static void frame0(rmpi_rail_t *rail, int peer, const void *frame, size_t len) { frame_at(0, rail, peer, frame, len); }
static void frame1(rmpi_rail_t *rail, int peer, const void *frame, size_t len) { frame_at(1, rail, peer, frame, len); }
static void lost(rmpi_rail_t *rail, int peer, const char *why) { CHECK(0, "peer %d lost: %s", peer, why); }

static int completed;
static void op_done(rmpi_net_op_t *op)
{
    CHECK(!in_post, "op->complete ran inside a posting call");
    completed++;
}

static void check_ops(void)
{
    char why[256];
    CHECK(rmpi_net_ops_check(&rmpi_template_ops, why, sizeof why) == 0, "template refused: %s", why);
    struct rmpi_net_ops bad = rmpi_template_ops;
    bad.version = RMPI_NET_OPS_VERSION + 1;
    CHECK(rmpi_net_ops_check(&bad, why, sizeof why) == -1 && strstr(why, "provider template") && strstr(why, "version"),
          "a wrong version is accepted or not named: %s", why);
    bad = rmpi_template_ops;
    bad.send = NULL;
    CHECK(rmpi_net_ops_check(&bad, why, sizeof why) == -1 && strstr(why, "lacks send"), "missing send: %s", why);
    bad = rmpi_template_ops;
    bad.peer_add = NULL;
    bad.card = (int (*)(rmpi_rail_t *, char *, size_t))0x1;
    CHECK(rmpi_net_ops_check(&bad, why, sizeof why) == -1 && strstr(why, "card/peer_add"), "card alone: %s", why);
}

int main(void)
{
    check_ops();
    rmpi_net_env_t env0 = {.rank = 0, .size = 2, .jobid = "t", .on_frame = frame0, .on_peer_lost = lost};
    rmpi_net_env_t env1 = env0;
    env1.rank = 1;
    env1.on_frame = frame1;
    rmpi_rail_t *r0, *r1;
    const struct rmpi_net_ops *ops = &rmpi_template_ops;
    CHECK(ops->open(&env0, &r0, 1) == 1 && ops->open(&env1, &r1, 1) == 1, "open");
    CHECK(ops->open(&env1, &r1, 1) == 0, "a second rank 1 in one process must be refused (0 rails)");
    CHECK(ops->reaches(r0, 1) && ops->reaches(r1, 0), "the two ranks must reach each other");
    CHECK(!ops->reaches(r0, 0) && !ops->reaches(r0, 2) && !ops->reaches(r1, 1), "self and outsiders are not reached");

    /* frames: copied at send, in order, only inside the receiver's progress */
    char a[8] = "head", b[16] = "payload-1";
    for (int k = 0; k < 3; k++) {
        struct iovec iov[2] = {{a, 4}, {b, strlen(b)}};
        in_post = 1;
        CHECK(ops->send(r0, 1, iov, 2) == 0, "send %d", k);
        in_post = 0;
        b[8] = (char)('2' + k); /* reuse the buffer at once */
    }
    CHECK(nseen == 0, "frames delivered before progress");
    CHECK(ops->progress(r0) == 0, "the sender's rail has nothing to deliver");
    CHECK(ops->progress(r1) == 3 && nseen == 3, "3 frames at rank 1's progress, got %d", nseen);
    for (int k = 0; k < nseen; k++) {
        char want[32];
        snprintf(want, sizeof want, "headpayload-%d", k + 1);
        CHECK(seen[k].rank == 1 && seen[k].from == 0 && seen[k].len == strlen(want) &&
                  !memcmp(seen[k].data, want, seen[k].len),
              "frame %d: rank %d from %d '%.*s', want '%s'", k, seen[k].rank, seen[k].from, (int)seen[k].len,
              seen[k].data, want);
    }

    /* emulated RDMA on rank 1's registered buffer */
    char target[256], local[256];
    memset(target, 't', sizeof target);
    rmpi_mr_t mr;
    CHECK(ops->mr_reg(r1, target, sizeof target, &mr) == 0 && mr.rkey != 0, "mr_reg");
    memset(local, 'L', sizeof local);
    rmpi_net_op_t put = {.complete = op_done}, get = {.complete = op_done};
    rmpi_net_op_t badkey = {.complete = op_done}, outside = {.complete = op_done};
    in_post = 1;
    CHECK(ops->put(r0, 1, local, 100, (uint64_t)(uintptr_t)(target + 10), mr.rkey, &put) == 0, "put");
    CHECK(ops->get(r0, 1, local + 200, 20, (uint64_t)(uintptr_t)target, mr.rkey, &get) == 0, "get");
    CHECK(ops->get(r0, 1, local, 8, (uint64_t)(uintptr_t)target, mr.rkey ^ 1, &badkey) == 0, "get, bad key");
    CHECK(ops->put(r0, 1, local, 8, (uint64_t)(uintptr_t)(target + 250), mr.rkey, &outside) == 0, "put, outside");
    in_post = 0;
    CHECK(completed == 0, "RDMA completed before progress");
    CHECK(ops->progress(r1) == 0, "the target's rail has no completions");
    CHECK(ops->progress(r0) == 4 && completed == 4, "4 completions at rank 0's progress, got %d", completed);
    CHECK(put.status == 0 && get.status == 0, "put %d get %d", put.status, get.status);
    CHECK(badkey.status == -EFAULT && outside.status == -EFAULT, "bad key %d, outside %d: want -EFAULT", badkey.status,
          outside.status);
    CHECK(put.t_post && put.t_done >= put.t_post && get.t_done >= get.t_post, "timestamps");
    CHECK(put.rail == r0 && get.rail == r0, "op->rail");
    CHECK(target[9] == 't' && target[10] == 'L' && target[109] == 'L' && target[110] == 't', "put landed");
    /* the get was issued after the put on the same rail: it reads the put's bytes */
    CHECK(local[200] == 't' && local[209] == 't' && local[210] == 'L' && local[219] == 'L' && local[220] == 'L',
          "get landed after the put");
    CHECK(target[250] == 't', "a refused put wrote");
    ops->mr_dereg(r1, &mr);
    rmpi_net_op_t gone = {.complete = op_done};
    CHECK(ops->get(r0, 1, local, 8, (uint64_t)(uintptr_t)target, mr.rkey, &gone) == 0 && ops->progress(r0) == 1 &&
              gone.status == -EFAULT,
          "a deregistered key must be refused: %d", gone.status);

    ops->close(r0);
    ops->close(r1);
    return finish("net/template");
}
