#!/usr/bin/env node
// Interop harness: asks the real pi coding agent what it sees in a session file, at one of
// the pinned versions (see README.md): 0.73.1 (@mariozechner/pi-coding-agent, npm ci of
// package.json, its dist/ modules, any Node >= 20) or 0.87.1 / 1.5.2
// (@earendil-works/pi-coding-agent, unpacked by install.py into versions/V/, the
// self-contained dist/bundle/index.js their own `pi` command runs, Node >= 22.19 from node22/).
//
// The version: a leading `--pi VERSION` argument, else $PI_VERSION, else 1.6.0 (or a newer pi
// unpacked in $STREE_PI_LATEST_DIR, default tests/pi/latest/: see tests/pi/latest.py). Under a Node
// too old for it, the harness runs itself again under tests/pi/node22/bin/node.
//
// Every subcommand prints exactly one JSON document on stdout. On error it prints
// a message on stderr and exits non-zero (2 = usage error, 3 = pi itself would loop
// forever on this file (parentId cycle), 1 = any other error).
//
// Startup time matters (the Python tests call this many times): 0.73.1's modules are
// imported lazily per subcommand straight from the package's dist/ folder instead of
// through the package index (which loads the whole agent, ~1.3 s); a bundle is one import.

import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parentPort, Worker, workerData } from "node:worker_threads";

const HERE = dirname(fileURLToPath(import.meta.url));
const VERSIONS = ["0.73.1", "0.87.1", "1.5.2", "1.6.0"];
const DEFAULT_VERSION = "1.6.0";
const NODE22 = join(HERE, "node22", "bin", "node");

// ---------------------------------------------------------------------------
// Which pi: version, where it lives, and its API behind one interface
// ---------------------------------------------------------------------------

let argvAll = process.argv.slice(2);
let PI_VERSION = workerData?.piVersion ?? process.env.PI_VERSION ?? DEFAULT_VERSION;
if (argvAll[0] === "--pi") {
	PI_VERSION = argvAll[1];
	argvAll = argvAll.slice(2);
} else if (argvAll[0]?.startsWith("--pi=")) {
	PI_VERSION = argvAll[0].slice(5);
	argvAll = argvAll.slice(1);
}
const isBundle = (v) => v !== "0.73.1";
// a newer pi under test (`make test-latest`: tests/pi/latest.py): any version unpacked in
// $STREE_PI_LATEST_DIR (default tests/pi/latest/) as V/, driven as the pinned bundles are
const LATEST_DIR = process.env.STREE_PI_LATEST_DIR || join(HERE, "latest");
const isLatest = (v) => !VERSIONS.includes(v) && /^[0-9A-Za-z.+-]+$/.test(v) && existsSync(join(LATEST_DIR, v, "package.json"));
const packageDir = (v) =>
	isLatest(v)
		? join(LATEST_DIR, v)
		: isBundle(v)
			? join(HERE, "versions", v)
			: join(HERE, "node_modules", "@mariozechner", "pi-coding-agent");

function nodeIsRecentEnough() {
	const [major, minor] = process.versions.node.split(".").map(Number);
	return major > 22 || (major === 22 && minor >= 19);
}

/**
 * The pi API the subcommands use, at PI_VERSION. 0.73.1: modules of dist/ (imported on
 * first use); 0.87.1 and later: everything from dist/bundle/index.js, plus the few things
 * the bundle does not export (the TUI's keybinding registry, found in its chunk; two
 * summary helpers, copied below: unchanged since 0.73.1).
 */
const pi = {
	version: PI_VERSION,
	dir: packageDir(PI_VERSION),
	_bundle: null,
	async bundle() {
		this._bundle ??= await import(pathToFileURL(join(this.dir, "dist", "bundle", "index.js")).href);
		return this._bundle;
	},
	dist(rel) {
		return import(pathToFileURL(join(this.dir, "dist", rel)).href);
	},
	async sessions() {
		if (isBundle(this.version)) return this.bundle();
		return this.dist("core/session-manager.js");
	},
	async branchSummary() {
		if (isBundle(this.version)) {
			const b = await this.bundle();
			return { ...b, computeFileLists, formatFileOperations, BRANCH_SUMMARY_PREAMBLE };
		}
		const [bs, utils, messages] = await Promise.all([
			this.dist("core/compaction/branch-summarization.js"),
			this.dist("core/compaction/utils.js"),
			this.dist("core/messages.js"),
		]);
		return { ...bs, ...utils, ...messages, BRANCH_SUMMARY_PREAMBLE };
	},
	/** { initTheme, TreeSelectorComponent } with pi's default keybindings installed, as /tree sees them. */
	async treeSelector() {
		if (isBundle(this.version)) {
			const b = await this.bundle();
			b.initTheme("dark");
			const setKeybindings = await bundleInternal(this.dir, "setKeybindings");
			// The app's KeybindingsManager (TUI keys + pi's app keys) is not exported: a session
			// selector makes one (KeybindingsManager.create()); a new one of its class has no user keys.
			const noop = () => {};
			const probe = new b.SessionSelectorComponent(async () => [], async () => [], noop, noop, noop, noop);
			setKeybindings(new probe.keybindings.constructor());
			return b;
		}
		const [{ initTheme }, { KeybindingsManager }, tui, { TreeSelectorComponent }] = await Promise.all([
			this.dist("modes/interactive/theme/theme.js"),
			this.dist("core/keybindings.js"),
			import("@mariozechner/pi-tui"),
			this.dist("modes/interactive/components/tree-selector.js"),
		]);
		initTheme("dark");
		tui.setKeybindings(new KeybindingsManager());
		return { initTheme, TreeSelectorComponent };
	},
	/** The text /tree puts in the editor for a user (or custom) message (AgentSession.navigateTree). */
	editorText(content) {
		if (isBundle(this.version)) return contentText(content, "");
		return extractUserMessageText(content);
	},
	cli() {
		return join(this.dir, "dist", "bundle", "cli.js");
	},
};

/**
 * A function of the bundle's TUI that index.js does not export: a chunk exports it either by
 * name (1.5.2) or inside a module namespace object (0.87.1: pi-tui's `dist_exports`).
 */
async function bundleInternal(dir, name) {
	const chunks = join(dir, "dist", "bundle", "chunks");
	for (const f of readdirSync(chunks).sort()) {
		if (!f.endsWith(".js") || !readFileSync(join(chunks, f), "utf8").includes(name)) continue;
		const mod = await import(pathToFileURL(join(chunks, f)).href);
		if (typeof mod[name] === "function") return mod[name];
		for (const value of Object.values(mod)) {
			if (value && typeof value === "object" && typeof value[name] === "function") return value[name];
		}
	}
	throw new Error(`pi ${pi.version}: no bundle chunk exports ${name}`);
}

// Not exported by the bundles; copied from dist/core/compaction/utils.js and
// branch-summarization.js (the same text in 0.73.1, 0.87.1 and 1.5.2).
function computeFileLists(fileOps) {
	const modified = new Set([...fileOps.edited, ...fileOps.written]);
	const readOnly = [...fileOps.read].filter((f) => !modified.has(f)).sort();
	const modifiedFiles = [...modified].sort();
	return { readFiles: readOnly, modifiedFiles };
}

function formatFileOperations(readFiles, modifiedFiles) {
	const sections = [];
	if (readFiles.length > 0) {
		sections.push(`<read-files>\n${readFiles.join("\n")}\n</read-files>`);
	}
	if (modifiedFiles.length > 0) {
		sections.push(`<modified-files>\n${modifiedFiles.join("\n")}\n</modified-files>`);
	}
	if (sections.length === 0) return "";
	return `\n\n${sections.join("\n\n")}`;
}

const BRANCH_SUMMARY_PREAMBLE = `The user explored a different conversation branch before returning here.
Summary of that exploration:

`;

/** pi-ai's contentText (0.87.1 and later): a string as is, else its text blocks joined. */
function contentText(content, separator = "\n") {
	return typeof content === "string"
		? content
		: content
				.filter((block) => block.type === "text")
				.map((block) => block.text)
				.join(separator);
}

function extractUserMessageText(content) {
	// AgentSession._extractUserMessageText (0.73.1)
	if (typeof content === "string") return content;
	if (Array.isArray(content)) {
		return content
			.filter((c) => c.type === "text")
			.map((c) => c.text)
			.join("");
	}
	return "";
}

class UsageError extends Error {}

const USAGE = `usage: harness.mjs [--pi 0.73.1|0.87.1|1.5.2|1.6.0] SUBCOMMAND ...
  harness.mjs inspect FILE [--context-at ID|null ...] [--in-place]
  harness.mjs graph FILE [--filter default|no-tools|user-only|labeled-only|all] [--search QUERY] [--leaf ID|null]
  harness.mjs branch-prep FILE --from OLD_LEAF_ID|null --to TARGET_ID [--budget N]
  harness.mjs navigate FILE TARGET_ID [--summary TEXT] [--pi-format] [--label NAME] [--budget N]
  harness.mjs summarize FILE --from OLD_LEAF_ID|null --to TARGET_ID --base-url URL
              --api openai-completions|anthropic-messages --model ID [--api-key KEY]
              [--context-window N] [--instructions TEXT] [--replace-instructions]
  harness.mjs clone FILE TARGET_ID [--position at|before]
  harness.mjs write FILE --ops JSON [--cwd DIR]
  harness.mjs rpc FILE --commands JSON [--in-place] [--timeout-ms N]   (0.87.1 and later)
  harness.mjs request FILE --api openai-completions|anthropic-messages [--model ID]   (0.87.1 and later)
  harness.mjs tools [--cwd DIR]   (0.87.1 and later: pi's built-in tool definitions)
  harness.mjs body FILE --api openai-completions|anthropic-messages [--model ID] [--provider NAME]
              [--reasoning] [--thinking LEVEL] [--max-tokens N] [--context-window N] [--no-images]
              [--system-prompt TEXT] [--tools JSON] [--at ID|null]   (1.6.0: the body pi-ai posts)
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
	const { SessionManager } = await pi.sessions();
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
let currentArgv = argvAll;

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
	const { buildSessionContext } = await pi.sessions();
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

	// pi's default keybindings (no user keybindings.json): same keys the real /tree sees.
	const { TreeSelectorComponent } = await pi.treeSelector();

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
			workerData: { graphWorker: true, tmpParent, piVersion: pi.version },
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


async function cmdBranchPrep(argv) {
	const { positional, opts } = parseArgs(argv, { from: "value", to: "value", budget: "value" });
	const [file] = needPositional(positional, 1, "branch-prep FILE --from ID|null --to ID");
	if (opts.from === undefined || opts.to === undefined) throw new UsageError("--from and --to are required");
	const budget = parseBudget(opts.budget);
	const api = await pi.branchSummary();
	const { sm, cleanup } = await openSession(file);
	try {
		const from = nullable(opts.from);
		const to = opts.to;
		if (!sm.getEntry(to)) throw new Error(`Entry ${to} not found`);
		const guard = makeCycleGuard(sm);
		guard.chain(from, "--from");
		guard.chain(to, "--to");
		const { entries, commonAncestorId } = api.collectEntriesForBranchSummary(sm, from, to);
		const { messages, fileOps, totalTokens } = api.prepareBranchEntries(entries, budget);
		const conversation = api.serializeConversation(api.convertToLlm(messages));
		const { readFiles, modifiedFiles } = api.computeFileLists(fileOps);
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

async function cmdNavigate(argv) {
	const { positional, opts } = parseArgs(argv, {
		summary: "value",
		label: "value",
		budget: "value",
		"pi-format": "flag",
	});
	const [file, targetId] = needPositional(positional, 2, "navigate FILE TARGET_ID");
	const budget = parseBudget(opts.budget);
	const api = await pi.branchSummary();
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
			const { entries: toSummarize, commonAncestorId } = api.collectEntriesForBranchSummary(
				sm,
				oldLeafId,
				targetId,
			);
			result.commonAncestorId = commonAncestorId;
			result.summarizedEntryIds = toSummarize.map((e) => e.id);

			// pi only summarizes when asked AND there is something to summarize.
			let summaryText;
			let summaryDetails;
			if (opts.summary !== undefined && toSummarize.length > 0) {
				const { fileOps } = api.prepareBranchEntries(toSummarize, budget);
				const { readFiles, modifiedFiles } = api.computeFileLists(fileOps);
				summaryText = opts["pi-format"]
					? api.BRANCH_SUMMARY_PREAMBLE + opts.summary + api.formatFileOperations(readFiles, modifiedFiles)
					: opts.summary;
				summaryDetails = { readFiles, modifiedFiles };
			}

			let newLeafId;
			let editorText;
			if (targetEntry.type === "message" && targetEntry.message.role === "user") {
				newLeafId = targetEntry.parentId;
				editorText = pi.editorText(targetEntry.message.content);
			} else if (targetEntry.type === "custom_message") {
				newLeafId = targetEntry.parentId;
				editorText = contentText(targetEntry.content, ""); // (0.73.1: the same code, inline)
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
		reasoning: "flag",
		"thinking-level": "value",
	});
	const [file] = needPositional(positional, 1, "summarize FILE --from ID|null --to ID --base-url URL --api API --model ID");
	for (const name of ["from", "to", "base-url", "api", "model"]) {
		if (opts[name] === undefined) throw new UsageError(`--${name} is required`);
	}
	if (!APIS[opts.api]) throw new UsageError(`--api must be one of ${Object.keys(APIS).join("|")}`);
	const contextWindow = parseBudget(opts["context-window"]);
	const api = await pi.branchSummary();
	const { sm, cleanup } = await openSession(file);
	try {
		if (!sm.getEntry(opts.to)) throw new Error(`Entry ${opts.to} not found`);
		const { entries } = api.collectEntriesForBranchSummary(sm, nullable(opts.from), opts.to);
		// A model as pi's registry describes one; contextWindow 0 = unknown (pi then assumes 128000).
		const model = {
			id: opts.model,
			name: opts.model,
			api: opts.api,
			provider: APIS[opts.api],
			baseUrl: opts["base-url"],
			reasoning: !!opts.reasoning,
			input: ["text"],
			cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
			contextWindow,
			maxTokens: 8192,
		};
		const result = await api.generateBranchSummary(entries, {
			thinkingLevel: opts["thinking-level"], // (0.87.1 and later; 0.73.1 ignores it)
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
// clone: what pi's /clone (position "at") and /fork (position "before") write
// ---------------------------------------------------------------------------

/**
 * AgentSessionRuntime.fork (the code behind /clone and /fork, and RPC's clone/fork) on a copy:
 * SessionManager.open(file, dir).createBranchedSession(leaf) writes the new session file
 * into dir. pi writes it only once it holds a conversation (0.73.1: an assistant message;
 * 0.87.1 and later: a user or assistant message), and then opens it (0.73.1 reopens the
 * path it returned, 0.87.1 and later keep the manager). `context` is what pi then holds.
 * Label entries are dropped and re-made for the kept path: 0.73.1 just drops them, so an
 * entry whose parent was a label keeps that parentId (`orphans`); 0.79.2 and later re-chain
 * parent ids across the dropped labels (and remap a firstKeptEntryId that named one).
 */
async function cmdClone(argv) {
	const { positional, opts } = parseArgs(argv, { position: "value" });
	const [file, targetId] = needPositional(positional, 2, "clone FILE TARGET_ID");
	const position = opts.position ?? "at";
	if (!["at", "before"].includes(position)) throw new UsageError("--position must be at|before");
	const { SessionManager } = await pi.sessions();
	const { sm, cleanup } = await openSession(file);
	try {
		const dir = dirname(sm.getSessionFile());
		const source = sm.getSessionFile();
		const selected = sm.getEntry(targetId);
		if (!selected) throw new Error("Invalid entry ID for forking");
		const guard = makeCycleGuard(sm);
		guard.chain(targetId, "target");
		let leaf = targetId;
		let selectedText = null;
		if (position === "before") {
			if (selected.type !== "message" || selected.message.role !== "user") {
				throw new Error("Invalid entry ID for forking");
			}
			leaf = selected.parentId;
			selectedText = pi.editorText(selected.message.content);
		}
		let manager;
		let newFile;
		if (!leaf) {
			// forking before the first message: an empty new session
			manager = SessionManager.create(sm.getCwd(), dir);
			manager.newSession({ parentSession: source });
			newFile = manager.getSessionFile();
		} else {
			newFile = sm.createBranchedSession(leaf);
			manager = pi.version === "0.73.1" ? SessionManager.open(newFile, dir) : sm;
		}
		const written = existsSync(newFile);
		const lines = written
			? readFileSync(newFile, "utf8")
					.split("\n")
					.filter((l) => l.trim())
					.map((l) => JSON.parse(l))
			: manager.fileEntries;
		const entries = lines.filter((e) => e.type !== "session");
		const ids = new Set(entries.map((e) => e.id));
		emit({
			written,
			header: lines.find((e) => e.type === "session") ?? null,
			parentSessionIsSource: (lines.find((e) => e.type === "session")?.parentSession ?? null) === source,
			entries,
			orphans: entries.filter((e) => e.parentId !== null && !ids.has(e.parentId)).map((e) => e.id),
			leafId: manager.getLeafId(),
			selectedText,
			labels: mapToObject(manager.labelsById),
			context: manager.buildSessionContext(),
		});
	} finally {
		cleanup();
	}
}

// ---------------------------------------------------------------------------
// write: pi's own writers (SessionManager methods) build a session file
// ---------------------------------------------------------------------------

const WRITE_METHODS = new Set([
	"appendMessage",
	"appendThinkingLevelChange",
	"appendModelChange",
	"appendCompaction",
	"appendCustomEntry",
	"appendCustomMessageEntry",
	"appendSessionInfo",
	"appendLabelChange",
	"appendContextEdit", // 1.x
	"appendUsage", // 1.x
	"branch",
	"branchWithSummary",
	"resetLeaf",
]);

/** {"$ref": i} anywhere in an op's arguments -> the id op i returned. */
function resolveRefs(value, ids) {
	if (Array.isArray(value)) return value.map((v) => resolveRefs(v, ids));
	if (value && typeof value === "object") {
		const keys = Object.keys(value);
		if (keys.length === 1 && keys[0] === "$ref") {
			const i = value.$ref;
			if (!Number.isInteger(i) || i < 0 || i >= ids.length || ids[i] === null) {
				throw new UsageError(`$ref ${JSON.stringify(i)} names no id returned by an earlier op`);
			}
			return ids[i];
		}
		return Object.fromEntries(keys.map((k) => [k, resolveRefs(value[k], ids)]));
	}
	return value;
}

/**
 * Open FILE with pi's SessionManager (in place: this writes), or create it (header cwd =
 * --cwd, default the current directory), then apply each [method, ...args] of --ops in
 * order. Returns what each call returned as `ids` (an entry id, or null), the entries it
 * appended, and the file as pi left it. pi 0.87.1 and later keep a new session in memory
 * until it holds a user or assistant message (`written` false until then).
 */
async function cmdWrite(argv) {
	const { positional, opts } = parseArgs(argv, { ops: "value", cwd: "value" });
	const [file] = needPositional(positional, 1, "write FILE --ops JSON");
	if (opts.ops === undefined) throw new UsageError("--ops is required");
	let ops;
	try {
		ops = JSON.parse(opts.ops);
	} catch (e) {
		throw new UsageError(`--ops is not JSON: ${e.message}`);
	}
	if (!Array.isArray(ops) || !ops.every((op) => Array.isArray(op) && typeof op[0] === "string")) {
		throw new UsageError("--ops must be a JSON array of [method, ...args] arrays");
	}
	const { SessionManager } = await pi.sessions();
	const path = resolve(file);
	const created = !existsSync(path);
	if (created) mkdirSync(dirname(path), { recursive: true });
	const sm = created
		? SessionManager.open(path, dirname(path), resolve(opts.cwd ?? process.cwd()))
		: SessionManager.open(path, dirname(path));
	const before = sm.fileEntries.length;
	const ids = [];
	for (const [method, ...rawArgs] of ops) {
		if (!WRITE_METHODS.has(method)) throw new UsageError(`write: ${method} is not a SessionManager writer`);
		if (typeof sm[method] !== "function") throw new Error(`pi ${pi.version} has no SessionManager.${method}`);
		const result = sm[method](...resolveRefs(rawArgs, ids));
		ids.push(typeof result === "string" ? result : (result?.id ?? null));
	}
	const written = existsSync(path);
	emit({
		created,
		written,
		sessionFile: sm.getSessionFile(),
		header: sm.getHeader(),
		ids,
		appendedEntries: sm.fileEntries.slice(before),
		leafId: sm.getLeafId(),
		fileEntries: written
			? readFileSync(path, "utf8")
					.split("\n")
					.filter((l) => l.trim())
					.map((l) => JSON.parse(l))
			: [],
	});
}

// ---------------------------------------------------------------------------
// rpc: the real `pi --mode rpc` CLI, offline
// ---------------------------------------------------------------------------

/**
 * Start the version's own `pi` command (dist/bundle/cli.js) as `--mode rpc --session FILE`
 * in a temp HOME and agent dir, with no API keys and pi's network switched off
 * (PI_OFFLINE, PI_SKIP_VERSION_CHECK, PI_TELEMETRY=0), send the --commands (a JSON array
 * of command objects, or of command type names), wait for one response per command, then
 * close pi's stdin and wait for it to exit (killed after --timeout-ms). Works on a copy of
 * FILE unless --in-place. Note: pi refuses a session whose header cwd does not exist.
 */
async function cmdRpc(argv) {
	const { positional, opts } = parseArgs(argv, { commands: "value", "in-place": "flag", "timeout-ms": "value" });
	const [file] = needPositional(positional, 1, "rpc FILE --commands JSON");
	if (!isBundle(pi.version)) throw new UsageError(`rpc: pi ${pi.version} is not driven here (0.87.1 and later)`);
	let commands;
	try {
		commands = JSON.parse(opts.commands ?? '["get_state", "get_messages"]');
	} catch (e) {
		throw new UsageError(`--commands is not JSON: ${e.message}`);
	}
	if (!Array.isArray(commands)) throw new UsageError("--commands must be a JSON array");
	commands = commands.map((c, i) => {
		const cmd = typeof c === "string" ? { type: c } : { ...c };
		cmd.id ??= `harness-${i}`;
		return cmd;
	});
	const timeoutMs = Number(opts["timeout-ms"] ?? 60000);
	const home = mkdtempSync(join(workerData?.tmpParent ?? tmpdir(), "stree-pi-rpc-"));
	try {
		let path = resolve(file);
		if (!opts["in-place"]) {
			path = join(home, "session", basename(file) || "session.jsonl");
			mkdirSync(dirname(path));
			copyFileSync(file, path);
		}
		const original = readFileSync(path);
		const env = {
			PATH: process.env.PATH ?? "/usr/bin:/bin",
			HOME: join(home, "home"),
			PI_CODING_AGENT_DIR: join(home, "home", "agent"),
			PI_OFFLINE: "1",
			PI_SKIP_VERSION_CHECK: "1",
			PI_TELEMETRY: "0",
			TZ: process.env.TZ ?? "UTC",
			LANG: "C.UTF-8",
			NO_COLOR: "1",
		};
		mkdirSync(env.PI_CODING_AGENT_DIR, { recursive: true });
		const child = spawn(process.execPath, [pi.cli(), "--mode", "rpc", "--session", path], {
			cwd: home,
			env,
			stdio: ["pipe", "pipe", "pipe"],
		});
		const wanted = new Map(commands.map((c) => [c.id, null]));
		const events = [];
		let stdout = Buffer.alloc(0);
		let stderr = "";
		let closedStdin = false;
		const closeStdin = () => {
			if (!closedStdin) {
				closedStdin = true;
				child.stdin.end();
			}
		};
		child.stdin.on("error", () => {}); // pi gone before it read everything: reported via exit
		child.stderr.on("data", (d) => {
			stderr += d;
		});
		child.stdout.on("data", (d) => {
			stdout = Buffer.concat([stdout, d]);
			let nl = stdout.indexOf(10);
			while (nl >= 0) {
				const line = stdout.subarray(0, nl).toString("utf8").replace(/\r$/, "");
				stdout = stdout.subarray(nl + 1);
				nl = stdout.indexOf(10);
				if (!line.trim()) continue;
				const record = JSON.parse(line); // strict JSONL: split on LF only (U+2028 is data)
				if (record.type === "response" && wanted.has(record.id) && wanted.get(record.id) === null) {
					wanted.set(record.id, record);
				} else events.push(record);
				if ([...wanted.values()].every((r) => r !== null)) closeStdin();
			}
		});
		const exit = new Promise((resolveExit) => child.on("close", (code, signal) => resolveExit({ code, signal })));
		for (const c of commands) child.stdin.write(`${JSON.stringify(c)}\n`);
		let timedOut = false;
		const timer = setTimeout(() => {
			timedOut = true;
			child.kill("SIGKILL");
		}, timeoutMs);
		const { code, signal } = await exit;
		clearTimeout(timer);
		const missing = [...wanted].filter(([, r]) => r === null).map(([id]) => id);
		if (timedOut || missing.length > 0) {
			throw new Error(
				`pi ${pi.version} --mode rpc ${timedOut ? `did not finish within ${timeoutMs} ms` : `exited (code ${code}, signal ${signal})`}` +
					` without answering ${missing.join(", ") || "-"}: ${stderr.trim().slice(-2000)}`,
			);
		}
		let after;
		try {
			after = readFileSync(path);
		} catch {
			after = null;
		}
		emit({
			sessionFile: path,
			responses: commands.map((c) => wanted.get(c.id)),
			events,
			exitCode: code,
			signal,
			stderr,
			fileChanged: after === null || !after.equals(original),
			// what pi appended to the file (1.5.2 records the thinking level it starts with when the
			// branch to the leaf has no thinking_level_change entry)
			appendedEntries:
				after !== null && after.length >= original.length && after.subarray(0, original.length).equals(original)
					? after
							.subarray(original.length)
							.toString("utf8")
							.split("\n")
							.filter((l) => l.trim())
							.map((l) => JSON.parse(l))
					: null,
		});
	} finally {
		rmSync(home, { recursive: true, force: true });
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
			let rest = args;
			if (rest[0] === "--pi") {
				// the version is the process's: a line may only repeat it
				if (rest[1] !== pi.version) throw new UsageError(`this batch runs pi ${pi.version}, not ${rest[1]}`);
				rest = rest.slice(2);
			}
			const fn = COMMANDS[rest[0]];
			if (!fn || rest[0] === "batch") throw new UsageError(`unknown subcommand ${rest[0]}`);
			currentArgv = rest;
			await fn(rest.slice(1));
			if (text === undefined) throw new Error("command produced no output");
			out(text);
		} catch (err) {
			out(JSON.stringify({ error: err?.message ?? String(err), exitCode: exitCodeFor(err) }));
		}
	}
}

// ---------------------------------------------------------------------------
// request: the body pi-ai sends for the session's context (system prompt, tools, messages)
// ---------------------------------------------------------------------------

/**
 * buildSessionContext at the leaf, convertToLlm, then pi-ai's completeSimple against a
 * loopback server that records the request body and answers 500 (no model is asked).
 * -> {body}: the JSON pi's provider posted.
 */
async function cmdRequest(argv) {
	const { positional, opts } = parseArgs(argv, { api: "value", model: "value" });
	const [file] = needPositional(positional, 1, "request FILE --api API");
	if (!APIS[opts.api]) throw new UsageError(`--api must be one of ${Object.keys(APIS).join("|")}`);
	if (!isBundle(pi.version)) throw new UsageError(`request: pi ${pi.version} is not driven here (0.87.1 and later)`);
	const b = await pi.bundle();
	const completeSimple = await bundleInternal(pi.dir, "completeSimple");
	const { createServer } = await import("node:http");
	const { sm, cleanup } = await openSession(file);
	let body = null;
	const server = createServer((req, res) => {
		let data = "";
		req.on("data", (c) => {
			data += c;
		});
		req.on("end", () => {
			body = JSON.parse(data);
			res.writeHead(500, { "content-type": "application/json" });
			res.end("{}");
		});
	});
	try {
		await new Promise((r) => server.listen(0, "127.0.0.1", r));
		const base = `http://127.0.0.1:${server.address().port}`;
		const model = { id: opts.model ?? "m1", name: "m1", api: opts.api, provider: APIS[opts.api],
			baseUrl: opts.api === "anthropic-messages" ? base : `${base}/v1`, reasoning: false, input: ["text", "image"],
			cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 100000, maxTokens: 1000 };
		const context = { messages: b.convertToLlm(sm.buildSessionContext().messages) };
		try {
			await completeSimple(model, context, { apiKey: "harness-key", maxRetries: 0 });
		} catch {
			// the 500 answer: only the request matters
		}
		emit({ body });
	} finally {
		server.close();
		cleanup();
	}
}

/**
 * tools [--cwd DIR] -> {tools: [{name, description, parameters}]}: the definitions of pi's
 * built-in tools (read, bash, edit, write, grep, find, ls) as its create*ToolDefinition make
 * them, with the parameters' JSON schema as pi-ai sends it (JSON.parse(JSON.stringify(...))).
 */
async function cmdTools(argv) {
	const { opts } = parseArgs(argv, { cwd: "value" });
	if (!isBundle(pi.version)) throw new UsageError(`tools: pi ${pi.version} is not driven here (0.87.1 and later)`);
	const b = await pi.bundle();
	const cwd = opts.cwd ?? process.cwd();
	const makers = {
		read: b.createReadToolDefinition, bash: b.createBashToolDefinition, edit: b.createEditToolDefinition,
		write: b.createWriteToolDefinition, grep: b.createGrepToolDefinition, find: b.createFindToolDefinition,
		ls: b.createLsToolDefinition,
	};
	const tools = Object.entries(makers).map(([name, make]) => {
		const def = make(cwd);
		return { name: def.name, description: def.description, parameters: JSON.parse(JSON.stringify(def.parameters)) };
	});
	emit({ tools });
}

/**
 * body FILE --api API [...] -> {body}: the request pi-ai 1.6.0's streamSimple posts for the
 * session's context at --at (default: the leaf), to a loopback server that answers 500. The
 * model: --model (default m1), --provider (default openai|anthropic by api), --reasoning,
 * --max-tokens (default 16384), --context-window (default 128000), --no-images (input text
 * only); --thinking LEVEL is the reasoning level; --system-prompt and --tools (a JSON array
 * of {name, description, parameters}) become the context's systemPrompt and tools.
 */
async function cmdBody(argv) {
	const { positional, opts } = parseArgs(argv, {
		api: "value", model: "value", provider: "value", reasoning: "flag", thinking: "value",
		"max-tokens": "value", "context-window": "value", "no-images": "flag", "system-prompt": "value",
		tools: "value", at: "value", "base-path": "value",
	});
	const [file] = needPositional(positional, 1, "body FILE --api API");
	if (!APIS[opts.api]) throw new UsageError(`--api must be one of ${Object.keys(APIS).join("|")}`);
	if (!isBundle(pi.version)) throw new UsageError(`body: pi ${pi.version} is not driven here (0.87.1 and later)`);
	const b = await pi.bundle();
	const completeSimple = await bundleInternal(pi.dir, "completeSimple");
	const { createServer } = await import("node:http");
	const { sm, cleanup } = await openSession(file);
	let body = null;
	const server = createServer((req, res) => {
		let data = "";
		req.on("data", (c) => {
			data += c;
		});
		req.on("end", () => {
			body = JSON.parse(data);
			res.writeHead(500, { "content-type": "application/json" });
			res.end("{}");
		});
	});
	try {
		await new Promise((r) => server.listen(0, "127.0.0.1", r));
		const base = `http://127.0.0.1:${server.address().port}`;
		const model = { id: opts.model ?? "m1", name: "m1", api: opts.api, provider: opts.provider ?? APIS[opts.api],
			baseUrl: (opts.api === "anthropic-messages" ? base : `${base}/v1`) + (opts["base-path"] ?? ""),
			reasoning: !!opts.reasoning, input: opts["no-images"] ? ["text"] : ["text", "image"],
			cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
			contextWindow: Number(opts["context-window"] ?? 128000), maxTokens: Number(opts["max-tokens"] ?? 16384) };
		const at = opts.at === undefined ? undefined : opts.at === "null" ? null : opts.at;
		const session = at === undefined ? sm.buildSessionContext() : b.buildSessionContext(sm.getEntries(), at);
		const context = { messages: b.convertToLlm(session.messages) };
		if (opts["system-prompt"] !== undefined) context.systemPrompt = opts["system-prompt"];
		if (opts.tools !== undefined) context.tools = JSON.parse(opts.tools);
		try {
			await completeSimple(model, context, { apiKey: "harness-key", maxRetries: 0, reasoning: opts.thinking });
		} catch {
			// the 500 answer: only the request matters
		}
		emit({ body });
	} finally {
		server.close();
		cleanup();
	}
}

const COMMANDS = {
	inspect: cmdInspect,
	graph: cmdGraph,
	"branch-prep": cmdBranchPrep,
	navigate: cmdNavigate,
	summarize: cmdSummarize,
	clone: cmdClone,
	write: cmdWrite,
	rpc: cmdRpc,
	request: cmdRequest,
	tools: cmdTools,
	body: cmdBody,
	batch: cmdBatch,
};

function exitCodeFor(err) {
	if (err instanceof PiHangsError) return 3;
	if (err instanceof UsageError) return 2;
	return 1;
}

async function main() {
	const [cmd, ...rest] = argvAll;
	if (!VERSIONS.includes(pi.version) && !isLatest(pi.version)) {
		throw new UsageError(`unknown pi version ${pi.version} (${VERSIONS.join(", ")}, or one in ${LATEST_DIR})`);
	}
	if (!existsSync(join(pi.dir, "package.json"))) {
		throw new Error(`pi ${pi.version} is not installed in ${pi.dir}: run 'make test' (or python3 tests/pi/install.py)`);
	}
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
} else if (isBundle(pi.version) && !nodeIsRecentEnough()) {
	// pi 0.80 and later need Node >= 22.19: run again under the Node 22 install.py put here
	if (!existsSync(NODE22)) {
		process.stderr.write(`harness: pi ${pi.version} needs Node >= 22.19 (${NODE22} is not installed: run 'make test')\n`);
		process.exitCode = 1;
	} else {
		const r = spawnSync(NODE22, [fileURLToPath(import.meta.url), "--pi", pi.version, ...argvAll], { stdio: "inherit" });
		process.exitCode = r.status ?? 1;
	}
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
