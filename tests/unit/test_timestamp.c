/*
 * test_timestamp.c -- the 16-byte timestamp (SPEC-§4): conversion to and
 * from time_t against the C library's gmtime_r, the Gregorian leap rules,
 * "unset" judged on the named fields only (SPEC-§9.16), validity ranges,
 * the ISO 8601 format, and SOURCE_DATE_EPOCH for "now".
 */
#include <string.h>
#include <time.h>

#include "unit.h"

static struct lanyfs_ts ts_of(unsigned y, unsigned mo, unsigned d, unsigned h, unsigned mi,
                              unsigned s)
{
    struct lanyfs_ts ts;
    memset(&ts, 0, sizeof(ts));
    ts.year = (uint16_t)y;
    ts.month = (uint8_t)mo;
    ts.day = (uint8_t)d;
    ts.hour = (uint8_t)h;
    ts.minute = (uint8_t)mi;
    ts.second = (uint8_t)s;
    return ts;
}

/* 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z. */
#define T_MIN (-62167219200LL)
#define T_MAX 253402300799LL

START_TEST(test_from_to_time_random)
{
    struct u_rng r = {0x71};
    for (int i = 0; i < 200000; i++) {
        int64_t t = T_MIN + (int64_t)u_below(&r, (uint64_t)(T_MAX - T_MIN + 1));
        if (i < 4)
            t = (int64_t[]){T_MIN, T_MAX, 0, -1}[i];
        struct lanyfs_ts ts;
        lanyfs_ts_from_time(&ts, (time_t)t, 123, -90);
        time_t back;
        U_ASSERT(lanyfs_ts_to_time(&ts, &back), "to_time refuses %lld", (long long)t);
        U_EQ(back, t);
        U_EQ(ts.nsec, 123);
        U_ASSERT(ts.offset == -90, "offset not kept");
        U_ASSERT(lanyfs_ts_is_valid(&ts), "from_time(%lld) invalid", (long long)t);
        /* The fields agree with the C library's UTC breakdown. */
        struct tm tm;
        time_t tt = (time_t)t;
        U_ASSERT(gmtime_r(&tt, &tm) != NULL, "gmtime_r");
        U_EQ(ts.year, tm.tm_year + 1900);
        U_EQ(ts.month, tm.tm_mon + 1);
        U_EQ(ts.day, tm.tm_mday);
        U_EQ(ts.hour, tm.tm_hour);
        U_EQ(ts.minute, tm.tm_min);
        U_EQ(ts.second, tm.tm_sec);
    }
}
END_TEST

/* lanyfs_ts_cmp orders as the seconds and nanoseconds do, whatever the
 * offsets; lanyfs_ts_same also compares the offset, never the reserved bytes. */
START_TEST(test_compare)
{
    struct u_rng r = {0x72};
    for (int i = 0; i < 100000; i++) {
        int64_t t1 = T_MIN + (int64_t)u_below(&r, (uint64_t)(T_MAX - T_MIN + 1));
        int64_t t2 = T_MIN + (int64_t)u_below(&r, (uint64_t)(T_MAX - T_MIN + 1));
        uint32_t n1 = (uint32_t)u_below(&r, 1000000000);
        uint32_t n2 = (uint32_t)u_below(&r, 1000000000);
        if (i % 3 == 0)
            t2 = t1;
        if (i % 5 == 0)
            n2 = n1;
        struct lanyfs_ts a, b;
        lanyfs_ts_from_time(&a, (time_t)t1, n1, (int16_t)u_below(&r, 100));
        lanyfs_ts_from_time(&b, (time_t)t2, n2, (int16_t)u_below(&r, 100));
        int want = t1 != t2 ? (t1 < t2 ? -1 : 1) : n1 != n2 ? (n1 < n2 ? -1 : 1) : 0;
        U_EQ(lanyfs_ts_cmp(&a, &b), want);
        U_EQ(lanyfs_ts_cmp(&b, &a), -want);
        b.res7 = 0x5a;
        b.res14 = 0x1234;
        U_EQ(lanyfs_ts_same(&a, &b), want == 0 && a.offset == b.offset);
    }
}
END_TEST

START_TEST(test_fixed_times)
{
    struct lanyfs_ts ts;
    lanyfs_ts_from_time(&ts, FX_TIME_EPOCH, 0, 0);
    struct lanyfs_ts want = ts_of(2026, 12, 3, 1, 2, 15);
    ck_assert_mem_eq(&ts, &want, sizeof(ts));
    time_t t;
    ck_assert(lanyfs_ts_to_time(&want, &t));
    ck_assert_int_eq(t, FX_TIME_EPOCH);
    lanyfs_ts_from_time(&ts, 0, 0, 0);
    want = ts_of(1970, 1, 1, 0, 0, 0);
    ck_assert_mem_eq(&ts, &want, sizeof(ts));
    lanyfs_ts_from_time(&ts, -1, 0, 0);
    want = ts_of(1969, 12, 31, 23, 59, 59);
    ck_assert_mem_eq(&ts, &want, sizeof(ts));
    /* 2^31 seconds: past the 32-bit limit. */
    lanyfs_ts_from_time(&ts, (time_t)2147483648LL, 0, 0);
    want = ts_of(2038, 1, 19, 3, 14, 8);
    ck_assert_mem_eq(&ts, &want, sizeof(ts));
    /* nsec out of range is dropped, not stored. */
    lanyfs_ts_from_time(&ts, 0, 1000000000u, 0);
    ck_assert_uint_eq(ts.nsec, 0);
    lanyfs_ts_from_time(&ts, 0, 999999999u, 0);
    ck_assert_uint_eq(ts.nsec, 999999999u);
}
END_TEST

START_TEST(test_leap_years)
{
    struct {
        unsigned year;
        bool leap;
    } cases[] = {{1900, false}, {2000, true}, {2023, false}, {2024, true}, {2100, false},
                 {2400, true},  {0, true},    {4, true},     {100, false}, {9996, true}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct lanyfs_ts ts = ts_of(cases[i].year, 2, 29, 12, 0, 0);
        ck_assert_msg(lanyfs_ts_is_valid(&ts) == cases[i].leap, "%u-02-29", cases[i].year);
        ts = ts_of(cases[i].year, 2, 28, 23, 59, 59);
        time_t t;
        ck_assert(lanyfs_ts_to_time(&ts, &t));
        struct lanyfs_ts next;
        lanyfs_ts_from_time(&next, t + 1, 0, 0);
        struct lanyfs_ts want = cases[i].leap ? ts_of(cases[i].year, 2, 29, 0, 0, 0)
                                              : ts_of(cases[i].year, 3, 1, 0, 0, 0);
        ck_assert_msg(memcmp(&next, &want, sizeof(want)) == 0, "day after %u-02-28",
                      cases[i].year);
        ts = ts_of(cases[i].year, 2, 30, 0, 0, 0);
        ck_assert(!lanyfs_ts_is_valid(&ts));
    }
    /* Days in every month of a common and a leap year. */
    const unsigned dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    for (unsigned m = 1; m <= 12; m++) {
        struct lanyfs_ts ok = ts_of(2023, m, dim[m - 1], 0, 0, 0);
        struct lanyfs_ts bad = ts_of(2023, m, dim[m - 1] + 1, 0, 0, 0);
        ck_assert(lanyfs_ts_is_valid(&ok));
        ck_assert(!lanyfs_ts_is_valid(&bad));
    }
    /* 2024 has 366 days. */
    struct lanyfs_ts a = ts_of(2024, 1, 1, 0, 0, 0), b = ts_of(2025, 1, 1, 0, 0, 0);
    time_t ta, tb;
    ck_assert(lanyfs_ts_to_time(&a, &ta) && lanyfs_ts_to_time(&b, &tb));
    ck_assert_int_eq(tb - ta, 366 * 86400);
}
END_TEST

START_TEST(test_validity)
{
    struct lanyfs_ts ts = ts_of(2026, 12, 3, 1, 2, 15);
    ck_assert(lanyfs_ts_is_valid(&ts));
    time_t t;
    struct lanyfs_ts bad;
    bad = ts;
    bad.month = 0;
    ck_assert(!lanyfs_ts_is_valid(&bad) && !lanyfs_ts_to_time(&bad, &t));
    bad = ts;
    bad.month = 13;
    ck_assert(!lanyfs_ts_is_valid(&bad) && !lanyfs_ts_to_time(&bad, &t));
    bad = ts;
    bad.day = 0;
    ck_assert(!lanyfs_ts_is_valid(&bad));
    bad = ts;
    bad.hour = 24;
    ck_assert(!lanyfs_ts_is_valid(&bad));
    bad = ts;
    bad.minute = 60;
    ck_assert(!lanyfs_ts_is_valid(&bad));
    bad = ts;
    bad.second = 61;
    ck_assert(!lanyfs_ts_is_valid(&bad));
    bad = ts;
    bad.nsec = 1000000000u;
    ck_assert(!lanyfs_ts_is_valid(&bad));
    bad = ts;
    bad.year = 10000;
    ck_assert(!lanyfs_ts_is_valid(&bad));
    /* A leap second is valid; as a count it is the next minute's :00. */
    struct lanyfs_ts leap = ts_of(2016, 12, 31, 23, 59, 60);
    ck_assert(lanyfs_ts_is_valid(&leap));
    struct lanyfs_ts next = ts_of(2017, 1, 1, 0, 0, 0);
    time_t tl, tn;
    ck_assert(lanyfs_ts_to_time(&leap, &tl) && lanyfs_ts_to_time(&next, &tn));
    ck_assert_int_eq(tl, tn);
    /* Reserved bytes and the offset do not change validity or the time. */
    struct lanyfs_ts o = ts;
    o.res7 = 0xAA;
    o.res14 = 0xBBBB;
    o.offset = -600;
    ck_assert(lanyfs_ts_is_valid(&o));
    time_t t1, t2;
    ck_assert(lanyfs_ts_to_time(&ts, &t1) && lanyfs_ts_to_time(&o, &t2));
    ck_assert_int_eq(t1, t2);
}
END_TEST

START_TEST(test_unset)
{
    struct lanyfs_ts ts;
    memset(&ts, 0, sizeof(ts));
    ck_assert(lanyfs_ts_is_unset(&ts));
    /* Garbage in the reserved bytes 7, 14 and 15 keeps it unset. */
    uint8_t raw[16] = {0};
    raw[7] = 0x5A;
    raw[14] = 0xC3;
    raw[15] = 0x01;
    lanyfs_ts_decode(&ts, raw);
    ck_assert(lanyfs_ts_is_unset(&ts));
    char buf[64];
    lanyfs_ts_format(&ts, buf, sizeof(buf));
    ck_assert_str_eq(buf, "unset");
    /* Any named byte non-zero makes it set. */
    const int named[] = {0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13};
    for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
        uint8_t b[16];
        memcpy(b, raw, 16);
        b[named[i]] = 1;
        lanyfs_ts_decode(&ts, b);
        ck_assert_msg(!lanyfs_ts_is_unset(&ts), "byte %d set but still unset", named[i]);
    }
    /* An unset timestamp is not a valid date either. */
    memset(&ts, 0, sizeof(ts));
    ck_assert(!lanyfs_ts_is_valid(&ts));
}
END_TEST

START_TEST(test_format)
{
    char buf[64];
    struct lanyfs_ts ts = ts_of(2026, 12, 3, 1, 2, 15);
    lanyfs_ts_format(&ts, buf, sizeof(buf));
    ck_assert_str_eq(buf, "2026-12-03T01:02:15Z");
    ts.nsec = 5;
    lanyfs_ts_format(&ts, buf, sizeof(buf));
    ck_assert_str_eq(buf, "2026-12-03T01:02:15.000000005Z");
    ts.nsec = 0;
    ts.offset = 60;
    lanyfs_ts_format(&ts, buf, sizeof(buf));
    ck_assert_str_eq(buf, "2026-12-03T01:02:15Z (offset +01:00)");
    ts.offset = -330;
    lanyfs_ts_format(&ts, buf, sizeof(buf));
    ck_assert_str_eq(buf, "2026-12-03T01:02:15Z (offset -05:30)");
    ts = ts_of(0, 1, 1, 0, 0, 0);
    lanyfs_ts_format(&ts, buf, sizeof(buf));
    ck_assert_str_eq(buf, "0000-01-01T00:00:00Z");
    ts = ts_of(9999, 12, 31, 23, 59, 60);
    ts.nsec = 999999999u;
    ts.offset = -32768;
    lanyfs_ts_format(&ts, buf, 40);
    ck_assert_uint_lt(strlen(buf), 40);
    ck_assert(strncmp(buf, "9999-12-31T23:59:60.999999999Z", 30) == 0);
    /* Out-of-range fields from a damaged disk still print, bounded. */
    memset(&ts, 0xFF, sizeof(ts));
    lanyfs_ts_format(&ts, buf, sizeof(buf));
    ck_assert_uint_lt(strlen(buf), sizeof(buf));
    /* A small buffer is cut and terminated. */
    char small[8];
    memset(small, 'x', sizeof(small));
    ts = ts_of(2026, 12, 3, 1, 2, 15);
    lanyfs_ts_format(&ts, small, sizeof(small));
    ck_assert_str_eq(small, "2026-12");
}
END_TEST

START_TEST(test_now_source_date_epoch)
{
    setenv("SOURCE_DATE_EPOCH", "1796259735", 1);
    struct lanyfs_ts ts, want;
    lanyfs_ts_now(&ts);
    lanyfs_ts_from_time(&want, FX_TIME_EPOCH, 0, 0);
    ck_assert_mem_eq(&ts, &want, sizeof(ts));
    ck_assert_int_eq(ts.offset, 0);
    /* Garbage falls back to the clock: a valid, recent time. */
    setenv("SOURCE_DATE_EPOCH", "12abc", 1);
    lanyfs_ts_now(&ts);
    ck_assert(lanyfs_ts_is_valid(&ts));
    ck_assert_uint_ge(ts.year, 2024);
    unsetenv("SOURCE_DATE_EPOCH");
    lanyfs_ts_now(&ts);
    ck_assert(lanyfs_ts_is_valid(&ts));
    time_t t, now = time(NULL);
    ck_assert(lanyfs_ts_to_time(&ts, &t));
    ck_assert_int_le(t > now ? t - now : now - t, 5);
}
END_TEST

static Suite *timestamp_suite(void)
{
    Suite *s = suite_create("timestamp");
    TCase *tc = tcase_create("timestamp");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_from_to_time_random);
    tcase_add_test(tc, test_compare);
    tcase_add_test(tc, test_fixed_times);
    tcase_add_test(tc, test_leap_years);
    tcase_add_test(tc, test_validity);
    tcase_add_test(tc, test_unset);
    tcase_add_test(tc, test_format);
    tcase_add_test(tc, test_now_source_date_epoch);
    suite_add_tcase(s, tc);
    return s;
}

U_MAIN(timestamp_suite)
