#!/bin/sh
# Vally-style program grader run through the shell: pass when the output mentions $1.
grep -qi "$1" "$EVALUATE_GRADER_INPUT"
