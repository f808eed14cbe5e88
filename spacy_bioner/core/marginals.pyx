# cython: language_level=3
"""Entity probabilities: forward-backward over the decoder's constrained trellis.

Scores divided by a temperature T define a distribution over the tag
sequences the masks allow, P(tags) = exp(score(tags) / T) / Z. The forward
and backward sums (kept as logs) give, for a decoded entity, the probability
that the sequence has exactly that entity there: its tags on its tokens,
and (in BIO, where an entity could run on) no continuation after it. T is
fitted on held-out data (see calibration.py), as perceptron scores are
margins, not log-probabilities.
"""
from libc.math cimport INFINITY, exp, log
from libc.stdint cimport int32_t, int64_t, uint8_t

import numpy


cdef inline double _logaddexp(double a, double b) noexcept nogil:
    if a == -INFINITY:
        return b
    if b == -INFINITY:
        return a
    if a > b:
        return a + log(1.0 + exp(b - a))
    return b + log(1.0 + exp(a - b))


cdef void _forward_backward(
    const float* emissions, const float* transitions, const uint8_t* allowed, const uint8_t* legal,
    int n, int n_tags, double inv_t, double* alpha, double* beta, double* terms,
) noexcept nogil:
    """Forward and backward log sums; each cell sums its legal neighbours with
    one exp each, shifted by their maximum so that nothing overflows."""
    cdef int i, tag, other, k
    cdef double top
    for tag in range(n_tags):
        alpha[tag] = (<double>transitions[n_tags * n_tags + tag] + emissions[tag]) * inv_t \
            if allowed[tag] and legal[n_tags * n_tags + tag] else -INFINITY
    for i in range(1, n):
        for tag in range(n_tags):
            alpha[i * n_tags + tag] = -INFINITY
            if not allowed[i * n_tags + tag]:
                continue
            k, top = 0, -INFINITY
            for other in range(n_tags):
                if legal[other * n_tags + tag] and alpha[(i - 1) * n_tags + other] != -INFINITY:
                    terms[k] = alpha[(i - 1) * n_tags + other] + transitions[other * n_tags + tag] * inv_t
                    top = max(top, terms[k])
                    k += 1
            if k:
                alpha[i * n_tags + tag] = top + log(_sum_exp(terms, k, top)) + emissions[i * n_tags + tag] * inv_t
    for tag in range(n_tags):
        beta[(n - 1) * n_tags + tag] = 0.0 if allowed[(n - 1) * n_tags + tag] else -INFINITY
    for i in range(n - 2, -1, -1):
        for tag in range(n_tags):
            beta[i * n_tags + tag] = -INFINITY
            if not allowed[i * n_tags + tag]:
                continue
            k, top = 0, -INFINITY
            for other in range(n_tags):
                if legal[tag * n_tags + other] and beta[(i + 1) * n_tags + other] != -INFINITY:
                    terms[k] = ((<double>transitions[tag * n_tags + other] + emissions[(i + 1) * n_tags + other])
                                * inv_t + beta[(i + 1) * n_tags + other])
                    top = max(top, terms[k])
                    k += 1
            if k:
                beta[i * n_tags + tag] = top + log(_sum_exp(terms, k, top))


cdef inline double _rescale(double* row, int n_tags) noexcept nogil:
    """Divide a position's cells by their sum; RETURNS the sum's log, -inf if it is 0 or not finite."""
    cdef double total = 0.0
    cdef int tag
    for tag in range(n_tags):
        total += row[tag]
    if not 0.0 < total < INFINITY:
        return -INFINITY
    for tag in range(n_tags):
        row[tag] /= total
    return log(total)


# Below this a rescaled cell may have lost summands to underflow: sum in log space instead.
cdef double _LEAST_MASS = 1e-280


cdef int _scaled_forward_backward(
    const float* emissions, const double* arc_weights, double arc_shift, const uint8_t* allowed, const uint8_t* legal,
    const int32_t* neighbours, int n, int n_tags, double inv_t, double* alpha, double* beta, double* cell_weights,
    double* shifts,
    double* forward_logs, double* backward_logs,
) noexcept nogil:
    """The same log sums as `_forward_backward`, computed in probability space:
    each cell's emission is exponentiated once (shifted by its position's best
    score), the arcs' weights once per batch (`arc_weights`, shifted by
    `arc_shift`), and each position is rescaled to sum to 1 with its log scale
    carried along (Rabiner's scaling): one exp per cell instead of one per arc.
    RETURNS -1 if a cell that some path reaches rounds to (near) zero, as
    scores far apart at a low temperature can make it; the caller then sums
    in log space instead.

    neighbours: each tag's legal predecessors (rows 0..T-1), then its legal
    successors (rows T..2T-1), in ascending order, -1 after the last.
    """
    cdef int i, tag, other, k, cell
    cdef double top, scale, acc, reach
    cdef const double* start_weights = arc_weights + n_tags * n_tags
    cdef const uint8_t* start_legal = legal + n_tags * n_tags
    for i in range(n):
        top = -INFINITY
        for tag in range(n_tags):
            if allowed[i * n_tags + tag] and emissions[i * n_tags + tag] > top:
                top = emissions[i * n_tags + tag]
        if top == -INFINITY:
            return -1
        for tag in range(n_tags):
            cell = i * n_tags + tag
            cell_weights[cell] = exp((emissions[cell] - top) * inv_t) if allowed[cell] else 0.0
        shifts[i] = (arc_shift + top) * inv_t
    for i in range(n):
        for tag in range(n_tags):
            acc, reach = 0.0, 0.0
            if allowed[i * n_tags + tag]:
                if i == 0:
                    acc, reach = start_weights[tag], start_legal[tag]
                else:
                    for k in range(n_tags):
                        other = neighbours[tag * n_tags + k]
                        if other < 0:
                            break
                        acc += alpha[(i - 1) * n_tags + other] * arc_weights[other * n_tags + tag]
                        reach += alpha[(i - 1) * n_tags + other]
                acc *= cell_weights[i * n_tags + tag]
                if reach > 0.0 and acc < _LEAST_MASS:
                    return -1
            alpha[i * n_tags + tag] = acc
        scale = _rescale(&alpha[i * n_tags], n_tags)
        if scale == -INFINITY:
            return -1
        forward_logs[i] = (forward_logs[i - 1] if i > 0 else 0.0) + scale + shifts[i]
    for tag in range(n_tags):
        beta[(n - 1) * n_tags + tag] = 1.0 if allowed[(n - 1) * n_tags + tag] else 0.0
    backward_logs[n - 1] = 0.0
    for i in range(n - 2, -1, -1):
        for tag in range(n_tags):
            acc, reach = 0.0, 0.0
            if allowed[i * n_tags + tag]:
                for k in range(n_tags):
                    other = neighbours[(n_tags + tag) * n_tags + k]
                    if other < 0:
                        break
                    acc += (arc_weights[tag * n_tags + other] * cell_weights[(i + 1) * n_tags + other]
                            * beta[(i + 1) * n_tags + other])
                    reach += beta[(i + 1) * n_tags + other]
                if reach > 0.0 and acc < _LEAST_MASS:
                    return -1
            beta[i * n_tags + tag] = acc
        scale = _rescale(&beta[i * n_tags], n_tags)
        if scale == -INFINITY:
            return -1
        backward_logs[i] = backward_logs[i + 1] + scale + shifts[i + 1]
    for i in range(n):
        for tag in range(n_tags):
            cell = i * n_tags + tag
            alpha[cell] = log(alpha[cell]) + forward_logs[i] if alpha[cell] > 0.0 else -INFINITY
            beta[cell] = log(beta[cell]) + backward_logs[i] if beta[cell] > 0.0 else -INFINITY
    return 0


# exp(-40) is below half a unit in the last place of the top term's 1.0, even
# summed over every tag: a term that far below the top changes nothing.
cdef double _NEGLIGIBLE = -40.0


cdef inline double _sum_exp(const double* terms, int k, double top) noexcept nogil:
    cdef double total = 0.0, gap
    cdef int j
    for j in range(k):
        gap = terms[j] - top
        if gap == 0.0:
            total += 1.0
        elif gap > _NEGLIGIBLE:
            total += exp(gap)
    return total


cdef double _path(
    const float* emissions, const float* transitions, const int32_t* tags, int start, int end, int n_tags, double inv_t,
) noexcept nogil:
    """Score of the tags on tokens start+1..end-1 given the tag at start (emissions from start+1 on)."""
    cdef double score = 0.0
    cdef int i
    for i in range(start + 1, end):
        score += (<double>transitions[tags[i - 1] * n_tags + tags[i]] + emissions[i * n_tags + tags[i]]) * inv_t
    return score


def _trellis_sums(
    const float[:, ::1] emissions, const float[:, ::1] transitions, const uint8_t[:, ::1] allowed,
    const uint8_t[:, ::1] legal, const int64_t[::1] offsets, double inv_t,
):
    """Forward and backward log sums of every sequence of a batch, and each sequence's log Z."""
    cdef int n = emissions.shape[0], n_tags = emissions.shape[1], tag
    cdef Py_ssize_t s, seq_start, seq_end
    alpha = numpy.full((n, n_tags), -INFINITY, dtype=numpy.float64)
    beta = numpy.full((n, n_tags), -INFINITY, dtype=numpy.float64)
    log_zs = numpy.full(offsets.shape[0] - 1, -INFINITY, dtype=numpy.float64)
    terms = numpy.empty(n_tags, dtype=numpy.float64)
    # Arc weights exp((transition - shift) / T), 0 where illegal; the start row last.
    legal_transitions = numpy.where(legal, numpy.asarray(transitions, dtype=numpy.float64), -numpy.inf)
    arc_shift = float(legal_transitions.max()) if numpy.isfinite(legal_transitions).any() else 0.0
    arc_weights = numpy.ascontiguousarray(numpy.exp((legal_transitions - arc_shift) * inv_t), dtype=numpy.float64)
    neighbours = numpy.full((2 * n_tags, n_tags), -1, dtype=numpy.int32)
    for tag in range(n_tags):
        before, after = numpy.flatnonzero(legal[:n_tags, tag]), numpy.flatnonzero(legal[tag])
        neighbours[tag, : len(before)] = before
        neighbours[n_tags + tag, : len(after)] = after
    cell_weights = numpy.empty((max(n, 1), n_tags), dtype=numpy.float64)
    logs = numpy.empty((3, max(n, 1)), dtype=numpy.float64)
    cdef double[:, ::1] a = alpha, b = beta, cells = cell_weights, log_view = logs
    cdef double[::1] z = log_zs, term_view = terms
    cdef const double[:, ::1] arcs = arc_weights
    cdef const int32_t[:, ::1] neighbour_view = neighbours
    cdef double shift = arc_shift
    cdef int status
    with nogil:
        for s in range(offsets.shape[0] - 1):
            seq_start, seq_end = offsets[s], offsets[s + 1]
            if seq_end > seq_start:
                status = _scaled_forward_backward(
                    &emissions[seq_start, 0], &arcs[0, 0], shift, &allowed[seq_start, 0], &legal[0,
                                                                                                 0], &neighbour_view[0,
                                                                                                                     0],
                    seq_end - seq_start, n_tags, inv_t,
                    &a[seq_start, 0], &b[seq_start, 0], &cells[0, 0], &log_view[0, 0], &log_view[1, 0], &log_view[2, 0],
                )
                if status != 0:
                    _forward_backward(&emissions[seq_start, 0], &transitions[0, 0], &allowed[seq_start, 0], &legal[0,
                                                                                                                   0],
                                      seq_end - seq_start, n_tags, inv_t, &a[seq_start, 0], &b[seq_start,
                                                                                               0], &term_view[0])
                for tag in range(n_tags):
                    z[s] = _logaddexp(z[s], a[seq_end - 1, tag])
    return alpha, beta, log_zs


def entity_probabilities(
    const float[:, ::1] emissions,
    const float[:, ::1] transitions,
    const uint8_t[:, ::1] allowed,
    const uint8_t[:, ::1] legal,
    const int64_t[::1] offsets,
    const int32_t[::1] tags,
    const int64_t[:, ::1] entities,
    double temperature,
):
    """The probability of each entity, exactly as decoded, under the scores at a temperature.

    emissions, transitions, allowed, legal, offsets: as `viterbi` takes them.
    tags (int32[n]): The decoded tags (the entities' tags are read from them).
    entities (int64[m, 4]): Per entity: its sequence, start and end (batch
        token positions) and the tag that would continue it after its end,
        -1 if none can (BILOU's L and U close an entity).
    RETURNS (float64[m]): Probabilities.
    """
    cdef int n_tags = emissions.shape[1]
    cdef Py_ssize_t m = entities.shape[0], e, s, start, end
    cdef double inv_t = 1.0 / temperature, log_z, inside, continued
    cdef int following
    if not temperature > 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    out = numpy.zeros(m, dtype=numpy.float64)
    if m == 0:
        return out
    alpha, beta, log_zs = _trellis_sums(emissions, transitions, allowed, legal, offsets, inv_t)
    cdef double[:, ::1] a = alpha, b = beta
    cdef double[::1] z = log_zs, out_view = out
    with nogil:
        for e in range(m):
            s, start, end, following = entities[e, 0], entities[e, 1], entities[e, 2], entities[e, 3]
            log_z = z[s]
            inside = a[start, tags[start]] + _path(&emissions[0, 0], &transitions[0, 0], &tags[0], start, end, n_tags,
                                                   inv_t)
            out_view[e] = exp(inside + b[end - 1, tags[end - 1]] - log_z)
            if following >= 0 and end < offsets[s + 1] and allowed[end, following] and legal[tags[end - 1], following]:
                continued = inside + (<double>transitions[tags[end - 1], following] + emissions[end,
                                                                                                following]) * inv_t \
                    + b[end, following]
                out_view[e] -= exp(continued - log_z)
            out_view[e] = min(1.0, max(0.0, out_view[e]))
    return out


def span_probabilities(
    const float[:, ::1] emissions,
    const float[:, ::1] transitions,
    const uint8_t[:, ::1] allowed,
    const uint8_t[:, ::1] legal,
    const int64_t[::1] offsets,
    const int32_t[:, ::1] label_tags,
    int max_length,
    double threshold,
    double temperature,
):
    """Every span of up to max_length tokens, of every label, whose probability
    of being exactly an entity is at least threshold: the alternatives to the
    decoded entities.

    label_tags (int32[n_labels, 4]): Per label its B, I, L and U tag ids; in
        BIO, L and U are -1 (I and B end an entity, if no I follows).
    RETURNS (Tuple[ndarray, ndarray]): int64 (m, 4) rows of sequence, start,
        end and label; float64 (m,) probabilities.
    """
    cdef int n_labels = label_tags.shape[0]
    cdef double inv_t = 1.0 / temperature, log_z, inside, closing, p
    cdef Py_ssize_t s, i, j, seq_start, seq_end
    cdef int label, begin, middle, last, unit, previous, single, final
    if not temperature > 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    alpha, beta, log_zs = _trellis_sums(emissions, transitions, allowed, legal, offsets, inv_t)
    cdef double[:, ::1] a = alpha, b = beta
    found, probabilities = [], []
    for s in range(offsets.shape[0] - 1):
        seq_start, seq_end, log_z = offsets[s], offsets[s + 1], log_zs[s]
        for label in range(n_labels):
            begin, middle, last, unit = label_tags[label, 0], label_tags[label, 1], label_tags[label,
                                                                                               2], label_tags[label, 3]
            for i in range(seq_start, seq_end):
                # One token: U in BILOU; in BIO a B that no I follows.
                single = unit if unit >= 0 else begin
                p = _closed(a[i, single] + b[i, single], log_z, a[i, begin], begin, i + 1, seq_end, middle, last,
                            emissions, transitions, allowed, b, inv_t)
                if p >= threshold:
                    found.append((s, i, i + 1, label))
                    probabilities.append(p)
                inside, previous = a[i, begin], begin
                for j in range(i + 1, min(i + max_length, seq_end)):
                    if inside == -INFINITY:
                        break
                    final = last if last >= 0 else middle
                    closing = inside + (<double>transitions[previous, final] + emissions[j, final]) * inv_t
                    p = _closed(closing + b[j, final], log_z, closing, final, j + 1, seq_end, middle, last,
                                emissions, transitions, allowed, b, inv_t)
                    if p >= threshold:
                        found.append((s, i, j + 1, label))
                        probabilities.append(p)
                    inside += (<double>transitions[previous, middle] + emissions[j, middle]) * inv_t
                    previous = middle
    return numpy.array(found, dtype=numpy.int64).reshape(-1, 4), numpy.array(probabilities, dtype=numpy.float64)


cdef double _closed(
    double through, double log_z, double before_end, int end_tag, Py_ssize_t after, Py_ssize_t seq_end, int middle,
    int last,
    const float[:, ::1] emissions, const float[:, ::1] transitions, const uint8_t[:, ::1] allowed, double[:, ::1] b,
    double inv_t,
):
    """exp(through - log_z): the span's paths; in BIO, where an I could go on
    with the entity, less the paths in which one does at token `after`."""
    cdef double p = exp(through - log_z) if through != -INFINITY else 0.0
    if last < 0 and after < seq_end and allowed[after, middle] and before_end != -INFINITY:
        p -= exp(before_end + (<double>transitions[end_tag, middle] + emissions[after, middle]) * inv_t
                 + b[after, middle] - log_z)
    return min(1.0, max(0.0, p))


def expected_counts(
    const float[:, ::1] emissions,
    const float[:, ::1] transitions,
    const uint8_t[:, ::1] allowed,
    const uint8_t[:, ::1] legal,
    const int64_t[::1] offsets,
):
    """What CRF training needs: each token's tag marginals, the expected
    transition counts (start row last) and log Z, over sequences laid end to end.

    RETURNS (Tuple[ndarray, ndarray, float]): float32 (n, T); float32 (T + 1, T); the sum of log Z.
    """
    cdef int n = emissions.shape[0], n_tags = emissions.shape[1], previous, tag
    cdef Py_ssize_t s, i, seq_start, seq_end
    alpha, beta, log_zs = _trellis_sums(emissions, transitions, allowed, legal, offsets, 1.0)
    cdef double[:, ::1] a = alpha, b = beta
    cdef double[::1] z = log_zs
    marginals = numpy.zeros((n, n_tags), dtype=numpy.float32)
    counts = numpy.zeros((n_tags + 1, n_tags), dtype=numpy.float32)
    cdef float[:, ::1] m = marginals, c = counts
    with nogil:
        for s in range(offsets.shape[0] - 1):
            seq_start, seq_end = offsets[s], offsets[s + 1]
            for i in range(seq_start, seq_end):
                for tag in range(n_tags):
                    if a[i, tag] != -INFINITY and b[i, tag] != -INFINITY:
                        m[i, tag] = <float>exp(a[i, tag] + b[i, tag] - z[s])
                        if i == seq_start:
                            c[n_tags, tag] += m[i, tag]
                        else:
                            for previous in range(n_tags):
                                if legal[previous, tag] and a[i - 1, previous] != -INFINITY:
                                    c[previous, tag] += <float>exp(a[i - 1, previous] + transitions[previous, tag]
                                                                   + emissions[i, tag] + b[i, tag] - z[s])
    return marginals, counts, float(numpy.sum(log_zs[numpy.isfinite(log_zs)]))
