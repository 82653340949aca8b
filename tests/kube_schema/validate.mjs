// node validate.mjs PATH...: checks each Kubernetes object (a .json file, or every .json file of
// a folder) against the API schemas of Kubernetes 1.33, the validators kubernetes-models
// generates from Kubernetes' OpenAPI (pinned by package-lock.json; README.md here). The object's
// apiVersion and kind pick the schema. Those validators check types, enums, formats and
// required fields, but, like the OpenAPI itself, let unknown fields through (the API server
// drops them, or refuses them under fieldValidation=Strict). So this check also refuses every
// field of an object that the validator never looked at: each object is handed to it behind a
// Proxy that records the property names it reads, and a typed object's validator reads every
// property its schema knows, present or not. An object whose validator read no name at all
// is free-form in the schema (e.g. a RawExtension) and is not checked for unknown fields.
//
// Prints one line per complaint, "<file>: <JSON pointer>: <what is wrong>", and exits 1 when
// any object is refused, 2 when the schemas are not installed or a file cannot be read.
//
// node validate.mjs --plant-typos PATH...: the check of the check. Each valid object gets an
// unknown field planted in each of its objects in turn (every depth, one at a time), and each
// must be refused at that path, except in maps whose keys are the user's (labels, annotations,
// node selectors), where a new key is rightly accepted. Exit 1 naming any place where a typo
// would pass.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const models = new URL('./node_modules/kubernetes-models/', import.meta.url);
const machinery = new URL('./node_modules/@kubernetes-models/apimachinery/', import.meta.url);

// apiVersion + kind -> the generated validator's module.
const schemaFiles = {
  'batch/v1 Job': new URL('_schemas/IoK8sApiBatchV1Job.mjs', models),
  'v1 Pod': new URL('_schemas/IoK8sApiCoreV1Pod.mjs', models),
  'v1 Service': new URL('_schemas/IoK8sApiCoreV1Service.mjs', models),
  'v1 Secret': new URL('_schemas/IoK8sApiCoreV1Secret.mjs', models),
  'v1 DeleteOptions': new URL('_schemas/IoK8sApimachineryPkgApisMetaV1DeleteOptions.mjs',
                              machinery),
};

function pointerPart(key) {
  return String(key).replace(/~/g, '~0').replace(/\//g, '~1');
}

// value behind a Proxy that records, for every object reached, which property names were read.
function watched(value, path, seen) {
  if (value === null || typeof value !== 'object') return value;
  const entry = { path, value, read: new Set() };
  if (!Array.isArray(value)) seen.push(entry);
  const children = new Map();
  return new Proxy(value, {
    get(target, key, receiver) {
      if (typeof key !== 'string') return Reflect.get(target, key, receiver);
      entry.read.add(key);
      if (!Object.hasOwn(target, key)) return Reflect.get(target, key, receiver);
      if (!children.has(key)) {
        children.set(key, watched(target[key], `${path}/${pointerPart(key)}`, seen));
      }
      return children.get(key);
    },
  });
}

function describe(error) {
  const p = error.params || {};
  switch (error.keyword) {
    case 'required': return `must have required property '${p.missingProperty}'`;
    case 'type': return `must be ${p.type}`;
    case 'enum': return `must be one of ${JSON.stringify(p.allowedValues)}`;
    case 'format': return `must match format "${p.format}"`;
    case 'pattern': return `must match pattern "${p.pattern}"`;
    case 'oneOf': return 'must match exactly one of its schemas';
    default: return `${error.keyword} ${JSON.stringify(p)}`;
  }
}

// The complaints about one object: [{path, message}], empty when it is valid.
async function check(doc) {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    return [{ path: '', message: 'must be a JSON object (a Kubernetes object)' }];
  }
  const key = `${doc.apiVersion} ${doc.kind}`;
  if (!schemaFiles[key]) {
    return [{ path: '', message: `no schema here for apiVersion "${doc.apiVersion}" kind ` +
              `"${doc.kind}" (known: ${Object.keys(schemaFiles).join(', ')})` }];
  }
  const { validate } = await import(schemaFiles[key]);
  const seen = [];
  const complaints = [];
  if (!validate(watched(doc, '', seen))) {
    for (const e of validate.errors || []) {
      complaints.push({ path: e.instancePath, message: describe(e) });
    }
  }
  for (const { path, value, read } of seen) {
    if (read.size === 0) continue;  // free-form: the schema says nothing of its fields
    for (const field of Object.keys(value)) {
      if (!read.has(field)) {
        complaints.push({ path: `${path}/${pointerPart(field)}`,
                          message: `unknown field "${field}" (not in the ${key} schema)` });
      }
    }
  }
  return complaints;
}

function filesOf(paths) {
  const files = [];
  for (const p of paths) {
    if (statSync(p).isDirectory()) {
      for (const name of readdirSync(p).sort()) {
        if (name.endsWith('.json')) files.push(join(p, name));
      }
    } else {
      files.push(p);
    }
  }
  return files;
}

// Maps whose keys are the user's (labels, annotations, node selectors, a Service's selector):
// a field added there is a new entry, rightly accepted.
function isMap(path, doc) {
  const last = path.split('/').pop();
  if (['labels', 'annotations', 'nodeSelector', 'matchLabels'].includes(last)) return true;
  return doc.kind === 'Service' && path === '/spec/selector';
}

// --plant-typos: a field nobody knows, added to each object of the valid manifest doc in turn,
// must be refused at its path (accepted in a map). The mismatches, as complaints.
async function plantTypos(doc) {
  const objects = [];
  (function walk(value, path) {
    if (value === null || typeof value !== 'object') return;
    if (!Array.isArray(value)) objects.push(path);
    for (const [k, v] of Object.entries(value)) walk(v, `${path}/${pointerPart(k)}`);
  })(doc, '');
  const typo = 'orchPlantedTypo';
  const mismatches = [];
  for (const path of objects) {
    const copy = structuredClone(doc);
    let target = copy;
    for (const part of path.split('/').slice(1)) {
      target = target[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    }
    target[typo] = 'x';
    const named = (await check(copy)).some((c) => c.path === `${path}/${typo}`);
    if (named === isMap(path, doc)) {
      mismatches.push({ path: path || '/', message: named
        ? `a field "${typo}" added to this map was refused`
        : `a field "${typo}" added here was not refused: the check misses unknown fields` });
    }
  }
  return mismatches;
}

async function main(args) {
  const plant = args[0] === '--plant-typos';
  const paths = plant ? args.slice(1) : args;
  if (paths.length === 0) {
    console.error('usage: node validate.mjs [--plant-typos] FILE_OR_DIR...');
    return 2;
  }
  if (!existsSync(schemaFiles['batch/v1 Job'])) {
    console.error('validate.mjs: kubernetes-models is not installed in tests/kube_schema: run ' +
                  '`make test-deps` (or `npm ci` in tests/kube_schema)');
    return 2;
  }
  let files;
  try {
    files = filesOf(paths);
  } catch (e) {
    console.error(`validate.mjs: ${e.message}`);
    return 2;
  }
  if (files.length === 0) {
    console.error(`validate.mjs: no .json file in ${paths.join(' ')}`);
    return 2;
  }
  let refused = 0;
  for (const file of files) {
    let doc;
    try {
      doc = JSON.parse(readFileSync(file, 'utf8'));
    } catch (e) {
      console.error(`${file}: cannot read it as JSON: ${e.message}`);
      return 2;
    }
    let complaints = await check(doc);
    if (plant && complaints.length === 0) complaints = await plantTypos(doc);
    if (complaints.length === 0) {
      console.log(`${file}: ${plant ? 'every planted typo refused in' : 'valid'} ` +
                  `${doc.apiVersion} ${doc.kind}`);
      continue;
    }
    ++refused;
    for (const c of complaints) console.log(`${file}: ${c.path || '/'}: ${c.message}`);
  }
  console.log(plant ? `${files.length - refused} manifests refused a planted typo in every ` +
                      `object (maps excepted), ${refused} did not`
                    : `${files.length - refused} valid, ${refused} refused (Kubernetes 1.33 ` +
                      'schemas, unknown fields refused)');
  return refused === 0 ? 0 : 1;
}

process.exitCode = await main(process.argv.slice(2));
