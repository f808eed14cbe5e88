from libc.stdint cimport int32_t, uint32_t


cdef class AveragedPerceptron:
    cdef object _emission  # dense float32[n_buckets, n_tags], or None while a loaded model's rows stand for it
    # The weights as WeightRows alone, while no step has been taken since they were set or loaded
    cdef object _stored_rows
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
    # Changed with the weights (training steps, loading, new tags): what caches of the averages are made from
    cdef readonly long long revision

    cdef void _weights_changed(self)


# Emission scores of n tokens' feature ids (n_features each, DROPPED skipped) into out (n, n_tags);
# a feature's row of weights is index[feature] (WeightRows), or the feature itself where index is NULL.
cdef void emit(const float* weights, const int32_t* index, const uint32_t* features, int n, int n_features,
               int n_tags, float* out) noexcept nogil
