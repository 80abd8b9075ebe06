import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  fetchCurriculum
} from "../chunks/chunk-53JY7XQJ.js";
import "../chunks/chunk-IDGS3VLY.js";
import {
  createGitHubClient,
  githubSource,
  runStages
} from "../chunks/chunk-MPT6XX2Q.js";
import {
  actionsLogger,
  boardSummary,
  hideCredentials,
  optionalInput,
  runAction,
  secretInput,
  writeBlocks
} from "../chunks/chunk-VMKTNKA6.js";
import {
  SUMMARY_HEADER,
  StateLayout,
  headline,
  summaryRows
} from "../chunks/chunk-BKBHR5T6.js";
import {
  ConfigError,
  LOCAL_RUN,
  auditActor,
  external_exports,
  parseRepository,
  resolveConfig,
  runContextFrom
} from "../chunks/chunk-RQKCS4ET.js";
import "../chunks/chunk-AIZTJZ6F.js";
import {
  info,
  setOutput
} from "../chunks/chunk-RQGEUGTP.js";
import "../chunks/chunk-A6TI274B.js";
import {
  __name
} from "../chunks/chunk-UEX66AHT.js";

// src/loop/fetch-job.ts
async function fetchJob(inputs, logger, context = LOCAL_RUN) {
  const config = resolveConfig(inputs.config, inputs.stateDir ? { stateDir: inputs.stateDir } : {});
  const issuesFile = inputs.issuesFile ?? config.curriculum.issuesFile;
  let source;
  if (issuesFile) {
    source = { kind: "file", path: issuesFile };
  } else {
    if (!inputs.token) {
      throw new ConfigError(
        "token: no GitHub token. Leave the `token` input at its default (${{ github.token }}) or pass a token with `issues: read`."
      );
    }
    const repo = parseRepository(inputs.repository ?? config.repository, "repository");
    source = githubSource(createGitHubClient({ token: inputs.token, logger }), repo);
  }
  const layout = new StateLayout(config.stateDir, auditActor(context));
  let result;
  await runStages("fetch-curriculum", {
    fetch: /* @__PURE__ */ __name(async () => {
      result = await logger.group(
        "Fetch the curriculum",
        () => fetchCurriculum({ layout, config, source, labels: inputs.labels, logger })
      );
    }, "fetch")
  });
  return { config, layout, result };
}
__name(fetchJob, "fetchJob");

// src/actions/fetch-curriculum/inputs.ts
var inputsSchema = external_exports.object({
  token: external_exports.string().optional(),
  repository: external_exports.string().optional(),
  labels: external_exports.array(external_exports.string()).optional(),
  config: external_exports.string().optional(),
  stateDir: external_exports.string().optional(),
  issuesFile: external_exports.string().optional()
});
function readInputs() {
  const labels = optionalInput("labels");
  return inputsSchema.parse({
    token: secretInput("token"),
    repository: optionalInput("repository") ?? process.env.GITHUB_REPOSITORY,
    labels: labels?.split(/[,\n]/).map((l) => l.trim()).filter(Boolean),
    config: optionalInput("config"),
    stateDir: optionalInput("state-dir"),
    issuesFile: optionalInput("issues-file")
  });
}
__name(readInputs, "readInputs");

// src/actions/fetch-curriculum/summary.ts
function fetchOutputs(r) {
  return {
    count: String(r.count),
    added: String(r.added),
    changed: String(r.changed),
    removed: String(r.removed),
    "curriculum-path": r.path,
    mode: r.mode
  };
}
__name(fetchOutputs, "fetchOutputs");
function fetchSummary(r, board) {
  return [
    { heading: "Curriculum", level: 2 },
    { raw: headline(r) },
    ...r.items.length ? [{ table: { header: [...SUMMARY_HEADER], rows: summaryRows(r.items) } }] : [],
    ...r.items.length > 200 ? [{ raw: `\u2026 and ${r.items.length - 200} more.` }] : [],
    ...board ? [{ raw: board }] : []
  ];
}
__name(fetchSummary, "fetchSummary");

// src/actions/fetch-curriculum/index.ts
void runAction(async () => {
  const inputs = readInputs();
  hideCredentials();
  const logger = actionsLogger();
  const { config, layout, result } = await fetchJob(inputs, logger, runContextFrom(process.env));
  for (const [name, value] of Object.entries(fetchOutputs(result))) setOutput(name, value);
  info(headline(result));
  const board = boardSummary("fetch-curriculum", layout, config, logger);
  await writeBlocks(fetchSummary(result, board), logger);
});
