#!/usr/bin/env python3
"""waza script grader: reads the grading context on stdin, prints {score, passed, message, details}."""
import json
import sys


def grade(context: dict) -> dict:
    output = context.get("output", "")
    checks = {
        "mentions_url": "https://" in output,
        "not_too_long": len(output) < 400,
        "has_summary": "summary" in output.lower() or "rolled back" in output.lower() or "again" in output,
    }
    score = sum(checks.values()) / len(checks)
    return {"score": score, "passed": score >= 0.6, "message": f"{sum(checks.values())}/{len(checks)} checks",
            "details": checks}


if __name__ == "__main__":
    print(json.dumps(grade(json.load(sys.stdin))))
