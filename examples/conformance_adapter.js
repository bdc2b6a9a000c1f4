// A GR-MEM conformance adapter in JavaScript (Node), for `flowdrop-buffer conformance --against`.
// It speaks the kit's JSON Lines protocol (docs/conformance.md) and implements three ops
// itself: assemble (MEM-4), owns (MEM-9) and text (MEM-16). A real adapter forwards every op
// to its implementation's own buffer; any op it does not know is answered with an error.
const readline = require("node:readline");
const ROLES = ["system", "user", "assistant", "tool"];
// MEM-6 in short: a usable id is a positive whole number or non-blank text not spelling zero.
const usable = (v) => {
  if (typeof v === "number") return Number.isInteger(v) && v > 0 ? String(v) : null;
  if (typeof v !== "string" || !v.trim() || /^[+-]?0*(\.0*)?$/.test(v.trim())) return null;
  return v.trim();
};
const ops = {
  hello: () => ({ implementation: "example-js-adapter", protocol: 1 }),
  assemble: ({ inputs }) => {
    const messages = [];
    for (const [i, { port, value }] of inputs.entries()) {
      if (value === undefined || value === null) continue; // unwired or empty: nothing
      const items = Array.isArray(value) ? value : [value];
      if (items.some((m) => typeof m !== "object" || m === null || Array.isArray(m)))
        return { error: `input ${port} (position ${i}) is not a message or a list of them` };
      messages.push(...items);
    }
    return { messages, verdict: "assembled" };
  },
  owns: ({ principal, owner }) => ({ owns: usable(principal) !== null && usable(principal) === usable(owner) }),
  text: ({ text, role, tool_call_id }) => {
    if (!text) return { message: null };
    const r = ROLES.includes(role) ? role : "user";
    return { message: r === "tool" && tool_call_id ? { role: r, content: text, tool_call_id } : { role: r, content: text } };
  },
};
const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const request = JSON.parse(line);
  const op = ops[request.op];
  process.stdout.write(JSON.stringify(op ? op(request) : { error: `not implemented: ${request.op}` }) + "\n");
});
