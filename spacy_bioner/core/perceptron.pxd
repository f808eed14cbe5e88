cdef class AveragedPerceptron:
    cdef public object emission
    cdef public object transition
    cdef public object exits
    cdef public object entries
    cdef public object continuing
    cdef object _emission_totals
    cdef object _transition_totals
    cdef object _exit_totals
    cdef object _entry_totals
    cdef public long long step
    cdef object _averages
