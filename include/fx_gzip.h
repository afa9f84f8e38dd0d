/* SPDX-License-Identifier: Apache-2.0 */
/* A gzip sink over another sink: exactly one gzip member (one deflate stream), because
 * browsers' DecompressionStream rejects concatenated members. */
#ifndef FX_GZIP_H
#define FX_GZIP_H

#include "fx_sink.h"

struct fx_gzip;

/* level: zlib level 1..9 (6 is a good default). Returns NULL when out of memory. */
struct fx_gzip *fx_gzip_new(struct fx_sink down, int level);
/* The same member, deflated on a thread of its own while the caller goes on writing (4 blocks
 * of 1 MiB between the two): for a large profile on more than one core. The downstream sink is
 * written from that thread, until fx_gzip_finish or fx_gzip_free returns. Without memory for
 * its blocks or without a thread it deflates in the caller's thread, as fx_gzip_new's. */
struct fx_gzip *fx_gzip_new_threaded(struct fx_sink down, int level);
struct fx_sink fx_gzip_sink(struct fx_gzip *gz);
/* Ends the single member (Z_FINISH) and writes the trailer to `down`. */
int fx_gzip_finish(struct fx_gzip *gz);
void fx_gzip_free(struct fx_gzip *gz);

#endif
