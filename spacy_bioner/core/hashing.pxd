from libc.stdint cimport uint64_t


cdef inline uint64_t mix(uint64_t h) noexcept nogil:
    # splitmix64's finalizer: every input bit reaches every output bit.
    h ^= h >> 30
    h *= 0xbf58476d1ce4e5b9ULL
    h ^= h >> 27
    h *= 0x94d049bb133111ebULL
    h ^= h >> 31
    return h


cdef inline uint64_t bucket(uint64_t h, uint64_t n_buckets) noexcept nogil:
    # The same row as h % n_buckets; a mask, not a division, for the usual
    # power-of-two tables (the division was a tenth of feature extraction).
    if n_buckets & (n_buckets - 1) == 0:
        return h & (n_buckets - 1)
    return h % n_buckets
