cdef class AveragedPerceptron:
    cdef public object emission
    cdef public object transition
    cdef object _emission_totals
    cdef object _transition_totals
    cdef public long long step
    cdef object _averages
