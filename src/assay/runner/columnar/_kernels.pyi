"""Types of the C extension built from _kernels.c. Buffers are anything with the buffer protocol
(Arrow buffers, bytes); results are bytes that numpy and Arrow read without copying."""

from typing_extensions import Buffer  # collections.abc.Buffer is 3.12+

def contains_rows(hay_offsets: Buffer, hay_data: Buffer, needle_offsets: Buffer, needle_data: Buffer,
                  n: int, hay_start: int, needle_start: int, /) -> bytes: ...
def first_difference(a_off: Buffer, a_data: Buffer, a_start: int, a_n: int,
                     b_off: Buffer, b_data: Buffer, b_start: int, b_n: int,
                     rows: Buffer, /) -> tuple[bytes, bytes, bytes]: ...
def slice_chars(off: Buffer, data: Buffer, start: int, n: int, rows: Buffer, from_: Buffer, max_chars: int,
                /) -> tuple[bytes, bytes, bytes, bytes]: ...
