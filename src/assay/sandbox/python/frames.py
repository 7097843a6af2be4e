"""The result pipe's framing, written by ``child`` and read by ``session``: per sample, a head of
two 4-byte numbers (native order), the result envelope's length with ``STOP_FLAG`` in its top
bit and the length of what the sample printed (UTF-8), then the printed text, then the envelope.

``STOP_FLAG``: the child stops after this sample (it ran out of memory or left a thread running),
and a fresh child takes the rest of the chunk. A head alone with ``STOP_FLAG`` and no envelope
(length 0) stops the child before a sample it has not run. Anything else on the output pipe (raw writes to
fds 1 and 2, the interpreter's own last words) goes to the sample whose frame comes next.
"""

import struct

FRAME_HEAD = struct.Struct("=II")
STOP_FLAG = 1 << 31
SIZE_MASK = STOP_FLAG - 1
