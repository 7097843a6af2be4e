"""`assay compare` of two runs kept in files, streamed: a run of any size is read twice, a
line at a time, and never held whole (``files.compare_files``). The formats a run can be read
from are declared in ``readers.FORMATS``."""
