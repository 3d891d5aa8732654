/*
 * timestamp.c -- the 16-byte LanyFS timestamp (SPEC-§4).
 *
 * Fields are UTC; the offset beside them is the writer's local offset and
 * is informational only.  Readers here never apply it (the driver's decoder
 * adds it as an unsigned number, SPEC-§9.15).  "Unset" is judged on the named
 * fields alone, because the 2012 formatter leaves stack bytes in the
 * reserved ones (SPEC-§9.16).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lanyfs.h"

void lanyfs_ts_decode(struct lanyfs_ts *ts, const uint8_t *p)
{
    ts->year = lanyfs_get16(p + LANYFS_TS_YEAR);
    ts->month = p[LANYFS_TS_MONTH];
    ts->day = p[LANYFS_TS_DAY];
    ts->hour = p[LANYFS_TS_HOUR];
    ts->minute = p[LANYFS_TS_MINUTE];
    ts->second = p[LANYFS_TS_SECOND];
    ts->res7 = p[LANYFS_TS_RES7];
    ts->nsec = lanyfs_get32(p + LANYFS_TS_NSEC);
    ts->offset = (int16_t)lanyfs_get16(p + LANYFS_TS_OFFSET);
    ts->res14 = lanyfs_get16(p + LANYFS_TS_RES14);
}

void lanyfs_ts_encode(const struct lanyfs_ts *ts, uint8_t *p)
{
    lanyfs_put16(p + LANYFS_TS_YEAR, ts->year);
    p[LANYFS_TS_MONTH] = ts->month;
    p[LANYFS_TS_DAY] = ts->day;
    p[LANYFS_TS_HOUR] = ts->hour;
    p[LANYFS_TS_MINUTE] = ts->minute;
    p[LANYFS_TS_SECOND] = ts->second;
    p[LANYFS_TS_RES7] = ts->res7;
    lanyfs_put32(p + LANYFS_TS_NSEC, ts->nsec);
    lanyfs_put16(p + LANYFS_TS_OFFSET, (uint16_t)ts->offset);
    lanyfs_put16(p + LANYFS_TS_RES14, ts->res14);
}

bool lanyfs_ts_is_unset(const struct lanyfs_ts *ts)
{
    return ts->year == 0 && ts->month == 0 && ts->day == 0 && ts->hour == 0 && ts->minute == 0 &&
           ts->second == 0 && ts->nsec == 0 && ts->offset == 0;
}

bool lanyfs_ts_same(const struct lanyfs_ts *a, const struct lanyfs_ts *b)
{
    return a->year == b->year && a->month == b->month && a->day == b->day &&
           a->hour == b->hour && a->minute == b->minute && a->second == b->second &&
           a->nsec == b->nsec && a->offset == b->offset;
}

int lanyfs_ts_cmp(const struct lanyfs_ts *a, const struct lanyfs_ts *b)
{
    const uint32_t x[] = {a->year, a->month, a->day, a->hour, a->minute, a->second, a->nsec};
    const uint32_t y[] = {b->year, b->month, b->day, b->hour, b->minute, b->second, b->nsec};
    for (size_t i = 0; i < sizeof(x) / sizeof(x[0]); i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

static bool is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static unsigned days_in_month(int64_t y, unsigned m)
{
    static const unsigned char dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m == 2 && is_leap(y))
        return 29;
    return dim[m - 1];
}

bool lanyfs_ts_is_valid(const struct lanyfs_ts *ts)
{
    if (ts->year > 9999 || ts->month < 1 || ts->month > 12 || ts->day < 1)
        return false;
    if (ts->day > days_in_month(ts->year, ts->month))
        return false;
    return ts->hour <= 23 && ts->minute <= 59 && ts->second <= 60 && ts->nsec < 1000000000u;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
    *m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

void lanyfs_ts_from_time(struct lanyfs_ts *ts, time_t t, uint32_t nsec, int16_t offset_min)
{
    memset(ts, 0, sizeof(*ts));
    int64_t secs = (int64_t)t;
    int64_t days = secs / 86400;
    int64_t rem = secs % 86400;
    if (rem < 0) {
        rem += 86400;
        days--;
    }
    int64_t y;
    unsigned m, d;
    civil_from_days(days, &y, &m, &d);
    if (y < 0 || y > 9999) {
        y = y < 0 ? 0 : 9999;
    }
    ts->year = (uint16_t)y;
    ts->month = (uint8_t)m;
    ts->day = (uint8_t)d;
    ts->hour = (uint8_t)(rem / 3600);
    ts->minute = (uint8_t)(rem / 60 % 60);
    ts->second = (uint8_t)(rem % 60);
    ts->nsec = nsec < 1000000000u ? nsec : 0;
    ts->offset = offset_min;
}

bool lanyfs_ts_to_time(const struct lanyfs_ts *ts, time_t *out)
{
    if (!lanyfs_ts_is_valid(ts))
        return false;
    int64_t days = days_from_civil(ts->year, ts->month, ts->day);
    *out = (time_t)(days * 86400 + ts->hour * 3600 + ts->minute * 60 + ts->second);
    return true;
}

void lanyfs_ts_format(const struct lanyfs_ts *ts, char *buf, size_t len)
{
    if (lanyfs_ts_is_unset(ts)) {
        snprintf(buf, len, "unset");
        return;
    }
    char frac[16] = "";
    if (ts->nsec != 0)
        snprintf(frac, sizeof(frac), ".%09u", ts->nsec < 1000000000u ? ts->nsec : 999999999u);
    int n = snprintf(buf, len, "%04u-%02u-%02uT%02u:%02u:%02u%sZ", ts->year, ts->month, ts->day,
                     ts->hour, ts->minute, ts->second, frac);
    if (ts->offset != 0 && n > 0 && (size_t)n < len) {
        int off = ts->offset < 0 ? -ts->offset : ts->offset;
        snprintf(buf + n, len - (size_t)n, " (offset %c%02d:%02d)", ts->offset < 0 ? '-' : '+',
                 off / 60, off % 60);
    }
}

void lanyfs_ts_now(struct lanyfs_ts *ts)
{
    const char *sde = getenv("SOURCE_DATE_EPOCH");
    if (sde != NULL && *sde != '\0') {
        char *end;
        errno = 0;
        long long v = strtoll(sde, &end, 10);
        if (errno == 0 && *end == '\0') {
            lanyfs_ts_from_time(ts, (time_t)v, 0, 0);
            return;
        }
    }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct tm tm;
    int16_t off = 0;
    if (localtime_r(&now.tv_sec, &tm) != NULL)
        off = (int16_t)(tm.tm_gmtoff / 60);
    lanyfs_ts_from_time(ts, now.tv_sec, (uint32_t)now.tv_nsec, off);
}
