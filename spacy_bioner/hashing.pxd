from libc.stdint cimport uint64_t


cdef inline uint64_t mix(uint64_t h) noexcept nogil:
    # splitmix64's finalizer: every input bit reaches every output bit.
    h ^= h >> 30
    h *= 0xbf58476d1ce4e5b9ULL
    h ^= h >> 27
    h *= 0x94d049bb133111ebULL
    h ^= h >> 31
    return h
