import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  SESSION_STORES_COMPACTED,
  bytes,
  fileRows,
  parseCheckpointInputs,
  runCheckpoint
} from "../chunks/chunk-LS3P4I2P.js";
import {
  actionsArtifactPort,
  actionsCachePort
} from "../chunks/chunk-GQXXGBL3.js";
import "../chunks/chunk-IDGS3VLY.js";
import {
  actionsLogger,
  boardSummaryFrom,
  hideCredentials,
  optionalInput,
  runAction,
  secretInput,
  writeBlocks
} from "../chunks/chunk-VMKTNKA6.js";
import "../chunks/chunk-BKBHR5T6.js";
import {
  ConfigError,
  runContextFrom
} from "../chunks/chunk-RQKCS4ET.js";
import {
  getInput,
  setOutput
} from "../chunks/chunk-RQGEUGTP.js";
import "../chunks/chunk-A6TI274B.js";
import {
  __name
} from "../chunks/chunk-UEX66AHT.js";

// src/actions/checkpoint-state/inputs.ts
function readInputs() {
  const dryRun = optionalInput("dry-run") ?? "false";
  if (dryRun !== "true" && dryRun !== "false") {
    throw new ConfigError(`dry-run: use "true" or "false", found "${dryRun}"`);
  }
  return parseCheckpointInputs({
    mode: getInput("mode", { required: true }),
    stateDir: optionalInput("state-dir"),
    branch: optionalInput("branch"),
    cacheKeyPrefix: optionalInput("cache-key-prefix"),
    retentionDays: optionalInput("retention-days"),
    sources: optionalInput("sources"),
    token: secretInput("token"),
    config: optionalInput("config"),
    dryRun: dryRun === "true"
  });
}
__name(readInputs, "readInputs");

// src/actions/checkpoint-state/summary.ts
function checkpointOutputs(report) {
  return {
    source: report.sources.join(","),
    generation: String(report.generation),
    files: String(report.files.length)
  };
}
__name(checkpointOutputs, "checkpointOutputs");
function checkpointSummary(report, board) {
  const redacted = Object.entries(report.redacted);
  const compacted = Object.entries(report.compacted);
  const notes = [...report.warnings.map((w) => `\u26A0 ${w}`), ...report.notes];
  return [
    { heading: `checkpoint-state: ${report.mode}${report.dryRun ? " (dry run)" : ""}`, level: 3 },
    {
      table: {
        header: [report.mode === "save" ? "Saved to" : "Source", "Generation", "Files", "Size"],
        rows: [
          [
            report.sources.join(", ") || "none",
            String(report.generation),
            String(report.files.length),
            bytes(report.files.reduce((n, f) => n + f.size, 0))
          ]
        ]
      }
    },
    { table: { header: ["File", "Size"], rows: fileRows(report.files) } },
    ...redacted.length ? [
      { heading: "Redacted", level: 4 },
      {
        table: {
          header: ["File", "Records or texts changed"],
          rows: redacted.map(([p, n]) => [p, String(n)])
        }
      }
    ] : [],
    ...compacted.length ? [
      { heading: "Compacted", level: 4 },
      {
        table: {
          header: ["Log", "Folded into snapshot", "Dropped past window"],
          rows: compacted.map(([p, x]) => [
            p === SESSION_STORES_COMPACTED ? `${p} (no revision can resume them)` : p,
            String(x.folded),
            String(x.dropped)
          ])
        }
      }
    ] : [],
    ...notes.length ? [{ list: notes }] : [],
    ...board ? [{ raw: board }] : []
  ];
}
__name(checkpointSummary, "checkpointSummary");

// src/actions/checkpoint-state/index.ts
void runAction(async () => {
  const logger = actionsLogger();
  const inputs = readInputs();
  hideCredentials();
  const context = runContextFrom(process.env);
  const report = await logger.group(
    "checkpoint",
    () => runCheckpoint(inputs, {
      logger,
      cachePort: actionsCachePort,
      artifactPort: actionsArtifactPort,
      workspace: context.workspace,
      context
    })
  );
  for (const [name, value] of Object.entries(checkpointOutputs(report))) setOutput(name, value);
  const board = boardSummaryFrom("checkpoint-state", inputs.config, inputs.stateDir, logger);
  await writeBlocks(checkpointSummary(report, board), logger);
});
