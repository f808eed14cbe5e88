# cython: language_level=3
"""Trained emission weights as prediction reads them: each non-zero row once.

Hashed features spread over many buckets, and most buckets are never updated:
in a tagger of 2**20 buckets by 102 tags four in five rows are zeros. Stored
densely they cost all their pages (408 MB); stored as a row number per bucket
(4 MB) and a table of the rows that are not zeros (88 MB), the same sums read
one more number per feature. Training keeps the dense matrix (perceptron.pyx).
"""
from libc.stdint cimport int32_t

import numpy


cdef class WeightRows:
    """A bucket's weights are table[index[bucket]].

    index (int32[n_buckets]), table (float32[n_rows, n_tags]): as `arrays()`
        gives them; ValueError if a row number is outside the table.
    """

    def __init__(self, index, table):
        # views, so that the arrays themselves stay writable for whoever else holds them
        index = numpy.ascontiguousarray(index, dtype=numpy.int32).view()
        table = numpy.ascontiguousarray(table, dtype=numpy.float32).view()
        if index.ndim != 1 or table.ndim != 2 or table.shape[0] == 0:
            raise ValueError(f"weight rows need a 1-d index and a 2-d table of one row or more, "
                             f"got {index.shape} and {table.shape}")
        if index.shape[0] and (index.min() < 0 or index.max() >= table.shape[0]):
            raise ValueError(f"the index points outside the table of {table.shape[0]} rows")
        index.flags.writeable = table.flags.writeable = False
        self.index, self.table = index, table
        cdef const int32_t[::1] index_view = index
        cdef const float[:, ::1] table_view = table
        self._index = &index_view[0] if index.shape[0] else NULL
        self._table = &table_view[0, 0] if table.shape[1] else NULL
        self.n_tags = table.shape[1]

    @staticmethod
    def of_dense(dense):
        """The rows of a dense float32 matrix (n_buckets, n_tags): those that are not zeros, after
        one zero row. Where most rows hold weights (an HMM's log-probabilities) that saves nothing,
        and the rows are the matrix's own, in order."""
        dense = numpy.ascontiguousarray(dense, dtype=numpy.float32)
        cdef const float[:, ::1] matrix = dense
        cdef Py_ssize_t n_buckets = matrix.shape[0], n_tags = matrix.shape[1], bucket, tag
        index = numpy.zeros(n_buckets, dtype=numpy.int32)
        cdef int32_t[::1] index_view = index
        cdef int32_t n_rows = 1
        with nogil:
            for bucket in range(n_buckets):
                for tag in range(n_tags):
                    if matrix[bucket, tag] != 0:
                        index_view[bucket] = n_rows
                        n_rows += 1
                        break
        if 2 * (n_rows - 1) > n_buckets:
            return WeightRows(numpy.arange(n_buckets, dtype=numpy.int32), dense)
        table = numpy.zeros((n_rows, n_tags), dtype=numpy.float32)
        kept = index > 0
        table[index[kept]] = dense[kept]
        return WeightRows(index, table)

    @property
    def n_buckets(self):
        return self.index.shape[0]

    def dense(self):
        """The dense matrix (n_buckets, n_tags) again."""
        return self.table[self.index]

    def take(self, features, int tag):
        """The weights of some feature ids for one tag."""
        return self.table[self.index[numpy.asarray(features, dtype=numpy.intp)], tag]

    def arrays(self):
        """As a model's weights file holds them (`serialize.check_weight_rows` reads them back)."""
        return {"emission_index": self.index, "emission_table": self.table}

    def __reduce__(self):
        return (WeightRows, (self.index, self.table))
