from libc.stdint cimport uint32_t


cdef class AveragedPerceptron:
    cdef public object emission
    cdef public object transition
    cdef public object exits
    cdef public object entries
    cdef public object continuing
    cdef public object start_follows
    cdef object _emission_totals
    cdef object _transition_totals
    cdef object _exit_totals
    cdef object _entry_totals
    cdef public long long step
    cdef object _averages


# Emission scores of n tokens' feature ids (n_features each, DROPPED skipped) into out (n, n_tags).
cdef void emit(const float* weights, const uint32_t* features, int n, int n_features, int n_tags,
               float* out) noexcept nogil
