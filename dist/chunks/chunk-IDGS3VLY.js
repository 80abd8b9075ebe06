import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  redactText
} from "./chunk-RQKCS4ET.js";
import {
  __name
} from "./chunk-UEX66AHT.js";

// src/log.ts
function consoleLogger(options = {}) {
  const out = options.stream ?? process.stderr;
  const write = /* @__PURE__ */ __name((prefix, m) => out.write(`${prefix}${redactText(m)}
`), "write");
  return {
    debug: /* @__PURE__ */ __name((m) => {
      if (options.debug) write("debug: ", m);
    }, "debug"),
    info: /* @__PURE__ */ __name((m) => write("", m), "info"),
    warning: /* @__PURE__ */ __name((m) => write("warning: ", m), "warning"),
    error: /* @__PURE__ */ __name((m) => write("error: ", m), "error"),
    group: /* @__PURE__ */ __name(async (name, fn) => {
      write("== ", name);
      return fn();
    }, "group")
  };
}
__name(consoleLogger, "consoleLogger");
var silentLogger = {
  debug: /* @__PURE__ */ __name(() => void 0, "debug"),
  info: /* @__PURE__ */ __name(() => void 0, "info"),
  warning: /* @__PURE__ */ __name(() => void 0, "warning"),
  error: /* @__PURE__ */ __name(() => void 0, "error"),
  group: /* @__PURE__ */ __name((_name, fn) => fn(), "group")
};

export {
  consoleLogger,
  silentLogger
};
