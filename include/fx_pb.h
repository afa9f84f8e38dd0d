/* SPDX-License-Identifier: Apache-2.0 */
/* Protobuf wire format, the few lines both encoders need (pprof.c, otlp.c): varints, tags,
 * length-delimited fields and fixed64, appended to a struct fx_membuf. The first error is
 * sticky in *err: every call does nothing once *err != FX_OK, so an encoder checks once at its
 * end (docs/SETUP.md says why no protobuf library). */
#ifndef FX_PB_H
#define FX_PB_H

#include <stddef.h>
#include <stdint.h>

#include "fx_sink.h"

enum {
    FX_PB_VARINT = 0,
    FX_PB_FIXED64 = 1,
    FX_PB_LEN = 2
};

/* Raw bytes. */
void fx_pb_put(int *err, struct fx_membuf *b, const void *d, size_t n);
/* A base-128 varint (negative int64 take ten bytes, as protobuf encodes them). */
void fx_pb_varint(int *err, struct fx_membuf *b, uint64_t v);
void fx_pb_tag(int *err, struct fx_membuf *b, unsigned field, unsigned wire);
/* An int64/uint64/int32 field; zero is the default and is left out, as encoders do. */
void fx_pb_int(int *err, struct fx_membuf *b, unsigned field, int64_t v);
/* A fixed64 field (little-endian); zero left out. */
void fx_pb_fixed64(int *err, struct fx_membuf *b, unsigned field, uint64_t v);
/* A length-delimited field (bytes, string, message), written even when empty. */
void fx_pb_bytes(int *err, struct fx_membuf *b, unsigned field, const void *d, size_t n);
/* Moves `inner` into `b` as message field `field`, and empties it. */
void fx_pb_msg(int *err, struct fx_membuf *b, unsigned field, struct fx_membuf *inner);

#endif
