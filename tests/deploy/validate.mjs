// SPDX-License-Identifier: GPL-2.0-only
//
// Checks Kubernetes manifests twice:
//   1. against the Kubernetes API schemas, with the npm package
//      kubernetes-models (each object's own validate());
//   2. strictly: every field of every object must be one the API defines.
//      The schemas of step 1 accept unknown fields (`hostPid` for hostPID
//      passes them, and the API server would drop it without a word), so
//      this walks each object along the type declarations kubernetes-models
//      ships (its .d.ts files: every interface and its properties).
//
//   node validate.mjs NODE_MODULES MANIFEST.yaml...
// Prints one line per object, and "N passed, N failed"; exit 1 on a failure.
// Each object's test is also run on a copy with an unknown field planted,
// which must fail: a strict pass that accepts anything would be caught.
import fs from 'node:fs';
import path from 'node:path';
import {pathToFileURL} from 'node:url';

const [modules, ...files] = process.argv.slice(2);
if (!modules || !files.length) {
	console.error('usage: node validate.mjs NODE_MODULES MANIFEST.yaml...');
	process.exit(2);
}
const km = path.join(modules, 'kubernetes-models');
const YAML = await import(pathToFileURL(path.join(modules, 'yaml', 'dist', 'index.js')));

// Every interface of the package's declarations: name -> {prop: type}.
const types = new Map();
function scan(dir) {
	for (const e of fs.readdirSync(dir, {withFileTypes: true})) {
		const p = path.join(dir, e.name);
		if (e.isDirectory()) scan(p);
		else if (e.name.endsWith('.d.ts')) parseDecl(fs.readFileSync(p, 'utf8'));
	}
}
function parseDecl(text) {
	const aliases = {};
	for (const m of text.matchAll(/export type \{ (\w+) as (\w+)(?:, \w+ as \w+)? \}/g))
		aliases[m[1]] = m[2];
	for (const m of text.matchAll(/export interface (\w+)(?: extends [\w, ]+)? \{\n([\s\S]*?)\n\}/g)) {
		const props = {};
		// "name"?: TYPE; where TYPE may span lines ({ [key: string]: string; }).
		const body = m[2].replace(/\/\*[\s\S]*?\*\//g, '');
		const re = /^\s{4}"([^"]+)"\??: /gm;
		let p;
		while ((p = re.exec(body))) {
			let depth = 0, i = re.lastIndex;
			for (; i < body.length; i++) {
				const c = body[i];
				if (c === '{' || c === '<' || c === '(') depth++;
				else if (c === '}' || c === '>' || c === ')') depth--;
				else if (c === ';' && depth === 0) break;
			}
			props[p[1]] = body.slice(re.lastIndex, i).replace(/\s+/g, ' ').trim();
			re.lastIndex = i;
		}
		types.set(m[1], props);
		if (aliases[m[1]]) types.set(aliases[m[1]], props);
	}
}
scan(km);
scan(path.join(modules, '@kubernetes-models', 'apimachinery'));

// Unknown fields of value v of declared type t, as "path: field" strings.
function strict(v, t, where, out) {
	if (v === null || v === undefined) return;
	let m;
	if ((m = t.match(/^Array<(.+)>$/))) {
		if (Array.isArray(v)) v.forEach((x, i) => strict(x, m[1], `${where}[${i}]`, out));
		return;
	}
	if ((m = t.match(/^\{\s*\[key: string\]: (.+?);?\s*\}$/))) {
		if (typeof v === 'object') for (const k of Object.keys(v)) strict(v[k], m[1], `${where}.${k}`, out);
		return;
	}
	const props = types.get(t);
	if (!props || typeof v !== 'object' || Array.isArray(v)) return; // a scalar, or a union
	for (const k of Object.keys(v)) {
		if (!(k in props)) out.push(`${where}: unknown field "${k}"`);
		else strict(v[k], props[k], `${where}.${k}`, out);
	}
}

async function model(doc) {
	const [group, version] = doc.apiVersion.includes('/') ? doc.apiVersion.split('/') : [null, doc.apiVersion];
	const dir = group ? path.join(km, group, version) : path.join(km, version);
	const mod = await import(pathToFileURL(path.join(dir, `${doc.kind}.js`)));
	return mod[doc.kind];
}

function check(Model, doc) {
	const errors = [];
	try {
		new Model(doc).validate();
	} catch (e) {
		errors.push(`schema: ${e.message}`);
	}
	strict(doc, `I${doc.kind}`, doc.kind, errors);
	return errors;
}

// A copy of doc with a field no API defines, deep in its first object-typed field.
function planted(doc) {
	const copy = structuredClone(doc);
	const spec = copy.spec?.template?.spec ?? copy.spec ?? copy.metadata;
	spec.hostPid = true;
	return copy;
}

let passed = 0, failed = 0;
for (const file of files) {
	const docs = YAML.parseAllDocuments(fs.readFileSync(file, 'utf8'));
	for (const d of docs) {
		if (d.errors.length) {
			console.log(`FAIL ${file}: YAML: ${d.errors[0].message}`);
			failed++;
			continue;
		}
		const doc = d.toJS();
		if (!doc) continue;
		const name = `${file}: ${doc.kind} ${doc.metadata?.namespace ?? ''}/${doc.metadata?.name}`;
		let Model;
		try {
			Model = await model(doc);
		} catch (e) {
			console.log(`FAIL ${name}: no model for ${doc.apiVersion} ${doc.kind}`);
			failed++;
			continue;
		}
		const errors = check(Model, doc);
		const control = check(Model, planted(doc));
		if (!control.some((e) => e.includes('"hostPid"'))) errors.push('the strict pass accepted a planted unknown field');
		if (errors.length) {
			console.log(`FAIL ${name}\n  ${errors.join('\n  ')}`);
			failed++;
		} else {
			console.log(`ok   ${name}`);
			passed++;
		}
	}
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
