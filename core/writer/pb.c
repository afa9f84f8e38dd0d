/* SPDX-License-Identifier: Apache-2.0 */
/* Protobuf wire format (fx_pb.h): what pprof.c and otlp.c share. */
#include "fx_pb.h"

#include "fx_err.h"

void fx_pb_put(int *err, struct fx_membuf *b, const void *d, size_t n)
{
    if (*err == FX_OK)
        *err = fx_membuf_sink(b).write(b, d, n);
}

void fx_pb_varint(int *err, struct fx_membuf *b, uint64_t v)
{
    unsigned char out[10];
    size_t n = 0;
    do {
        out[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    fx_pb_put(err, b, out, n);
}

void fx_pb_tag(int *err, struct fx_membuf *b, unsigned field, unsigned wire)
{
    fx_pb_varint(err, b, (uint64_t)field << 3 | wire);
}

void fx_pb_int(int *err, struct fx_membuf *b, unsigned field, int64_t v)
{
    if (v == 0)
        return;
    fx_pb_tag(err, b, field, FX_PB_VARINT);
    fx_pb_varint(err, b, (uint64_t)v);
}

void fx_pb_fixed64(int *err, struct fx_membuf *b, unsigned field, uint64_t v)
{
    if (v == 0)
        return;
    unsigned char le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (unsigned char)(v >> (8 * i));
    fx_pb_tag(err, b, field, FX_PB_FIXED64);
    fx_pb_put(err, b, le, sizeof le);
}

void fx_pb_bytes(int *err, struct fx_membuf *b, unsigned field, const void *d, size_t n)
{
    fx_pb_tag(err, b, field, FX_PB_LEN);
    fx_pb_varint(err, b, n);
    fx_pb_put(err, b, d, n);
}

void fx_pb_msg(int *err, struct fx_membuf *b, unsigned field, struct fx_membuf *inner)
{
    fx_pb_bytes(err, b, field, inner->data, inner->len);
    inner->len = 0;
}
