/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's one-line log on stderr. */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "base.h"

/* One line, one write(2), so concurrent lines from the JVM do not interleave with it. */
void fx_log(const char *fmt, ...)
{
    char line[1024];
    int n = snprintf(line, sizeof(line), "fxagent: ");
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof(line) - 2)
        len = sizeof(line) - 2;
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}
