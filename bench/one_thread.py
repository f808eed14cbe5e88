"""Imported first by the benchmarks that time bioner against spaCy, before numpy loads its BLAS:
both sides of every ratio run on one thread, spaCy's matrix products included."""

import os

for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ.setdefault(variable, "1")
