/* SPDX-License-Identifier: Apache-2.0 */
/* Test fixture, never linked: a "handler" that breaks the signal-path rules on purpose, so the
 * CTest unit.signal_path_allowlist can prove its checker rejects malloc and snprintf. */
#include <stdio.h>
#include <stdlib.h>

void fx_bad_handler_fixture(int sig);

void fx_bad_handler_fixture(int sig)
{
    char *p = malloc(32);
    if (p != NULL)
        snprintf(p, 32, "%d", sig);
    free(p);
}
