"""tests/columnar/generated.py is imported by name by the tests beside it."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
