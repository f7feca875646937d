/*
 * Progress hooks of the layers above the core (rmpi_core_hook_add/remove): with none the
 * hook pointer is NULL (the single branch point-to-point pays), with one it is that very
 * function, with several a dispatcher that calls each once per progress in registration
 * order and sums what they report; adding twice is a no-op; removing keeps the order of
 * the others; a hook may remove itself while the chain runs.
 */
#include "core/core.h"

#include "../unit_check.h"

static int calls[3], order[16], norder;
static int hook_a(void)
{
    calls[0]++, order[norder++] = 0;
    return 1;
}
static int hook_b(void)
{
    calls[1]++, order[norder++] = 1;
    return 2;
}
static int hook_self_removing(void)
{
    calls[2]++, order[norder++] = 2;
    rmpi_core_hook_remove(hook_self_removing);
    return 4;
}

int main(void)
{
    CHECK(rmpi_core_hook == NULL, "no hook registered at start");
    rmpi_core_hook_add(hook_a);
    CHECK(rmpi_core_hook == hook_a, "one hook: called directly");
    rmpi_core_hook_add(hook_a);
    CHECK(rmpi_core_hook == hook_a, "adding twice is a no-op");
    rmpi_core_hook_add(hook_b);
    CHECK(rmpi_core_hook != NULL && rmpi_core_hook != hook_a && rmpi_core_hook != hook_b, "two hooks: dispatcher");
    norder = 0;
    int n = rmpi_core_hook();
    CHECK(n == 3 && norder == 2 && order[0] == 0 && order[1] == 1, "dispatcher: n %d, calls %d", n, norder);
    rmpi_core_hook_add(hook_self_removing);
    norder = 0;
    n = rmpi_core_hook();
    CHECK(n == 7 && norder == 3 && order[2] == 2, "three hooks: n %d, calls %d", n, norder);
    norder = 0;
    n = rmpi_core_hook();
    CHECK(n == 3 && calls[2] == 1, "the self-removing hook ran once (n %d)", n);
    rmpi_core_hook_remove(hook_a);
    CHECK(rmpi_core_hook == hook_b, "back to one hook: called directly");
    rmpi_core_hook_remove(hook_a);
    CHECK(rmpi_core_hook == hook_b, "removing an absent hook changes nothing");
    rmpi_core_hook_remove(hook_b);
    CHECK(rmpi_core_hook == NULL, "none left: NULL again");
    return finish("core_hooks");
}
