// GraderResult JSON mode: score = share of successful tool results in the trajectory.
const fs = require("fs");
const input = JSON.parse(fs.readFileSync(process.env.EVALUATE_GRADER_INPUT, "utf8"));
const results = input.trajectory.events.filter((e) => e.type === "tool_result");
const ok = results.filter((e) => e.data.success).length;
const score = results.length ? ok / results.length : 0;
console.log(JSON.stringify({
  name: "trajectory-score",
  passed: score === 1,
  score,
  evidence: `${ok} of ${results.length} tool calls succeeded`,
  kind: "code",
  metadata: { toolResults: results.length },
}));
