from cymem.cymem cimport Pool
from libc.stdint cimport int32_t, int64_t, uint8_t


cdef struct Trellis:
    const float* transitions  # (T + 1, T), the last row the start's
    const uint8_t* legal  # (T + 1, T)
    const int32_t* starts  # predecessor_lists
    const int32_t* predecessors
    const float* moves  # the transition weight of each predecessor in `predecessors`
    const float* exits  # factored: (T + 1,), else NULL
    const float* entries  # factored: (T,)
    const int32_t* closing  # factored: the tags after which an opener may come
    int n_closing
    const int32_t* openers  # factored: the tags scored from the best exit
    int n_openers
    int n_tags
    # Free (every move legal, none factored), as the tagger's: each tag's highest move weight, else NULL;
    # the largest weight's size; and for each tag before, its moves into each tag (T, T), and the tags
    # by how far its move into them falls short of their highest, furthest first, with those shortfalls
    # (_moves_pruned reads them)
    const float* max_in
    double move_scale
    const float* moves_from
    const int32_t* shortfall_order
    const double* shortfalls


cdef Py_ssize_t check_offsets(const int64_t[::1] offsets, Py_ssize_t n) except -1
cdef Py_ssize_t check_offsets_at(const int64_t* offsets, Py_ssize_t n_offsets, Py_ssize_t n) except -1
cdef int prepare_trellis(Trellis* t, const float[:, ::1] transitions, const uint8_t[:, ::1] legal, factors,
                         predecessors,
                         int n_tags, Pool mem) except -1
cdef int decode_sequences(const Trellis* t, const float* emissions, const uint8_t* allowed, const int64_t[::1] offsets,
                          int32_t* out, Py_ssize_t n) except -1
cdef int decode_checked(const Trellis* t, const float* emissions, const uint8_t* allowed, const int64_t* offsets,
                        Py_ssize_t n_offsets, int32_t* out, double* deltas, int32_t* pointers,
                        Py_ssize_t longest) noexcept nogil


# decode_checked's backpointers and trace for sequences of up to `longest` tokens
cdef inline Py_ssize_t backpointer_room(const Trellis* t, Py_ssize_t longest) noexcept nogil:
    return max(1, longest * t.n_tags) + t.n_tags


cdef void fill_allowed(Py_ssize_t n, Py_ssize_t n_tags, const uint8_t* starts, const uint8_t* spaces,
                       const uint8_t* closed, const int32_t* forced, const uint8_t* inside, const uint8_t* ending,
                       const uint8_t* edges, uint8_t* out) noexcept nogil
