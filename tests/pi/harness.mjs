#!/usr/bin/env node
// Interop harness: asks the real pi coding agent (@mariozechner/pi-coding-agent,
// pinned in package.json) what it sees in a session file. See README.md.
//
// Every subcommand prints exactly one JSON document on stdout. On error it prints
// a message on stderr and exits non-zero (2 = usage error, 3 = pi itself would loop
// forever on this file (parentId cycle), 1 = any other error).
//
// Startup time matters (the Python tests call this many times), so pi's modules are
// imported lazily per subcommand straight from the package's dist/ folder instead of
// through the package index (which loads the whole agent, ~1.3 s).

import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { parentPort, Worker, workerData } from "node:worker_threads";

const PI_DIST = new URL("./", import.meta.resolve("@mariozechner/pi-coding-agent"));
const piModule = (rel) => import(new URL(rel, PI_DIST).href);

class UsageError extends Error {}

const USAGE = `usage:
  harness.mjs inspect FILE [--context-at ID|null ...] [--in-place]
  harness.mjs graph FILE [--filter default|no-tools|user-only|labeled-only|all] [--search QUERY] [--leaf ID|null]
  harness.mjs branch-prep FILE --from OLD_LEAF_ID|null --to TARGET_ID [--budget N]
  harness.mjs navigate FILE TARGET_ID [--summary TEXT] [--pi-format] [--label NAME] [--budget N]
  harness.mjs summarize FILE --from OLD_LEAF_ID|null --to TARGET_ID --base-url URL
              --api openai-completions|anthropic-messages --model ID [--api-key KEY]
              [--context-window N] [--instructions TEXT] [--replace-instructions]
  harness.mjs batch    < one JSON array of the above arguments per line`;

// ---------------------------------------------------------------------------
// Argument parsing
// ---------------------------------------------------------------------------

/**
 * spec: { name: "value" | "multi" | "flag" }. Returns { positional, opts }.
 */
function parseArgs(argv, spec) {
	const positional = [];
	const opts = {};
	for (let i = 0; i < argv.length; i++) {
		const a = argv[i];
		if (a.startsWith("--") && a.length > 2) {
			let name = a.slice(2);
			let inline;
			const eq = name.indexOf("=");
			if (eq >= 0) {
				inline = name.slice(eq + 1);
				name = name.slice(0, eq);
			}
			const kind = spec[name];
			if (!kind) throw new UsageError(`unknown option --${name}`);
			if (kind === "flag") {
				if (inline !== undefined) throw new UsageError(`option --${name} takes no value`);
				opts[name] = true;
				continue;
			}
			let value = inline;
			if (value === undefined) {
				if (i + 1 >= argv.length) throw new UsageError(`option --${name} needs a value`);
				value = argv[++i];
			}
			if (kind === "multi") (opts[name] ??= []).push(value);
			else opts[name] = value;
		} else if (a === "--") {
			positional.push(...argv.slice(i + 1));
			break;
		} else {
			positional.push(a);
		}
	}
	return { positional, opts };
}

function needPositional(positional, n, what) {
	if (positional.length !== n) throw new UsageError(`expected ${what}`);
	return positional;
}

/** "null" (literal) -> null, anything else unchanged. */
const nullable = (s) => (s === "null" ? null : s);

function parseBudget(s) {
	if (s === undefined) return 0;
	if (!/^\d+$/.test(s)) throw new UsageError(`--budget must be a non-negative integer, got ${s}`);
	return Number(s);
}

// ---------------------------------------------------------------------------
// Opening sessions without touching the caller's file
// ---------------------------------------------------------------------------

/**
 * SessionManager.open() rewrites the file when it migrates v1/v2 sessions and when the
 * file is empty or has no valid header, and navigation appends to it. So, unless
 * inPlace, work on a copy in a fresh temp dir (also used as the session dir so pi never
 * creates ~/.pi/... directories). Returns { sm, rewritten, cleanup }.
 */
async function openSession(file, { inPlace = false } = {}) {
	const { SessionManager } = await piModule("core/session-manager.js");
	let original;
	try {
		original = readFileSync(file);
	} catch (e) {
		throw new Error(`cannot read ${file}: ${e.message}`);
	}
	let path = file;
	let dir;
	if (!inPlace) {
		// (a graph worker puts its copy inside the main thread's temp dir, so a killed
		// worker leaves nothing behind)
		dir = mkdtempSync(join(workerData?.tmpParent ?? tmpdir(), "stree-pi-"));
		path = join(dir, basename(file) || "session.jsonl");
		copyFileSync(file, path);
	}
	const cleanup = () => {
		if (dir) rmSync(dir, { recursive: true, force: true });
	};
	try {
		const sm = inPlace ? SessionManager.open(path) : SessionManager.open(path, dir);
		let rewritten = false;
		try {
			rewritten = !readFileSync(path).equals(original);
		} catch {
			rewritten = true;
		}
		return { sm, rewritten, cleanup };
	} catch (e) {
		cleanup();
		throw e;
	}
}

// ---------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------

function emit(doc) {
	// Top-level keys are always present (undefined -> null). Nested values are serialized
	// exactly like pi serializes entries (undefined fields are omitted).
	const top = {};
	for (const [k, v] of Object.entries(doc)) top[k] = v === undefined ? null : v;
	sink(JSON.stringify(top));
}

let sink = (text) => process.stdout.write(`${text}\n`);
/** argv of the command being run (differs from process.argv in batch mode) */
let currentArgv = process.argv.slice(2);

// ---------------------------------------------------------------------------
// Guard against inputs on which pi loops forever
// ---------------------------------------------------------------------------

class PiHangsError extends Error {}

/**
 * pi walks parent chains with `while (cur) cur = cur.parentId ? byId.get(cur.parentId) : undefined`
 * (buildSessionContext, getBranch, TreeList) and getTree() links nodes by id (one node per
 * id, last entry wins). A parentId cycle (incl. parentId === own id, or a cycle created
 * by duplicate ids) therefore makes pi spin forever (and eat memory). Synchronous loops
 * cannot be interrupted, so detect these cases up front and fail with exit code 3.
 */
function makeCycleGuard(sm) {
	const entries = sm.getEntries();
	const byId = new Map();
	for (const e of entries) byId.set(e.id, e);
	// badChain: ids whose parent chain (as buildSessionContext/getBranch walk it) never ends.
	const state = new Map(); // id -> 1 (on current walk) | 2 (done, ok) | 3 (done, loops)
	const badChain = new Set();
	for (const start of byId.keys()) {
		if (state.has(start)) continue;
		const walk = [];
		let cur = start;
		let verdict = 2;
		while (true) {
			const st = state.get(cur);
			if (st === 1) {
				verdict = 3; // reached an id already on this walk: cycle
				break;
			}
			if (st === 2 || st === 3) {
				verdict = st;
				break;
			}
			state.set(cur, 1);
			walk.push(cur);
			const e = byId.get(cur);
			if (!e.parentId || !byId.has(e.parentId)) break;
			cur = e.parentId;
		}
		for (const id of walk) {
			state.set(id, verdict);
			if (verdict === 3) badChain.add(id);
		}
	}
	// getTree(): node graph (one node per id; edges pushed once per entry line). A cycle
	// reachable from a root makes its child-sorting loop run forever.
	let treeCycle = null;
	if (byId.size !== entries.length) {
		const children = new Map();
		const roots = [];
		for (const e of entries) {
			if (e.parentId === null || e.parentId === e.id || !byId.has(e.parentId)) roots.push(e.id);
			else {
				if (!children.has(e.parentId)) children.set(e.parentId, []);
				children.get(e.parentId).push(e.id);
			}
		}
		const color = new Map(); // 1 = on stack, 2 = finished
		for (const r of roots) {
			if (color.has(r) || treeCycle) continue;
			const stack = [[r, 0]];
			color.set(r, 1);
			while (stack.length > 0 && !treeCycle) {
				const top = stack[stack.length - 1];
				const kids = children.get(top[0]) ?? [];
				if (top[1] >= kids.length) {
					color.set(top[0], 2);
					stack.pop();
					continue;
				}
				const k = kids[top[1]++];
				const c = color.get(k);
				if (c === 1) treeCycle = k;
				else if (c === undefined) {
					color.set(k, 1);
					stack.push([k, 0]);
				}
			}
		}
	}
	return {
		/** Throw if getTree() would loop forever. */
		tree() {
			if (treeCycle !== null) {
				throw new PiHangsError(`pi's getTree() loops forever: duplicate ids form a cycle through ${treeCycle}`);
			}
		},
		/** Throw if walking the parent chain from id (as pi resolves it) would loop forever. */
		chain(id, what) {
			if (id === null || id === undefined) return;
			if (badChain.has(id)) {
				throw new PiHangsError(`pi loops forever walking the parent chain of ${what} ${id} (parentId cycle)`);
			}
		},
		/** id as buildSessionContext resolves it: unknown -> last entry in file. */
		resolveLeaf(id) {
			if (id === null) return null;
			if (id !== undefined && byId.has(id)) return id;
			return entries.length > 0 ? entries[entries.length - 1].id : null;
		},
		badChain,
	};
}

// ---------------------------------------------------------------------------
// inspect
// ---------------------------------------------------------------------------

/** Iterative (no recursion) flattening of getTree() into id/children records. */
function flattenTree(roots) {
	const nodes = [];
	const seen = new Set();
	// pre-order DFS, children in pi's order (sorted by timestamp in getTree)
	const stack = [];
	for (let i = roots.length - 1; i >= 0; i--) stack.push(roots[i]);
	while (stack.length > 0) {
		const node = stack.pop();
		// Duplicate ids in a file make getTree() share one node object between several
		// parents (possibly cyclically): emit each node once and never loop.
		if (seen.has(node)) continue;
		seen.add(node);
		nodes.push({ id: node.entry.id, children: node.children.map((c) => c.entry.id) });
		for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]);
	}
	return { nodes, roots: roots.map((r) => r.entry.id) };
}

function mapToObject(map) {
	const o = {};
	for (const [k, v] of map) o[k] = v;
	return o;
}

async function cmdInspect(argv) {
	const { positional, opts } = parseArgs(argv, { "context-at": "multi", "in-place": "flag" });
	const [file] = needPositional(positional, 1, "inspect FILE");
	const { buildSessionContext } = await piModule("core/session-manager.js");
	const { sm, rewritten, cleanup } = await openSession(file, { inPlace: !!opts["in-place"] });
	try {
		const guard = makeCycleGuard(sm);
		guard.tree();
		guard.chain(sm.getLeafId(), "leaf");
		for (const id of opts["context-at"] ?? []) guard.chain(guard.resolveLeaf(nullable(id)), "--context-at");
		const entries = sm.getEntries();
		const { nodes, roots } = flattenTree(sm.getTree());
		const contexts = {};
		for (const id of opts["context-at"] ?? []) {
			contexts[id] = buildSessionContext(entries, nullable(id));
		}
		emit({
			header: sm.getHeader(),
			sessionId: sm.getSessionId(),
			rewritten,
			leafId: sm.getLeafId(),
			entries,
			tree: { nodes, roots },
			labels: mapToObject(sm.labelsById),
			labelTimestamps: mapToObject(sm.labelTimestampsById),
			name: sm.getSessionName() ?? null,
			context: sm.buildSessionContext(),
			contexts,
		});
	} finally {
		cleanup();
	}
}

// ---------------------------------------------------------------------------
// graph
// ---------------------------------------------------------------------------

const FILTER_MODES = ["default", "no-tools", "user-only", "labeled-only", "all"];

// CSI (incl. SGR), OSC (BEL or ST terminated), and other 2-char ESC sequences
// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI stripping
const ANSI_RE = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;
const stripAnsi = (s) => s.replace(ANSI_RE, "");

async function cmdGraph(argv) {
	const { positional, opts } = parseArgs(argv, { filter: "value", search: "value", leaf: "value" });
	const [file] = needPositional(positional, 1, "graph FILE");
	const filter = opts.filter ?? "default";
	if (!FILTER_MODES.includes(filter)) throw new UsageError(`--filter must be one of ${FILTER_MODES.join("|")}`);

	const [{ initTheme }, { KeybindingsManager }, tui, { TreeSelectorComponent }] = await Promise.all([
		piModule("modes/interactive/theme/theme.js"),
		piModule("core/keybindings.js"),
		import("@mariozechner/pi-tui"),
		piModule("modes/interactive/components/tree-selector.js"),
	]);
	initTheme("dark");
	// pi's default keybindings (no user keybindings.json): same keys the real /tree sees.
	tui.setKeybindings(new KeybindingsManager());

	const { sm, cleanup } = await openSession(file);
	try {
		const leafId = opts.leaf !== undefined ? nullable(opts.leaf) : sm.getLeafId();
		if (!workerData?.graphWorker) {
			const guard = makeCycleGuard(sm);
			guard.tree();
			guard.chain(leafId, "leaf"); // TreeList.buildActivePath walks the leaf's chain to the end
			// TreeList also walks parent chains of tree nodes until it meets a *visible* node;
			// whether that terminates depends on filter/search. Only when some reachable node
			// has a looping chain (e.g. a root whose parentId is its own id), render in a worker
			// that can be killed if pi spins.
			if (guard.badChain.size > 0 && flattenTree(sm.getTree()).nodes.some((n) => guard.badChain.has(n.id))) {
				emit(await graphInWorker(dirname(sm.getSessionFile())));
				return;
			}
		}
		const tree = sm.getTree();
		const nEntries = sm.getEntries().length;
		// maxVisibleLines = max(5, floor(terminalHeight / 2)) must cover every row
		const terminalHeight = 2 * (nEntries + 10);
		const noop = () => {};
		const selector = new TreeSelectorComponent(tree, leafId, terminalHeight, noop, noop, noop, undefined, filter);
		if (opts.search !== undefined) {
			// pi's search: every keypress goes through TreeList.handleInput (via the component,
			// exactly as the TUI routes it). Note that keys bound to actions (e.g. "L", "T")
			// trigger those actions instead of being typed.
			for (const ch of opts.search) selector.handleInput(ch);
		}
		const list = selector.getTreeList();
		const width = 1_000_000_000;
		const visible = list.filteredNodes;
		let rows = [];
		const lines = list.render(width).map((l) => stripAnsi(l));
		const status = lines.length > 0 ? lines[lines.length - 1].trim() : "";
		if (visible.length > 0) {
			rows = lines.slice(0, -1).map((l) => l.slice(2).trimEnd());
			if (rows.length !== visible.length) {
				throw new Error(`rendered ${rows.length} rows for ${visible.length} visible nodes`);
			}
		}
		const doc = {
			rows,
			ids: visible.map((f) => f.node.entry.id),
			selectedId: list.getSelectedNode()?.entry.id ?? null,
			searchQuery: list.getSearchQuery(),
			filterMode: list.filterMode,
			status,
		};
		if (workerData?.graphWorker) parentPort.postMessage(doc);
		else emit(doc);
	} finally {
		cleanup();
	}
}

/** Re-run this same command in a worker thread; give up (exit 3) if pi spins. */
function graphInWorker(tmpParent) {
	const ms = Number(process.env.HARNESS_HANG_TIMEOUT_MS || 20000);
	return new Promise((resolve, reject) => {
		const worker = new Worker(new URL(import.meta.url), {
			argv: currentArgv,
			workerData: { graphWorker: true, tmpParent },
		});
		let result;
		const timer = setTimeout(() => {
			worker.terminate();
			reject(new PiHangsError(`pi's TreeSelector did not finish within ${ms} ms (parentId cycle, e.g. self-parented root)`));
		}, ms);
		worker.on("message", (doc) => {
			result = doc;
		});
		worker.on("error", (err) => {
			clearTimeout(timer);
			reject(err);
		});
		worker.on("exit", (code) => {
			clearTimeout(timer);
			if (result) resolve(result);
			else reject(new Error(`graph worker exited with code ${code}`));
		});
	});
}

// ---------------------------------------------------------------------------
// branch-prep
// ---------------------------------------------------------------------------

async function loadBranchModules() {
	const [bs, utils, messages] = await Promise.all([
		piModule("core/compaction/branch-summarization.js"),
		piModule("core/compaction/utils.js"),
		piModule("core/messages.js"),
	]);
	return { ...bs, ...utils, ...messages };
}

async function cmdBranchPrep(argv) {
	const { positional, opts } = parseArgs(argv, { from: "value", to: "value", budget: "value" });
	const [file] = needPositional(positional, 1, "branch-prep FILE --from ID|null --to ID");
	if (opts.from === undefined || opts.to === undefined) throw new UsageError("--from and --to are required");
	const budget = parseBudget(opts.budget);
	const pi = await loadBranchModules();
	const { sm, cleanup } = await openSession(file);
	try {
		const from = nullable(opts.from);
		const to = opts.to;
		if (!sm.getEntry(to)) throw new Error(`Entry ${to} not found`);
		const guard = makeCycleGuard(sm);
		guard.chain(from, "--from");
		guard.chain(to, "--to");
		const { entries, commonAncestorId } = pi.collectEntriesForBranchSummary(sm, from, to);
		const { messages, fileOps, totalTokens } = pi.prepareBranchEntries(entries, budget);
		const conversation = pi.serializeConversation(pi.convertToLlm(messages));
		const { readFiles, modifiedFiles } = pi.computeFileLists(fileOps);
		emit({
			commonAncestorId,
			entryIds: entries.map((e) => e.id),
			messageCount: messages.length,
			totalTokens,
			conversation,
			readFiles,
			modifiedFiles,
		});
	} finally {
		cleanup();
	}
}

// ---------------------------------------------------------------------------
// navigate
// ---------------------------------------------------------------------------

// Copied from dist/core/compaction/branch-summarization.js (not exported).
const BRANCH_SUMMARY_PREAMBLE = `The user explored a different conversation branch before returning here.
Summary of that exploration:

`;

function extractUserMessageText(content) {
	// AgentSession._extractUserMessageText
	if (typeof content === "string") return content;
	if (Array.isArray(content)) {
		return content
			.filter((c) => c.type === "text")
			.map((c) => c.text)
			.join("");
	}
	return "";
}

async function cmdNavigate(argv) {
	const { positional, opts } = parseArgs(argv, {
		summary: "value",
		label: "value",
		budget: "value",
		"pi-format": "flag",
	});
	const [file, targetId] = needPositional(positional, 2, "navigate FILE TARGET_ID");
	const budget = parseBudget(opts.budget);
	const pi = opts.summary !== undefined ? await loadBranchModules() : null;
	const { sm, cleanup } = await openSession(file);
	try {
		const before = sm.fileEntries.length;
		const oldLeafId = sm.getLeafId();
		const result = {
			oldLeafId,
			noop: false,
			leafId: null,
			editorText: null,
			commonAncestorId: null,
			summarizedEntryIds: [],
			summaryEntry: null,
			appendedEntries: [],
			context: null,
		};
		// Mirrors AgentSession.navigateTree (dist/core/agent-session.js) without extensions.
		// (Interactive /tree never even calls it when the selected entry is the current leaf.)
		if (targetId === oldLeafId) {
			makeCycleGuard(sm).chain(oldLeafId, "leaf");
			result.noop = true;
		} else {
			const targetEntry = sm.getEntry(targetId);
			if (!targetEntry) throw new Error(`Entry ${targetId} not found`);
			const guard = makeCycleGuard(sm);
			guard.chain(oldLeafId, "leaf");
			guard.chain(targetId, "target");
			const { entries: toSummarize, commonAncestorId } = (
				pi ?? (await piModule("core/compaction/branch-summarization.js"))
			).collectEntriesForBranchSummary(sm, oldLeafId, targetId);
			result.commonAncestorId = commonAncestorId;
			result.summarizedEntryIds = toSummarize.map((e) => e.id);

			// pi only summarizes when asked AND there is something to summarize.
			let summaryText;
			let summaryDetails;
			if (opts.summary !== undefined && toSummarize.length > 0) {
				const { fileOps } = pi.prepareBranchEntries(toSummarize, budget);
				const { readFiles, modifiedFiles } = pi.computeFileLists(fileOps);
				summaryText = opts["pi-format"]
					? BRANCH_SUMMARY_PREAMBLE + opts.summary + pi.formatFileOperations(readFiles, modifiedFiles)
					: opts.summary;
				summaryDetails = { readFiles, modifiedFiles };
			}

			let newLeafId;
			let editorText;
			if (targetEntry.type === "message" && targetEntry.message.role === "user") {
				newLeafId = targetEntry.parentId;
				editorText = extractUserMessageText(targetEntry.message.content);
			} else if (targetEntry.type === "custom_message") {
				newLeafId = targetEntry.parentId;
				editorText =
					typeof targetEntry.content === "string"
						? targetEntry.content
						: targetEntry.content
								.filter((c) => c.type === "text")
								.map((c) => c.text)
								.join("");
			} else {
				newLeafId = targetId;
			}

			const label = opts.label;
			if (summaryText) {
				const summaryId = sm.branchWithSummary(newLeafId, summaryText, summaryDetails, false);
				result.summaryEntry = sm.getEntry(summaryId);
				if (label) sm.appendLabelChange(summaryId, label);
			} else if (newLeafId === null) {
				sm.resetLeaf();
			} else {
				sm.branch(newLeafId);
			}
			if (label && !summaryText) sm.appendLabelChange(targetId, label);
			result.editorText = editorText ?? null;
		}
		result.leafId = sm.getLeafId();
		result.appendedEntries = sm.fileEntries.slice(before);
		result.context = sm.buildSessionContext();
		emit(result);
	} finally {
		cleanup();
	}
}

// ---------------------------------------------------------------------------
// summarize: pi's own generateBranchSummary against a model server at --base-url
// ---------------------------------------------------------------------------

const APIS = { "openai-completions": "openai", "anthropic-messages": "anthropic" };

async function cmdSummarize(argv) {
	const { positional, opts } = parseArgs(argv, {
		from: "value",
		to: "value",
		"base-url": "value",
		api: "value",
		model: "value",
		"api-key": "value",
		"context-window": "value",
		instructions: "value",
		"replace-instructions": "flag",
	});
	const [file] = needPositional(positional, 1, "summarize FILE --from ID|null --to ID --base-url URL --api API --model ID");
	for (const name of ["from", "to", "base-url", "api", "model"]) {
		if (opts[name] === undefined) throw new UsageError(`--${name} is required`);
	}
	if (!APIS[opts.api]) throw new UsageError(`--api must be one of ${Object.keys(APIS).join("|")}`);
	const contextWindow = parseBudget(opts["context-window"]);
	const pi = await loadBranchModules();
	const { sm, cleanup } = await openSession(file);
	try {
		if (!sm.getEntry(opts.to)) throw new Error(`Entry ${opts.to} not found`);
		const { entries } = pi.collectEntriesForBranchSummary(sm, nullable(opts.from), opts.to);
		// A model as pi's registry describes one; contextWindow 0 = unknown (pi then assumes 128000).
		const model = {
			id: opts.model,
			name: opts.model,
			api: opts.api,
			provider: APIS[opts.api],
			baseUrl: opts["base-url"],
			reasoning: false,
			input: ["text"],
			cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
			contextWindow,
			maxTokens: 8192,
		};
		const result = await pi.generateBranchSummary(entries, {
			model,
			apiKey: opts["api-key"] ?? "harness-key",
			signal: new AbortController().signal,
			customInstructions: opts.instructions,
			replaceInstructions: !!opts["replace-instructions"],
		});
		emit({ entryIds: entries.map((e) => e.id), ...result });
	} finally {
		cleanup();
	}
}

// ---------------------------------------------------------------------------

/**
 * batch: read one JSON array of arguments per stdin line, e.g. ["graph","f.jsonl","--filter","all"],
 * and print one line per request: the command's JSON document, or {"error": msg, "exitCode": n}.
 * Saves the per-process start-up cost (importing pi's TUI/theme takes ~0.5-1 s).
 */
async function cmdBatch(argv) {
	if (argv.length > 0) throw new UsageError("batch takes no arguments (requests come on stdin)");
	const out = (text) => process.stdout.write(`${text}\n`);
	for (const line of readFileSync(0, "utf8").split("\n")) {
		if (!line.trim()) continue;
		let text;
		sink = (t) => {
			text = t;
		};
		try {
			const args = JSON.parse(line);
			if (!Array.isArray(args) || args.length === 0 || !args.every((a) => typeof a === "string")) {
				throw new UsageError("each batch line must be a non-empty JSON array of strings");
			}
			const fn = COMMANDS[args[0]];
			if (!fn || args[0] === "batch") throw new UsageError(`unknown subcommand ${args[0]}`);
			currentArgv = args;
			await fn(args.slice(1));
			if (text === undefined) throw new Error("command produced no output");
			out(text);
		} catch (err) {
			out(JSON.stringify({ error: err?.message ?? String(err), exitCode: exitCodeFor(err) }));
		}
	}
}

const COMMANDS = {
	inspect: cmdInspect,
	graph: cmdGraph,
	"branch-prep": cmdBranchPrep,
	navigate: cmdNavigate,
	summarize: cmdSummarize,
	batch: cmdBatch,
};

function exitCodeFor(err) {
	if (err instanceof PiHangsError) return 3;
	if (err instanceof UsageError) return 2;
	return 1;
}

async function main() {
	const [cmd, ...rest] = process.argv.slice(2);
	if (!cmd || cmd === "-h" || cmd === "--help") {
		process.stderr.write(`${USAGE}\n`);
		process.exitCode = cmd ? 0 : 2;
		return;
	}
	const fn = COMMANDS[cmd];
	if (!fn) throw new UsageError(`unknown subcommand ${cmd}`);
	await fn(rest);
}

if (workerData?.graphWorker) {
	await main(); // errors become the worker's "error" event
} else main().then(
	() => {
		// Do not call process.exit(): let stdout drain (large documents into a pipe).
		// Nothing keeps the loop alive except pi's TreeSelector 100 ms timer for empty trees.
	},
	(err) => {
		const code = exitCodeFor(err);
		let detail = err?.message ?? String(err);
		if (code === 1 && process.env.HARNESS_DEBUG) detail = err?.stack ?? detail;
		process.stderr.write(`harness: ${detail}\n${code === 2 ? `${USAGE}\n` : ""}`);
		process.exitCode = code;
	},
);
