/* SPDX-License-Identifier: Apache-2.0 */
/* Test helper of the native-frame unit tests (textmap, kallsyms, elfsym): writes given text to
 * a fresh temporary file whose path the caller unlinks, so each test owns its synthetic input. */
#ifndef UNIT_TMPFILE_H
#define UNIT_TMPFILE_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Writes len bytes of text into a new file; its path goes into path (at least 64 bytes). */
static inline void unit_tmpfile_write(char *path, const char *text, size_t len)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, 64, "%s/fxunitXXXXXX", dir && strlen(dir) < 40 ? dir : "/tmp");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, text + done, len - done);
        ck_assert_int_gt(n, 0);
        done += (size_t)n;
    }
    ck_assert_int_eq(close(fd), 0);
}

static inline void unit_tmpfile_str(char *path, const char *text)
{
    unit_tmpfile_write(path, text, strlen(text));
}

#endif
