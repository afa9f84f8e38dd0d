/* SPDX-License-Identifier: Apache-2.0 */
/* A line reader for the small text files of /proc (maps, kallsyms) and their test copies: one
 * buffer from fx_malloc that grows to the longest line, line numbers for error messages, and
 * read errors told apart from the end of the file. Not signal-safe. */
#ifndef FX_LINES_H
#define FX_LINES_H

#include <stddef.h>
#include <stdio.h>

#include "fx_err.h"

/* A line longer than this is an error (FX_ERANGE), not a reason to take all memory. */
#define FX_LINES_MAX (1u << 20)

struct fx_lines {
    FILE *f;
    const char *path; /* borrowed, for messages */
    char *buf;
    size_t cap;
    size_t lineno; /* of the line last returned, from 1 */
};

/* Opens path; FX_EIO with "PATH: strerror" in eb when it cannot be opened. */
int fx_lines_open(struct fx_lines *l, const char *path, struct fx_errbuf *eb);

/* The next line without its '\n' in *line (valid until the next call), its length in *len.
 * FX_ENOTFOUND at the end; FX_EIO (read error), FX_ERANGE (longer than FX_LINES_MAX) or
 * FX_ENOMEM with eb naming the file and line. */
int fx_lines_next(struct fx_lines *l, char **line, size_t *len, struct fx_errbuf *eb);

/* Closes the file and frees the buffer; a zeroed struct is a no-op. */
void fx_lines_close(struct fx_lines *l);

#endif
