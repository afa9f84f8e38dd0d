/* SPDX-License-Identifier: Apache-2.0 */
/* core/writer/pb.c: protobuf's wire format, byte for byte (the examples of protobuf.dev's
 * "Encoding" page: 150 as field 1 is 08 96 01; "testing" as field 2 is 12 07 74 65 73 74 69 6e
 * 67), negative int64 in ten bytes, fixed64 little-endian, zero left out, and the sticky error. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_err.h"
#include "fx_pb.h"

static void expect(const struct fx_membuf *b, const char *bytes, size_t n)
{
    ck_assert_uint_eq(b->len, n);
    ck_assert_int_eq(memcmp(b->data, bytes, n), 0);
}

START_TEST(test_pb_spec_examples)
{
    struct fx_membuf b = {0};
    int err = FX_OK;
    fx_pb_int(&err, &b, 1, 150);
    expect(&b, "\x08\x96\x01", 3);
    b.len = 0;
    fx_pb_bytes(&err, &b, 2, "testing", 7);
    expect(&b, "\x12\x07testing", 9);
    ck_assert_int_eq(err, FX_OK);
    fx_membuf_destroy(&b);
}
END_TEST

START_TEST(test_pb_zero_negative_fixed_and_messages)
{
    struct fx_membuf b = {0}, inner = {0};
    int err = FX_OK;
    fx_pb_int(&err, &b, 3, 0);
    fx_pb_fixed64(&err, &b, 3, 0);
    ck_assert_uint_eq(b.len, 0); /* defaults are left out */
    fx_pb_int(&err, &b, 1, -1);
    expect(&b, "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11);
    b.len = 0;
    fx_pb_fixed64(&err, &b, 5, 0x0102030405060708ull);
    expect(&b, "\x29\x08\x07\x06\x05\x04\x03\x02\x01", 9);
    b.len = 0;
    fx_pb_int(&err, &inner, 1, 2);
    fx_pb_msg(&err, &b, 4, &inner);
    expect(&b, "\x22\x02\x08\x02", 4);
    ck_assert_uint_eq(inner.len, 0); /* moved */
    b.len = 0;
    fx_pb_bytes(&err, &b, 1, "", 0); /* an empty message is still written */
    expect(&b, "\x0a\x00", 2);
    ck_assert_int_eq(err, FX_OK);
    fx_membuf_destroy(&b);
    fx_membuf_destroy(&inner);
}
END_TEST

START_TEST(test_pb_error_is_sticky)
{
    struct fx_membuf b = {0};
    int err = FX_OK;
    fx_alloc_fail_after(1);
    fx_pb_int(&err, &b, 1, 150);
    fx_alloc_fail_after(0);
    ck_assert_int_eq(err, FX_ENOMEM);
    fx_pb_int(&err, &b, 1, 150); /* memory is back, the error stays */
    ck_assert_int_eq(err, FX_ENOMEM);
    ck_assert_uint_eq(b.len, 0);
    fx_membuf_destroy(&b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pb");
    TCase *tc = tcase_create("wire");
    tcase_add_test(tc, test_pb_spec_examples);
    tcase_add_test(tc, test_pb_zero_negative_fixed_and_messages);
    tcase_add_test(tc, test_pb_error_is_sticky);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
