/* SPDX-License-Identifier: Apache-2.0 */
/* A gzip sink over another sink: exactly one gzip member (one deflate stream), because
 * browsers' DecompressionStream rejects concatenated members. */
#ifndef FX_GZIP_H
#define FX_GZIP_H

#include "fx_sink.h"

struct fx_gzip;

/* level: zlib level 1..9 (6 is a good default). Returns NULL when out of memory. */
struct fx_gzip *fx_gzip_new(struct fx_sink down, int level);
/* The same content, deflated on every core while the caller goes on writing (fx_gzpar below:
 * other bytes than fx_gzip_new's, the same once inflated, one member): for a large profile. The
 * downstream sink is written from its threads, until fx_gzip_finish or fx_gzip_free returns.
 * Without memory for its blocks or without threads it deflates in the caller's thread, as
 * fx_gzip_new's. Its sink offers swap (fx_sink.h) when threaded. */
struct fx_gzip *fx_gzip_new_threaded(struct fx_sink down, int level);
struct fx_sink fx_gzip_sink(struct fx_gzip *gz);
/* Ends the single member (Z_FINISH) and writes the trailer to `down`. */
int fx_gzip_finish(struct fx_gzip *gz);
void fx_gzip_free(struct fx_gzip *gz);

/* One member deflated on as many threads as cores (at most 4), pigz's way (gzip_par.c): blocks of
 * 512 KiB, each a raw deflate primed with the 32 KiB before it, joined by sync flushes. Other
 * bytes than fx_gzip_new's, the same once inflated, the same every run. The downstream sink is
 * written from the workers, in order, until fx_gzpar_finish or fx_gzpar_free returns. NULL
 * when out of memory or threads. Its sink offers swap (writing in place into its blocks). */
struct fx_gzpar;
struct fx_gzpar *fx_gzpar_new(struct fx_sink down, int level);
struct fx_sink fx_gzpar_sink(struct fx_gzpar *g);
/* The last block (Z_FINISH) and the trailer; the first error met, sticky. */
int fx_gzpar_finish(struct fx_gzpar *g);
/* Unfinished (the writer failed): the workers stop, nothing more goes downstream. */
void fx_gzpar_free(struct fx_gzpar *g);

#endif
