// SPDX-License-Identifier: GPL-2.0-only
//
// The stand-in for kubelet: a CRI v1 client (cri.proto) that the Python
// tests drive through JSON lines, so that one Node process serves a whole
// test run (starting Node costs seconds under TCG).
//
//   node cri.js UNIX_SOCKET
//   stdin:  {"id": 1, "method": "RunPodSandbox", "request": {...}}   one a line
//   stdout: {"id": 1, "response": {...}}  or  {"id": 1, "error": "...", "code": N}
//
// Field names are the proto's (snake_case), enums their names, int64 numbers.
// NODE_PATH must name the node_modules of tests/k8s/package.json
// (tools/vm/fetch-containers.sh installs them in the VM cache).
'use strict';

const path = require('path');
const readline = require('readline');
const grpc = require('@grpc/grpc-js');
const loader = require('@grpc/proto-loader');

const socket = process.argv[2];
if (!socket) {
	process.stderr.write('usage: node cri.js UNIX_SOCKET\n');
	process.exit(2);
}

const def = loader.loadSync(path.join(__dirname, 'cri.proto'), {
	keepCase: true,
	longs: Number,
	enums: String,
	defaults: true,
});
const api = grpc.loadPackageDefinition(def).runtime.v1;
const address = 'unix://' + socket;
const runtime = new api.RuntimeService(address, grpc.credentials.createInsecure());
const images = new api.ImageService(address, grpc.credentials.createInsecure());

function call(method, request, timeoutSec) {
	const client = typeof runtime[method] === 'function' ? runtime : images;
	if (typeof client[method] !== 'function')
		return Promise.reject(Object.assign(new Error('unknown method ' + method), {code: -1}));
	const deadline = new Date(Date.now() + 1000 * (timeoutSec || 120));
	return new Promise((resolve, reject) => {
		client[method](request || {}, {deadline}, (err, resp) => (err ? reject(err) : resolve(resp)));
	});
}

const rl = readline.createInterface({input: process.stdin});
rl.on('line', (line) => {
	let msg;
	try {
		msg = JSON.parse(line);
	} catch (e) {
		process.stdout.write(JSON.stringify({id: null, error: 'bad JSON: ' + e.message}) + '\n');
		return;
	}
	call(msg.method, msg.request, msg.timeout).then(
	    (response) => process.stdout.write(JSON.stringify({id: msg.id, response}) + '\n'),
	    (err) => process.stdout.write(
		JSON.stringify({id: msg.id, error: err.details || err.message, code: err.code}) + '\n'));
});
rl.on('close', () => {
	runtime.close();
	images.close();
});
