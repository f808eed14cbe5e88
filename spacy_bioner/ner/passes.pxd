cimport numpy as cnp
from cymem.cymem cimport Pool
from libc.stdint cimport int32_t, int64_t, uint64_t

from ..core.decode cimport Trellis
from ..core.features cimport FeatureExtractor
from ..core.weight_rows cimport WeightRows
from ..core.word_scores cimport WordScores


cdef class PlainPasses:
    cdef Pool _mem  # the trellis's moves
    cdef Trellis _trellis
    cdef readonly tuple made_of  # what the trellis points into, and the objects it was made from
    cdef WordScores _word_scores
    cdef FeatureExtractor _joint
    cdef WeightRows _weights
    cdef object _lexicon
    cdef uint64_t _n_buckets
    cdef bint _document, _history
    cdef const int64_t[::1] _type_of_tag
    cdef int _n_types

    cdef tuple run_arrays(self, cnp.ndarray rows, cnp.ndarray sentence, cnp.ndarray mentions, cnp.ndarray offsets,
                          list match_sources, short_form_heads, float entity_bias, cnp.ndarray allowed)
