# cython: language_level=3
"""The hashes of a short ASCII word's attributes (templates.WORD_ATTRIBUTES), made in C.

Every new word pays for its row of the Lexicon's table once. Made in Python that is about 9 µs a
word, and on new text most of a pipeline's time goes to it. For a word of ASCII characters, up to
MAX_LETTERS of them, the same "name=value" strings are built here in a buffer and hashed as spaCy's
StringStore hashes them (MurmurHash64A, seed 1). Other words take the Python path;
tests/test_perceptron.py holds the two paths to the same hashes.
"""
from libc.stdint cimport uint64_t
from libc.string cimport memcpy, strlen
from murmurhash.mrmr cimport hash64

# The attributes made here, in templates.WORD_ATTRIBUTES's order (templates.py checks the names).
ASCII_ATTRIBUTES = (
    "orth", "lower", "shape", "short_shape",
    "prefix1", "prefix2", "prefix3", "prefix4", "prefix5", "prefix6",
    "suffix1", "suffix2", "suffix3", "suffix4", "suffix5", "suffix6",
    "case", "characters", "length",
)
cdef enum:
    MAX_LETTERS = 64  # longer words are rare; the Python path makes theirs
    N_AFFIXES = 6  # templates.AFFIX_LENGTHS
    BUFFER = 96  # the longest name ("short_shape=") and MAX_LETTERS letters


cdef inline bint _upper(char c) noexcept nogil:
    return c'A' <= c <= c'Z'


cdef inline bint _lower(char c) noexcept nogil:
    return c'a' <= c <= c'z'


cdef inline bint _digit(char c) noexcept nogil:
    return c'0' <= c <= c'9'


cdef inline uint64_t _hashed(const char* name, const char* value, int length) noexcept nogil:
    """The StringStore hash of "name=value"."""
    cdef char buffer[BUFFER]
    cdef int n = 0
    while name[n]:
        buffer[n] = name[n]
        n += 1
    buffer[n] = c'='
    memcpy(buffer + n + 1, value, length)
    return hash64(buffer, n + 1 + length, 1)


cdef int _shape(const char* text, int n, char* shape) noexcept nogil:
    """spaCy's word_shape: X, x and d for letters and digits, other characters as they are,
    a run of one kept to four. RETURNS its length."""
    cdef int i, run = 0, length = 0
    cdef char mark, last = 0
    for i in range(n):
        mark = c'X' if _upper(text[i]) else c'x' if _lower(text[i]) else c'd' if _digit(text[i]) else text[i]
        if i > 0 and mark == last:
            run += 1
        else:
            run, last = 0, mark
        if run < 4:
            shape[length] = mark
            length += 1
    return length


cdef const char* _case(const char* text, int n) noexcept nogil:
    """templates._case of an ASCII word: title, upper, lower, mixed or none (str.istitle's rule)."""
    cdef int i
    cdef bint title = True, cased = False, after_cased = False, any_upper = False, any_lower = False
    for i in range(n):
        if _upper(text[i]):
            title = title and not after_cased
            any_upper = cased = after_cased = True
        elif _lower(text[i]):
            title = title and after_cased
            any_lower = cased = after_cased = True
        else:
            after_cased = False
    if cased and title:
        return b"title"
    if any_upper and not any_lower:
        return b"upper"
    if any_lower and not any_upper:
        return b"lower"
    return b"mixed" if cased else b"none"


cdef int _characters(const char* text, int n, char* out) noexcept nogil:
    """templates._characters of an ASCII word into out. RETURNS its length."""
    cdef int i, length = 0
    cdef bint hyphen = False, period = False, apos = False, digit = False, alnum = False, digits = n > 0
    for i in range(n):
        hyphen |= text[i] == c'-'
        period |= text[i] == c'.'
        apos |= text[i] == c"'"
        digit |= _digit(text[i])
        alnum |= _digit(text[i]) or _upper(text[i]) or _lower(text[i])
        digits &= _digit(text[i])
    if digits:
        return _put(out, 0, b"digits")
    if hyphen:
        length = _put(out, length, b"hyphen")
    if period:
        length = _put(out, length, b"period")
    if apos:
        length = _put(out, length, b"apos")
    if digit:
        length = _put(out, length, b"digit")
    if not alnum:
        length = _put(out, length, b"punct")
    return length if length else _put(out, 0, b"plain")


cdef int _put(char* out, int at, const char* mark) noexcept nogil:
    """Append a mark to out at `at`, after a "+" unless first. RETURNS the new length."""
    cdef int i = 0
    if at:
        out[at] = c'+'
        at += 1
    while mark[i]:
        out[at] = mark[i]
        at += 1
        i += 1
    return at


def ascii_word_hashes(str text):
    """The hashes of ASCII_ATTRIBUTES of a word of at most MAX_LETTERS ASCII characters, in order;
    None for any other word (the Python path makes those)."""
    if len(text) > MAX_LETTERS or not text.isascii():
        return None
    cdef bytes encoded = text.encode("ascii")
    cdef const char* orth = encoded
    cdef int n = len(encoded), k, i
    cdef char lower[MAX_LETTERS]
    cdef char shape[MAX_LETTERS]
    cdef char squeezed[MAX_LETTERS]
    cdef char characters[40]
    cdef char length = c'0' + (n if n < 8 else 8)
    for i in range(n):
        lower[i] = orth[i] + 32 if _upper(orth[i]) else orth[i]
    cdef int n_shape = _shape(orth, n, shape), n_squeezed = 0
    for i in range(n_shape):
        if i == 0 or shape[i] != shape[i - 1]:
            squeezed[n_squeezed] = shape[i]
            n_squeezed += 1
    cdef const char* case = _case(orth, n)
    cdef list hashes = [
        _hashed(b"orth", orth, n),
        _hashed(b"lower", lower, n),
        _hashed(b"shape", shape, n_shape),
        _hashed(b"short_shape", squeezed, n_squeezed),
    ]
    cdef char prefix[8]
    cdef char suffix[8]
    memcpy(prefix, b"prefix1", 8)
    memcpy(suffix, b"suffix1", 8)
    for k in range(1, N_AFFIXES + 1):  # "prefix1".."prefix6": lower[:k]
        prefix[6] = c'0' + k
        hashes.append(_hashed(prefix, lower, min(k, n)))
    for k in range(1, N_AFFIXES + 1):  # lower[-k:]
        suffix[6] = c'0' + k
        hashes.append(_hashed(suffix, lower + max(n - k, 0), min(k, n)))
    hashes.append(_hashed(b"case", case, strlen(case)))
    hashes.append(_hashed(b"characters", characters, _characters(orth, n, characters)))
    hashes.append(_hashed(b"length", &length, 1))
    return hashes
