#!/bin/bash
# Exit-code mode through the shell: fail when the trajectory has more than MAX_ERRORS errors.
errors=$(grep -o '"type": "error"' "$EVALUATE_GRADER_INPUT" | wc -l)
if [ "$errors" -gt "${MAX_ERRORS:-0}" ]; then
  echo "trajectory has $errors error event(s)" >&2
  exit 1
fi
