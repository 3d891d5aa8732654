/*
 * problem.c -- the findings catalogue's table and look-ups (problem.h).
 */
#include <stddef.h>

#include "problem.h"

static const struct scan_problem_info table[] = {
#define SCAN_X_ROW(nm, cd, sev, fl, msg, fix) {cd, #nm, sev, fl, msg, fix},
    SCAN_PROBLEMS(SCAN_X_ROW)
#undef SCAN_X_ROW
};

#define TABLE_SIZE (sizeof(table) / sizeof(table[0]))

const struct scan_problem_info *scan_problem_table(size_t *count)
{
    *count = TABLE_SIZE;
    return table;
}

const struct scan_problem_info *scan_problem_lookup(uint32_t code)
{
    size_t lo = 0, hi = TABLE_SIZE;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (table[mid].code == code)
            return &table[mid];
        if (table[mid].code < code)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const char *scan_severity_name(enum scan_severity s)
{
    switch (s) {
    case SCAN_SEV_INFO:
        return "info";
    case SCAN_SEV_WARNING:
        return "warning";
    case SCAN_SEV_ERROR:
        return "error";
    case SCAN_SEV_CRITICAL:
        return "critical";
    }
    return "unknown";
}

uint32_t scan_problem_table_verify(void)
{
    for (size_t i = 1; i < TABLE_SIZE; i++)
        if (table[i].code <= table[i - 1].code)
            return table[i].code;
    for (size_t i = 0; i < TABLE_SIZE; i++)
        if (table[i].message == NULL || table[i].repair == NULL || table[i].code == 0)
            return table[i].code ? table[i].code : 0xffffffffu;
    return 0;
}
