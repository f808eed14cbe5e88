# Asking for a weight row before it is read: the tables are far larger than the caches,
# and waiting for each row in turn costs more than the adds.

cdef extern from *:
    void prefetch "__builtin_prefetch"(const void* address) noexcept nogil

cdef enum:
    FLOATS_PER_LINE = 16


cdef inline void prefetch_row(const float* row, int n) noexcept nogil:
    """Ask for every cache line of a row of n floats (a row of a hundred spans seven)."""
    cdef int c = 0
    while c < n:
        prefetch(row + c)
        c += FLOATS_PER_LINE
    prefetch(row + n - 1)  # a row that starts mid-line ends on one line more
