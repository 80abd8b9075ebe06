import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  ConfigError
} from "./chunk-RQKCS4ET.js";
import {
  __name
} from "./chunk-UEX66AHT.js";

// src/cli/version.ts
var VERSION = "0.1.0";

// src/cli/args.ts
import { parseArgs } from "node:util";
function parse(verb, argv, options, allowPositionals = false) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (e) {
    throw new ConfigError(`school ${verb}: ${e.message}. Run \`school ${verb} --help\`.`);
  }
}
__name(parse, "parse");
function intOption(name, value, min = 1) {
  if (value === void 0) return void 0;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) {
    throw new ConfigError(`--${name}: expected a whole number \u2265 ${min}, found "${value}".`);
  }
  return n;
}
__name(intOption, "intOption");
function verbOptions(values, flags = []) {
  const out = {};
  for (const name of values) out[name] = { type: "string" };
  for (const name of flags) out[name] = { type: "boolean" };
  return out;
}
__name(verbOptions, "verbOptions");
var SCHOOL_OPTIONS = {
  config: { type: "string" },
  "state-dir": { type: "string" }
};
function parseVerb(verb, argv, options, help) {
  const all = { ...options, help: { type: "boolean" } };
  const { values } = parse(verb, argv, all);
  if (values.help) {
    process.stdout.write(help);
    return void 0;
  }
  return values;
}
__name(parseVerb, "parseVerb");
function parseVerbWords(verb, argv, options, help) {
  const all = { ...options, help: { type: "boolean" } };
  const parsed = parse(verb, argv, all, true);
  if (parsed.values.help) {
    process.stdout.write(help);
    return void 0;
  }
  return parsed;
}
__name(parseVerbWords, "parseVerbWords");

export {
  parse,
  intOption,
  verbOptions,
  SCHOOL_OPTIONS,
  parseVerb,
  parseVerbWords,
  VERSION
};
