// SPDX-License-Identifier: GPL-2.0-only
// Opens xputop's exports with speedscope's own importer and checks that what
// speedscope shows is what the file says.
//
//   node tests/speedscope.mjs SPEEDSCOPE_PACKAGE_DIR FILE...
//
// The npm package ships speedscope as one browser bundle.  Its importer
// module (importProfileGroupFromText, the code behind "Browse" and
// drag-and-drop) is defined before the app starts, so the bundle is run in a
// bare context up to the end of that module's initializer; nothing of the
// importer is reimplemented here.
//   *.folded      collapsed stacks: the self weight of every stack
//   *.trace.json  trace events: per thread, every frame's calls and time (a
//                 frame is named after the event's name and args, as speedscope
//                 names it)
// Any warning speedscope prints while importing counts as a failure.
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';

const [pkgDir, ...files] = process.argv.slice(2);
if (!pkgDir || !files.length) {
	console.error('usage: node tests/speedscope.mjs SPEEDSCOPE_PACKAGE_DIR FILE...');
	process.exit(2);
}

function loadImporter(dir) {
	const release = path.join(dir, 'dist', 'release');
	const bundle = fs.readdirSync(release).find((f) => /^speedscope-.*\.js$/.test(f));
	if (!bundle)
		throw new Error(`no speedscope-*.js in ${release}`);
	let src = fs.readFileSync(path.join(release, bundle), 'utf8');
	// esbuild: var MOD={};EXPORT(MOD,{...importProfileGroupFromText:()=>...});
	// and later the lazy initializer INIT that the app calls as (INIT(),MOD).
	const exp = src.indexOf('importProfileGroupFromText:()=>');
	const mod = exp < 0 ? null : /var ([\w$]+)=\{\};[\w$]+\(\1,\{[^}]*$/.exec(src.slice(Math.max(0, exp - 400), exp));
	const init = mod && new RegExp(`\\(\\(\\)=>\\(([\\w$]+)\\(\\),${mod[1].replace(/\$/g, '\\$')}\\)\\)`).exec(src);
	const def = init ? src.indexOf(`var ${init[1]}=`) : -1;
	if (def < 0)
		throw new Error(`${bundle}: the importer module was not found (a speedscope version this script does not know)`);
	const end = src.indexOf('});', def) + 3;
	src = `${src.slice(0, end)}globalThis.__importer=(${init[1]}(),${mod[1]});return;${src.slice(end)}`;
	const logs = [];
	const say = (kind) => (...a) => logs.push({ kind, text: a.join(' ') });
	const ctx = {
		console: { log: say('log'), info: say('log'), warn: say('warn'), error: say('error') },
		TextDecoder, TextEncoder, setTimeout, clearTimeout,
	};
	ctx.globalThis = ctx;
	vm.createContext(ctx);
	vm.runInContext(src, ctx, { filename: bundle });
	return { importer: ctx.__importer, logs };
}

// speedscope's view of a profile: each call as a path of frame names with the
// time (value) it opened and closed at.
function calls(profile) {
	const out = [], stack = [];
	profile.forEachCall(
		(node, value) => stack.push({ name: node.frame.name, open: value, child: 0 }),
		(node, value) => {
			const c = stack.pop();
			const total = value - c.open;
			if (stack.length)
				stack[stack.length - 1].child += total;
			out.push({ path: [...stack.map((s) => s.name), c.name], name: c.name, total, self: total - c.child });
		});
	return out;
}

function checkFolded(file, text, group, errors) {
	const want = new Map();
	text.split('\n').forEach((line, i) => {
		if (!line)
			return;
		const m = /^(.+) (\d+)$/.exec(line);
		if (!m)
			return errors.push(`${file}:${i + 1}: not "frames count": ${line}`);
		want.set(m[1], (want.get(m[1]) || 0) + Number(m[2]));
	});
	if (group.profiles.length !== 1)
		return errors.push(`${file}: ${group.profiles.length} profiles, expected 1`);
	const got = new Map();
	for (const c of calls(group.profiles[0])) {
		const key = c.path.join(';');
		if (c.self > 0)
			got.set(key, (got.get(key) || 0) + c.self);
	}
	for (const [stack, w] of want)
		if (got.get(stack) !== w)
			errors.push(`${file}: speedscope has ${got.get(stack) || 0} for "${stack}", the file ${w}`);
	for (const [stack, w] of got)
		if (!want.has(stack))
			errors.push(`${file}: speedscope shows "${stack}" (${w}), which the file does not have`);
	const total = [...want.values()].reduce((a, b) => a + b, 0);
	if (group.profiles[0].getTotalWeight() !== total)
		errors.push(`${file}: total weight ${group.profiles[0].getTotalWeight()}, the file's ${total}`);
	return `${want.size} stacks, weight ${total}`;
}

function checkTrace(file, text, group, errors) {
	const events = JSON.parse(text).traceEvents;
	const threads = new Map();	// "pid:tid" -> { names, frames: name -> {calls, us} }
	for (const e of events) {
		const key = `${e.pid}:${e.tid}`;
		if (!threads.has(key))
			threads.set(key, { names: [], frames: new Map() });
		const t = threads.get(key);
		if (e.ph === 'M' && e.name === 'thread_name')
			t.names.push(e.args.name);
		if (e.ph !== 'X')
			continue;
		// speedscope names a frame after the event's name and its args.
		const name = e.args ? `${e.name} ${JSON.stringify(e.args)}` : e.name;
		const f = t.frames.get(name) || { calls: 0, us: 0 };
		f.calls++;
		f.us += e.dur;
		t.frames.set(name, f);
	}
	const withEvents = [...threads].filter(([, t]) => t.frames.size);
	if (group.profiles.length !== withEvents.length)
		errors.push(`${file}: ${group.profiles.length} profiles, the file has ${withEvents.length} threads with events`);
	let ncalls = 0;
	for (const p of group.profiles) {
		const m = /pid (\d+)\b.*\btid (\d+)\)?$/.exec(p.getName());
		const t = m && threads.get(`${m[1]}:${m[2]}`);
		if (!t) {
			errors.push(`${file}: speedscope made a profile "${p.getName()}" for no thread of the file`);
			continue;
		}
		for (const name of t.names)
			if (!p.getName().includes(name))
				errors.push(`${file}: profile "${p.getName()}" lacks the thread name "${name}"`);
		const got = new Map();
		for (const c of calls(p)) {
			const g = got.get(c.name) || { calls: 0, us: 0 };
			g.calls++;
			g.us += c.total;
			got.set(c.name, g);
		}
		for (const [name, f] of t.frames) {
			const g = got.get(name);
			ncalls += f.calls;
			if (!g || g.calls !== f.calls || Math.abs(g.us - f.us) > 1e-6 * (1 + f.us))
				errors.push(`${file}: ${p.getName()}: "${name}" has ${g ? `${g.calls} calls, ${g.us} us` : 'nothing'} in speedscope, ${f.calls} calls, ${f.us} us in the file`);
		}
		for (const name of got.keys())
			if (!t.frames.has(name))
				errors.push(`${file}: ${p.getName()}: speedscope shows "${name}", which the file does not have there`);
	}
	return `${group.profiles.length} threads, ${ncalls} calls`;
}

const { importer, logs } = loadImporter(pkgDir);
let failed = 0;
for (const file of files) {
	const text = fs.readFileSync(file, 'utf8');
	const errors = [];
	logs.length = 0;
	const group = await importer.importProfileGroupFromText(path.basename(file), text);
	const as = logs.filter((l) => l.kind === 'log' && l.text.startsWith('Importing as')).map((l) => l.text);
	for (const l of logs.filter((l) => l.kind !== 'log' || !l.text.startsWith('Importing as')))
		errors.push(`${file}: speedscope said: ${l.text}`);
	let summary = '';
	if (!group) {
		errors.push(`${file}: speedscope did not recognise the file`);
	} else if (file.endsWith('.folded')) {
		if (as[0] !== 'Importing as collapsed stack format')
			errors.push(`${file}: read as "${as[0]}", not as collapsed stacks`);
		summary = checkFolded(file, text, group, errors);
	} else if (file.endsWith('.trace.json')) {
		if (as[0] !== 'Importing as Trace Event Format profile')
			errors.push(`${file}: read as "${as[0]}", not as trace events`);
		summary = checkTrace(file, text, group, errors);
	} else {
		errors.push(`${file}: neither .folded nor .trace.json`);
	}
	for (const e of errors.slice(0, 20))
		console.error(e);
	if (errors.length > 20)
		console.error(`${file}: ... ${errors.length - 20} more`);
	failed += errors.length > 0;
	console.log(`${errors.length ? 'BAD' : 'ok '} ${path.basename(file)}: ${summary}`);
}
process.exit(failed ? 1 : 0);
