"""Vally-style program grader, exit-code mode: pass when the workspace holds the app."""
import json
import os
import sys

workspace = os.environ["EVALUATE_WORKSPACE"]
with open(os.environ["EVALUATE_GRADER_INPUT"], encoding="utf-8") as fh:
    grader_input = json.load(fh)
if not os.path.isfile(os.path.join(workspace, "app", "main.py")):
    print(f"no app/main.py in {workspace}", file=sys.stderr)
    sys.exit(1)
if "deployed to" not in (grader_input.get("output") or ""):
    sys.exit(2)
