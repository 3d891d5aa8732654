/*
 * endian.c -- little-endian integers and short addresses.
 *
 * Every multi-byte value on a LanyFS disk is little-endian (SPEC-§1); slot
 * streams use addresses of addrlen bytes, zero-extended.  These are the only
 * functions that turn disk bytes into integers.
 */
#include "lanyfs.h"

uint16_t lanyfs_get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

uint32_t lanyfs_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

uint64_t lanyfs_get64(const uint8_t *p)
{
    return (uint64_t)lanyfs_get32(p) | ((uint64_t)lanyfs_get32(p + 4) << 32);
}

void lanyfs_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

void lanyfs_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void lanyfs_put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

uint64_t lanyfs_get_addr(const uint8_t *p, unsigned addrlen)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < addrlen && i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

void lanyfs_put_addr(uint8_t *p, unsigned addrlen, uint64_t v)
{
    for (unsigned i = 0; i < addrlen && i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

uint64_t lanyfs_addr_max(unsigned addrlen)
{
    if (addrlen >= 8)
        return UINT64_MAX;
    return ((uint64_t)1 << (8 * addrlen)) - 1;
}
