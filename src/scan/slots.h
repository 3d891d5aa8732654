/*
 * slots.h -- the slot arrays of chain blocks and extenders, decoded fast.
 *
 * Chain blocks and extenders hold arrays of addrlen-byte little-endian
 * block numbers (SPEC-§6, §7).  The scanner looks at every slot of every
 * such block more than once (the walks, the sweep's probes, the torn-write
 * check), so these helpers decode a slot with one load for the address
 * length at hand instead of a loop over its bytes, and find where the
 * non-zero slots of an array end without decoding the zero tail (most
 * extenders of small files map one or two blocks).
 *
 * Each takes p, the first byte of slot 0, and the address length a
 * (1..8); they read only the bytes of the slots asked for.
 */
#pragma once

#include <endian.h>
#include <stdint.h>
#include <string.h>

/* Slot i of the array at p. */
static inline uint64_t sc_slot(const uint8_t *p, unsigned a, uint32_t i)
{
    const uint8_t *s = p + (size_t)i * a;
    uint64_t v = 0;
    uint32_t v32 = 0;
    uint16_t v16;
    switch (a) {
    case 1:
        return s[0];
    case 2:
        memcpy(&v16, s, 2);
        return le16toh(v16);
    case 3:
        memcpy(&v32, s, 3);
        return le32toh(v32);
    case 4:
        memcpy(&v32, s, 4);
        return le32toh(v32);
    case 5:
        memcpy(&v, s, 5);
        break;
    case 6:
        memcpy(&v, s, 6);
        break;
    case 7:
        memcpy(&v, s, 7);
        break;
    case 8:
        memcpy(&v, s, 8);
        break;
    default:
        return 0;
    }
    return le64toh(v);
}

/*
 * One past the last non-zero slot of the count slots at p (0 when all are
 * zero): the slots from there on are empty.  Words of zeros are skipped
 * from the end without decoding any slot.
 */
static inline uint32_t sc_slots_end(const uint8_t *p, unsigned a, uint32_t count)
{
    size_t n = (size_t)count * a;
    /* 32 bytes a step over the zero tail of a small file's extender (about
     * a kilobyte in a 1 KiB block), then 8, then 1. */
    while (n >= 32) {
        uint64_t w[4];
        memcpy(w, p + n - 32, 32);
        if ((w[0] | w[1] | w[2] | w[3]) != 0)
            break;
        n -= 32;
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p + n - 8, 8);
        if (w != 0)
            break;
        n -= 8;
    }
    while (n > 0 && p[n - 1] == 0)
        n--;
    return n == 0 ? 0 : (uint32_t)((n - 1) / a + 1);
}

/* The largest of slots from .. to-1 at p (0 for none). */
static inline uint64_t sc_slots_max(const uint8_t *p, unsigned a, uint32_t from, uint32_t to)
{
    uint64_t m = 0;
    for (uint32_t i = from; i < to; i++) {
        uint64_t s = sc_slot(p, a, i);
        m = s > m ? s : m;
    }
    return m;
}
