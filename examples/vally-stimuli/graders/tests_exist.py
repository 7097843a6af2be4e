"""Exit-code mode: pass when the working directory (workspace/sub_path) holds a test file.

EVALUATE_WORKSPACE stays the workspace root even though sub_path moved the working directory."""
import os
import sys

root = os.environ["EVALUATE_WORKSPACE"]
if os.path.realpath(os.getcwd()) == os.path.realpath(root):
    sys.exit("sub_path was not applied")
tests = [f for f in os.listdir(".") if f.endswith(".test.js")]
if not tests:
    print("no *.test.js in " + os.getcwd(), file=sys.stderr)
    sys.exit(1)
