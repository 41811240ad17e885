#!/usr/bin/env node
// Builds the pi 1.5.2 test corpus with pi's own writer (SessionManager) and records
// what pi 1.5.2 reads from each file: its context at every entry, its /tree rows for
// every filter and a few searches. Run with Node >= 22.19:
//
//   HOME=/home/pi15 node tests/pi15/make_fixtures.mjs PI_BUNDLE OUT_DIR
//
// PI_BUNDLE: @earendil-works/pi-coding-agent@1.5.2's dist/bundle/index.js. Writes
// OUT_DIR/NAME.jsonl (renamed from pi's file name) and OUT_DIR/NAME.pi.json. pi picks
// random ids and the current time, so every run gives other files: the test compares
// stree with the answers recorded for the files committed beside them.
// A few lines pi's writer never produces (a string replacement for an assistant
// message, null content) are appended raw, as a port or an older pi would write them.

import { appendFileSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [bundle, out] = process.argv.slice(2);
if (!bundle || !out) {
	console.error("usage: make_fixtures.mjs PI_BUNDLE OUT_DIR");
	process.exit(2);
}
const { SessionManager, TreeSelectorComponent, initTheme, buildSessionContext } = await import(bundle);
initTheme("dark");
mkdirSync(out, { recursive: true });
const HOME = process.env.HOME;
const CWD = `${HOME}/proj`;
const FILTERS = ["default", "no-tools", "user-only", "labeled-only", "all"];
const SEARCHES = ["context", "omit", "replace", "edit", "system", "usage", "hello", "note", "ok", "first", "toolresult 8", "port"];

const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15,
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
let clock = 1_800_000_000_000;
const user = (text) => ({ role: "user", content: text, timestamp: ++clock });
const assistant = (content, extra = {}) => ({ role: "assistant", content, api: "openai-completions", provider: "openai",
	model: "gpt-5", usage, stopReason: "stop", timestamp: ++clock, ...extra });
const toolCall = (id, name, args) => ({ type: "toolCall", id, name, arguments: args });
const toolResult = (id, name, text) => ({ role: "toolResult", toolCallId: id, toolName: name,
	content: [{ type: "text", text }], isError: false, timestamp: ++clock });
const system = (content, extra = {}) => ({ role: "system", content, sections: [{ id: "base", text: content }],
	toolsAdded: [], toolsRemoved: [], timestamp: ++clock, ...extra });
const tool = (name) => ({ name, description: `the ${name} tool`, parameters: { type: "object", properties: {} } });
const raw = (sm, fields) => {
	// a line as a port writes it: appended to the file, parented on the leaf
	const entry = { id: fields.id, parentId: sm.getLeafId(), timestamp: new Date().toISOString(), ...fields };
	appendFileSync(sm.getSessionFile(), `${JSON.stringify(entry)}\n`);
	return entry.id;
};

const builders = {
	context_edits(sm) {
		const u1 = sm.appendMessage(user("hello, first question"));
		const a1 = sm.appendMessage(assistant([{ type: "text", text: "first answer" },
			toolCall("c1", "read", { path: `${HOME}/proj/a.py` })], { stopReason: "toolUse" }));
		const t1 = sm.appendMessage(toolResult("c1", "read", "contents of a.py"));
		const a2 = sm.appendMessage(assistant([{ type: "text", text: "second answer" }]));
		const n1 = sm.appendCustomMessageEntry("note", "a note for the model", true);
		sm.appendContextEdit(u1, { content: "hello, edited once" });
		sm.appendContextEdit(u1, { content: [{ type: "text", text: "hello, edited twice" }] }); // the latest wins
		sm.appendContextEdit(t1, null); // omit the tool result
		sm.appendContextEdit(a2, { content: "replaced answer" }); // pi's writer makes it a text block
		sm.appendContextEdit(n1, { content: "an edited note" });
		sm.appendMessage(user("after the edits"));
		sm.appendMessage(assistant([{ type: "text", text: "ok" }]));
		// a string replacement for an assistant message, as a port writes it
		raw(sm, { type: "context_edit", id: "e0000001", targetId: a1, replacement: { content: "raw string" } });
		// an edit on another branch does not apply here
		sm.branch(u1);
		sm.appendContextEdit(u1, null);
		sm.appendMessage(user("on the other branch"));
		sm.branch(a2);
		sm.appendMessage(user("back on the first branch"));
	},
	edits_and_compaction(sm) {
		const u1 = sm.appendMessage(user("old question"));
		sm.appendMessage(assistant([{ type: "text", text: "old answer" }]));
		const u2 = sm.appendMessage(user("kept question"));
		const a2 = sm.appendMessage(assistant([{ type: "text", text: "kept answer" }]));
		sm.appendContextEdit(u1, { content: "edit of a summarised entry" });
		const keep = sm.appendMessage(user("first kept"));
		sm.appendContextEdit(u2, { content: "an edit made before the kept range" });
		sm.appendContextEdit(keep, { content: "an edit inside the kept range" });
		sm.appendMessage(assistant([{ type: "text", text: "answer" }]));
		sm.appendCompaction("summary of the old part", keep, 12345);
		sm.appendContextEdit(keep, { content: "an edit after the compaction wins" });
		sm.appendContextEdit(a2, null); // target summarised away: nothing to omit
		sm.appendMessage(user("after compaction"));
	},
	system_messages(sm) {
		sm.appendMessage(system("You are pi, version one.", { toolsAdded: [tool("read"), tool("bash")] }));
		sm.appendModelChange("openai", "gpt-5");
		sm.appendThinkingLevelChange("high");
		const u1 = sm.appendMessage(user("hello with a system prompt"));
		sm.appendMessage(assistant([{ type: "text", text: "hi" }]));
		sm.appendMessage(system("You are pi, version two.", { toolsAdded: [tool("edit")], toolsRemoved: [{ name: "bash" }] }));
		const u2 = sm.appendMessage(user("second question"));
		sm.appendMessage(assistant([{ type: "text", text: "second answer" }]));
		// the compaction keeps the system prompt that was current (pi puts it in systemMessage)
		sm.appendCompaction("summary with a system message", u1, 5000);
		sm.appendMessage(user("after the first compaction"));
		sm.appendMessage(assistant([{ type: "text", text: "fine" }]));
		sm.appendCompaction("a compaction that keeps nothing", null, 7000);
		sm.appendMessage(user("after keeping nothing"));
		sm.branch(u2);
		sm.appendCompaction("kept range holds a system message", u1, 6000);
		sm.appendMessage(user("on a branch"));
	},
	null_content(sm) {
		sm.appendMessage({ role: "user", content: null, timestamp: ++clock });
		sm.appendMessage({ role: "assistant", provider: "openai", model: "gpt-5", usage, stopReason: "stop", timestamp: ++clock });
		sm.appendMessage({ role: "toolResult", toolCallId: "c9", toolName: "bash", content: null, isError: false, timestamp: ++clock });
		sm.appendMessage({ role: "system", content: null, timestamp: ++clock });
		sm.appendCustomMessageEntry("nothing", null, true);
		raw(sm, { type: "custom_message", id: "c0000001", customType: "no-content", display: true });
		sm.appendMessage(user("and a real question"));
	},
	usage_entries(sm) {
		const u1 = sm.appendMessage(user("hello usage"));
		const warm = sm.appendUsage("cache_warm", "openai", "gpt-5", usage, "warming");
		sm.appendLabelChange(warm.id, "on-usage");
		sm.appendLabelChange(u1, "first");
		sm.appendMessage(assistant([{ type: "text", text: "answer" }]));
		sm.appendUsage("cache_warm", "openai", "gpt-5", usage); // the leaf: pi's /tree still hides it
	},
	read_ranges(sm) {
		sm.appendMessage(user("read these"));
		const calls = [
			["read", { path: `${HOME}/proj/a.py`, offset: 10, limit: 20 }],
			["read", { path: `${HOME}/proj/b.py`, offset: null, limit: null }],
			["read", { path: `${HOME}/proj/c.py`, offset: "5", limit: "3" }],
			["read", { path: `${HOME}/proj/d.py`, offset: " 7 ", limit: null }],
			["read", { path: `${HOME}/proj/e.py`, offset: "abc", limit: 5 }],
			["read", { path: `${HOME}/proj/f.py`, offset: 4, limit: "x" }],
			["read", { path: `${HOME}/proj/g.py`, offset: null, limit: 30 }],
			["read", { path: `${HOME}/proj/h.py`, offset: 1.5, limit: 2 }],
			["read", { path: `${HOME}/proj/i.py`, offset: "0x10", limit: "1e2" }],
			["read", { path: `${HOME}/proj/j.py`, offset: 1, limit: 0 }],
			["read", { path: `${HOME}/proj/k.py`, offset: true, limit: 2 }],
			["read", { path: `${HOME}/proj/l.py`, offset: "", limit: 2 }],
			["read", { path: `${HOME}/proj/m.py`, offset: -3, limit: 1 }],
			["read", { path: `${HOME}/proj/n.py`, offset: "Infinity", limit: 1 }],
			["read", { file_path: `${HOME}/proj/o.py`, offset: 2 }],
		];
		calls.forEach(([name, args], i) => {
			sm.appendMessage(assistant([toolCall(`r${i}`, name, args)], { stopReason: "toolUse" }));
			sm.appendMessage(toolResult(`r${i}`, name, "ok"));
		});
		sm.appendMessage(assistant([{ type: "text", text: "done reading" }]));
	},
	home_paths(sm) {
		sm.appendMessage(user("paths"));
		const paths = [HOME, `${HOME}/`, `${HOME}/proj/../notes.md`, `${HOME}//a/./b.py`, `${HOME}2/x.py`,
			`${HOME}x`, "proj/rel.py", "/etc/hosts", `/${HOME}/deep.py`];
		paths.forEach((p, i) => {
			const name = ["read", "write", "edit", "ls", "grep", "find"][i % 6];
			const args = name === "grep" || name === "find" ? { pattern: "TODO", path: p } : { path: p };
			sm.appendMessage(assistant([toolCall(`h${i}`, name, args)], { stopReason: "toolUse" }));
			sm.appendMessage(toolResult(`h${i}`, name, "ok"));
		});
		sm.appendMessage(assistant([{ type: "text", text: "done" }]));
	},
	unknown_types(sm) {
		sm.appendMessage(user("before a port's entries"));
		raw(sm, { type: "leaf", id: "f0000001", targetId: "nothing" });
		sm.appendMessage(assistant([{ type: "text", text: "after" }]));
		raw(sm, { type: "future_kind", id: "f0000002" });
	},
};

function rows(sm, filter, search) {
	try {
		return drawRows(sm, filter, search);
	} catch (e) {
		return { error: String(e.message) }; // pi's /tree fails on this file (null custom_message content)
	}
}

function drawRows(sm, filter, search) {
	const selector = new TreeSelectorComponent(sm.getTree(), sm.getLeafId(), 4 * (sm.getEntries().length + 10),
		() => {}, () => {}, () => {}, undefined, filter);
	if (search) for (const ch of search) selector.handleInput(ch);
	const list = selector.getTreeList();
	const visible = list.filteredNodes;
	// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI stripping
	const lines = list.render(1_000_000_000).map((l) => l.replace(/\x1b\[[0-?]*[ -/]*[@-~]/g, ""));
	return { ids: visible.map((f) => f.node.entry.id),
		rows: visible.length ? lines.slice(0, -1).map((l) => l.slice(2).trimEnd()) : [] };
}

for (const [name, build] of Object.entries(builders)) {
	const tmp = mkdtempSync(join(out, ".tmp-"));
	const sm = SessionManager.create(CWD, tmp);
	build(sm);
	const file = join(out, `${name}.jsonl`);
	renameSync(sm.getSessionFile(), file);
	rmSync(tmp, { recursive: true, force: true });
	const read = SessionManager.open(file, out); // what pi reads back, raw lines included
	const entries = read.getEntries();
	const contexts = {};
	// the context at every entry (long files: the leaf's only, their point is the rows)
	for (const e of entries.length <= 20 ? entries : []) contexts[e.id] = buildSessionContext(entries, e.id);
	const graph = {};
	for (const filter of FILTERS) graph[filter] = rows(read, filter);
	const search = {};
	for (const q of SEARCHES) search[q] = rows(read, "all", q).ids ?? null;
	writeFileSync(join(out, `${name}.pi.json`), `${JSON.stringify({ version: "1.5.2", home: HOME,
		leafId: read.getLeafId(), context: read.buildSessionContext(), contexts, graph, search })}\n`);
	console.log(file);
}

// Files as other writers leave them: what pi 1.5.2 makes of each when it opens it
// (a copy: pi appends a missing final newline, and stree must not write on read).
const H = JSON.stringify({ type: "session", version: 3, id: "0199a1b2-0000-7000-8000-0000000f11e5",
	timestamp: "2026-11-01T00:00:00.000Z", cwd: CWD });
const E1 = JSON.stringify({ type: "message", id: "aaaa0001", parentId: null, timestamp: "2026-11-01T00:00:01.000Z",
	message: { role: "user", content: "hi", timestamp: 1 } });
const E2 = JSON.stringify({ type: "message", id: "aaaa0002", parentId: "aaaa0001", timestamp: "2026-11-01T00:00:02.000Z",
	message: { role: "user", content: "again", timestamp: 2 } });
const files = {
	bom: `\ufeff${H}\n${E1}\n`,
	blank_lines_first: `\n  \n${H}\n${E1}\n`,
	garbage_first: `{garbage\n${H}\n${E1}\n`,
	number_first: `5\n${H}\n${E1}\n`,
	null_first: `null\n${H}\n${E1}\n`,
	falsy_lines: `${H}\n0\nfalse\n""\nnull\n${E1}\n`,
	unicode_space_line: `\u00a0\n${H}\n${E1}\n`,
	no_final_newline: `${H}\n${E1}\n${E2}`,
	unicode_space_at_end: `${H}\n${E1}\n${E2}\u00a0`,
	unicode_space_at_start: `\u00a0${H}\n${E1}\n`,
	entry_first: `${E1}\n${H}\n`,
	crlf: `${H}\r\n${E1}\r\n`,
};
const filesDir = join(out, "files");
mkdirSync(filesDir, { recursive: true });
const verdicts = {};
for (const [name, text] of Object.entries(files)) {
	const file = join(filesDir, `${name}.jsonl`);
	writeFileSync(file, text);
	const tmp = mkdtempSync(join(out, ".tmp-"));
	const copy = join(tmp, "s.jsonl");
	copyFileSync(file, copy);
	try {
		const sm = SessionManager.open(copy, tmp);
		verdicts[name] = { sessionId: sm.getSessionId(), entries: sm.getEntries().map((e) => e.id),
			leafId: sm.getLeafId(), appendedNewline: readFileSync(copy, "utf8") === `${text}\n` };
	} catch (e) {
		verdicts[name] = { error: String(e.message).split(":")[0] };
	}
	rmSync(tmp, { recursive: true, force: true });
}
writeFileSync(join(filesDir, "files.pi.json"), `${JSON.stringify({ version: "1.5.2", verdicts }, null, 1)}\n`);
console.log(filesDir);
