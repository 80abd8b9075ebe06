import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  withActionsRuntime
} from "./chunk-VMKTNKA6.js";
import {
  SchoolError,
  message
} from "./chunk-RQKCS4ET.js";
import {
  debug
} from "./chunk-RQGEUGTP.js";
import {
  __name
} from "./chunk-UEX66AHT.js";

// src/github/actions-services.ts
import { createHash } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
function onGhes(serverUrl) {
  if (!serverUrl) return false;
  let host;
  try {
    host = new URL(serverUrl).hostname.toLowerCase();
  } catch {
    return false;
  }
  return host !== "github.com" && !host.endsWith(".ghe.com");
}
__name(onGhes, "onGhes");
var actionsCachePort = {
  available: /* @__PURE__ */ __name(() => withActionsRuntime(async () => (await import("./cache-XXESMKCW.js")).isFeatureAvailable()), "available"),
  save: /* @__PURE__ */ __name((paths, key) => withActionsRuntime(async () => await (await import("./cache-XXESMKCW.js")).saveCache(paths, key) !== -1), "save"),
  restore: /* @__PURE__ */ __name((paths, primaryKey, restoreKeys) => withActionsRuntime(
    async () => (await import("./cache-XXESMKCW.js")).restoreCache(paths, primaryKey, restoreKeys)
  ), "restore")
};
var actionsArtifactPort = {
  unsupported: /* @__PURE__ */ __name(() => onGhes(process.env.GITHUB_SERVER_URL) ? `GitHub Enterprise Server (${process.env.GITHUB_SERVER_URL}) does not support @actions/artifact 2 or later; the state branch holds the checkpoint (docs/workflows.md, "GitHub Enterprise Server")` : void 0, "unsupported"),
  upload: /* @__PURE__ */ __name((name, files, root, retentionDays) => withActionsRuntime(async () => {
    const { DefaultArtifactClient } = await import("./artifact-IKFY52WK.js");
    await new DefaultArtifactClient().uploadArtifact(name, files, root, { retentionDays });
  }), "upload")
};
function claimsUnsupported(serverUrl = process.env.GITHUB_SERVER_URL) {
  return onGhes(serverUrl) ? `GitHub Enterprise Server (${serverUrl}) does not support @actions/artifact 2 or later, so crew jobs cannot claim from one queue; each daemon keeps its own standby crews` : void 0;
}
__name(claimsUnsupported, "claimsUnsupported");
var TAKEN = /^Failed to CreateArtifact: .*\(409\)/s;
var CLAIM_RETENTION_DAYS = 7;
function claimRetentionDays(env = process.env) {
  const max = Number(env.GITHUB_RETENTION_DAYS);
  return Number.isInteger(max) && max > 0 ? Math.min(CLAIM_RETENTION_DAYS, max) : CLAIM_RETENTION_DAYS;
}
__name(claimRetentionDays, "claimRetentionDays");
var actionsClaimPort = {
  create: /* @__PURE__ */ __name(async (name, path) => {
    const unsupported = claimsUnsupported();
    if (unsupported) return { kind: "failed", reason: unsupported };
    const scratch = mkdtempSync(join(tmpdir(), "school-claim-"));
    try {
      const file = join(scratch, name);
      copyFileSync(path, file);
      const { digest } = await quietly(
        () => withActionsRuntime(async () => {
          const { DefaultArtifactClient } = await import("./artifact-IKFY52WK.js");
          return new DefaultArtifactClient().uploadArtifact(name, [file], scratch, {
            skipArchive: true,
            // A claim matters only while its run does, but the run's judge and grade jobs list it
            // after the crew jobs end, and a self-hosted crew job may run for days (GitHub allows 5).
            retentionDays: claimRetentionDays()
          });
        })
      );
      return {
        kind: "won",
        sha256: bareDigest(digest) ?? createHash("sha256").update(readFileSync(file)).digest("hex")
      };
    } catch (e) {
      const why = message(e);
      return TAKEN.test(why) ? { kind: "taken" } : { kind: "failed", reason: why };
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }, "create"),
  list: /* @__PURE__ */ __name(async (prefix) => {
    const unsupported = claimsUnsupported();
    if (unsupported) throw new SchoolError(unsupported, { code: "github-unsupported" });
    const { artifacts } = await quietly(
      () => withActionsRuntime(async () => {
        const { DefaultArtifactClient } = await import("./artifact-IKFY52WK.js");
        return new DefaultArtifactClient().listArtifacts({ latest: false });
      })
    );
    const out = /* @__PURE__ */ new Map();
    for (const a of artifacts) {
      if (!a.name.startsWith(prefix)) continue;
      const digests = out.get(a.name) ?? [];
      const hex = bareDigest(a.digest);
      if (hex) digests.push(hex);
      out.set(a.name, digests);
    }
    return out;
  }, "list")
};
function claimsHere(context) {
  return context.actions && !claimsUnsupported(context.serverUrl);
}
__name(claimsHere, "claimsHere");
async function quietly(fn) {
  const write = process.stdout.write;
  const held = [];
  process.stdout.write = ((chunk, ...rest) => {
    held.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
    const done = rest.find((r) => typeof r === "function");
    done?.();
    return true;
  });
  try {
    return await fn();
  } finally {
    process.stdout.write = write;
    for (const line of held.join("").split(/\r?\n/)) {
      if (!line.trim()) continue;
      if (line.startsWith("::") && !line.startsWith("::debug::")) process.stdout.write(`${line}
`);
      else debug(line.replace(/^::debug::/, ""));
    }
  }
}
__name(quietly, "quietly");
function bareDigest(digest) {
  const m = /^(?:sha256:)?([0-9a-fA-F]{64})$/.exec(digest?.trim() ?? "");
  return m ? m[1].toLowerCase() : void 0;
}
__name(bareDigest, "bareDigest");

export {
  actionsCachePort,
  actionsArtifactPort,
  claimsUnsupported,
  actionsClaimPort,
  claimsHere
};
