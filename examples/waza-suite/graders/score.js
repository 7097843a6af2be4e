// Vally-style program grader, GraderResult JSON mode: the share of tool calls that succeeded.
const fs = require("fs");
const input = JSON.parse(fs.readFileSync(process.env.EVALUATE_GRADER_INPUT, "utf8"));
const results = input.trajectory.events.filter((e) => e.type === "tool_result");
const ok = results.filter((e) => e.data.success).length;
const score = results.length ? ok / results.length : 0;
process.stdout.write(JSON.stringify({
  name: "tool-success-rate",
  passed: score >= 0.9,
  score,
  evidence: `${ok} of ${results.length} tool calls succeeded`,
  kind: "code",
}));
