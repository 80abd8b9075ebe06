import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  GitHubAuthError,
  SchoolError,
  external_exports,
  registerSecret
} from "./chunk-RQKCS4ET.js";
import {
  getOctokit,
  require_light,
  retry
} from "./chunk-AIZTJZ6F.js";
import {
  __name,
  __toESM
} from "./chunk-UEX66AHT.js";

// node_modules/@octokit/plugin-throttling/dist-bundle/index.js
var import_light = __toESM(require_light(), 1);
var VERSION = "0.0.0-development";
var noop = /* @__PURE__ */ __name(() => Promise.resolve(), "noop");
function wrapRequest(state, request, options) {
  return state.retryLimiter.schedule(doRequest, state, request, options);
}
__name(wrapRequest, "wrapRequest");
async function doRequest(state, request, options) {
  const { pathname } = new URL(options.url, "http://github.test");
  const isAuth = isAuthRequest(options.method, pathname);
  const isWrite = !isAuth && options.method !== "GET" && options.method !== "HEAD";
  const isSearch = options.method === "GET" && pathname.startsWith("/search/");
  const isGraphQL = pathname.startsWith("/graphql");
  const retryCount = ~~request.retryCount;
  const jobOptions = retryCount > 0 ? { priority: 0, weight: 0 } : {};
  if (state.clustering) {
    jobOptions.expiration = 1e3 * 60;
  }
  if (isWrite || isGraphQL) {
    await state.write.key(state.id).schedule(jobOptions, noop);
  }
  if (isWrite && state.triggersNotification(pathname)) {
    await state.notifications.key(state.id).schedule(jobOptions, noop);
  }
  if (isSearch) {
    await state.search.key(state.id).schedule(jobOptions, noop);
  }
  const req = (isAuth ? state.auth : state.global).key(state.id).schedule(jobOptions, request, options);
  if (isGraphQL) {
    const res = await req;
    if (res.data.errors != null && res.data.errors.some((error) => error.type === "RATE_LIMITED")) {
      const error = Object.assign(new Error("GraphQL Rate Limit Exceeded"), {
        response: res,
        data: res.data
      });
      throw error;
    }
  }
  return req;
}
__name(doRequest, "doRequest");
function isAuthRequest(method, pathname) {
  return method === "PATCH" && // https://docs.github.com/en/rest/apps/apps?apiVersion=2022-11-28#create-a-scoped-access-token
  /^\/applications\/[^/]+\/token\/scoped$/.test(pathname) || method === "POST" && // https://docs.github.com/en/rest/apps/oauth-applications?apiVersion=2022-11-28#reset-a-token
  (/^\/applications\/[^/]+\/token$/.test(pathname) || // https://docs.github.com/en/rest/apps/apps?apiVersion=2022-11-28#create-an-installation-access-token-for-an-app
  /^\/app\/installations\/[^/]+\/access_tokens$/.test(pathname) || // https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps
  pathname === "/login/oauth/access_token");
}
__name(isAuthRequest, "isAuthRequest");
var triggers_notification_paths_default = [
  "/orgs/{org}/invitations",
  "/orgs/{org}/invitations/{invitation_id}",
  "/orgs/{org}/teams/{team_slug}/discussions",
  "/orgs/{org}/teams/{team_slug}/discussions/{discussion_number}/comments",
  "/repos/{owner}/{repo}/collaborators/{username}",
  "/repos/{owner}/{repo}/commits/{commit_sha}/comments",
  "/repos/{owner}/{repo}/issues",
  "/repos/{owner}/{repo}/issues/{issue_number}/comments",
  "/repos/{owner}/{repo}/issues/{issue_number}/sub_issue",
  "/repos/{owner}/{repo}/issues/{issue_number}/sub_issues/priority",
  "/repos/{owner}/{repo}/pulls",
  "/repos/{owner}/{repo}/pulls/{pull_number}/comments",
  "/repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies",
  "/repos/{owner}/{repo}/pulls/{pull_number}/merge",
  "/repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers",
  "/repos/{owner}/{repo}/pulls/{pull_number}/reviews",
  "/repos/{owner}/{repo}/releases",
  "/teams/{team_id}/discussions",
  "/teams/{team_id}/discussions/{discussion_number}/comments"
];
function routeMatcher(paths) {
  const regexes = paths.map(
    (path) => path.split("/").map((c) => c.startsWith("{") ? "(?:.+?)" : c).join("/")
  );
  const regex2 = `^(?:${regexes.map((r) => `(?:${r})`).join("|")})[^/]*$`;
  return new RegExp(regex2, "i");
}
__name(routeMatcher, "routeMatcher");
var regex = routeMatcher(triggers_notification_paths_default);
var triggersNotification = regex.test.bind(regex);
var groups = {};
var createGroups = /* @__PURE__ */ __name(function(Bottleneck, common) {
  groups.global = new Bottleneck.Group({
    id: "octokit-global",
    maxConcurrent: 10,
    ...common
  });
  groups.auth = new Bottleneck.Group({
    id: "octokit-auth",
    maxConcurrent: 1,
    ...common
  });
  groups.search = new Bottleneck.Group({
    id: "octokit-search",
    maxConcurrent: 1,
    minTime: 2e3,
    ...common
  });
  groups.write = new Bottleneck.Group({
    id: "octokit-write",
    maxConcurrent: 1,
    minTime: 1e3,
    ...common
  });
  groups.notifications = new Bottleneck.Group({
    id: "octokit-notifications",
    maxConcurrent: 1,
    minTime: 3e3,
    ...common
  });
}, "createGroups");
function throttling(octokit, octokitOptions) {
  const {
    enabled = true,
    Bottleneck = import_light.default,
    id = "no-id",
    timeout = 1e3 * 60 * 2,
    // Redis TTL: 2 minutes
    connection
  } = octokitOptions.throttle || {};
  if (!enabled) {
    return {};
  }
  const common = { timeout };
  if (typeof connection !== "undefined") {
    common.connection = connection;
  }
  const state = Object.assign(
    {
      clustering: connection != null,
      triggersNotification,
      fallbackSecondaryRateRetryAfter: 60,
      retryAfterBaseValue: 1e3,
      id
    },
    octokitOptions.throttle
  );
  if (typeof state.onSecondaryRateLimit !== "function" || typeof state.onRateLimit !== "function") {
    throw new Error(`octokit/plugin-throttling error:
        You must pass the onSecondaryRateLimit and onRateLimit error handlers.
        See https://octokit.github.io/rest.js/#throttling

        const octokit = new Octokit({
          throttle: {
            onSecondaryRateLimit: (retryAfter, options) => {/* ... */},
            onRateLimit: (retryAfter, options) => {/* ... */}
          }
        })
    `);
  }
  let initialized = false;
  const initializeBottleneck = /* @__PURE__ */ __name(() => {
    if (initialized) {
      return;
    }
    initialized = true;
    if (groups.global == null) {
      createGroups(Bottleneck, common);
    }
    state.global = state.global ?? groups.global;
    state.auth = state.auth ?? groups.auth;
    state.search = state.search ?? groups.search;
    state.write = state.write ?? groups.write;
    state.notifications = state.notifications ?? groups.notifications;
    state.retryLimiter = state.retryLimiter ?? new Bottleneck();
    const events = {};
    const emitter = new Bottleneck.Events(events);
    events.on("secondary-limit", state.onSecondaryRateLimit);
    events.on("rate-limit", state.onRateLimit);
    events.on(
      "error",
      (e) => octokit.log.warn("Error in throttling-plugin limit handler", e)
    );
    state.retryLimiter.on("failed", async function(error, info) {
      const [state2, request, options] = info.args;
      const { pathname } = new URL(options.url, "http://github.test");
      const shouldRetryGraphQL = pathname.startsWith("/graphql") && error.status !== 401;
      if (!(shouldRetryGraphQL || error.status === 403 || error.status === 429)) {
        return;
      }
      const retryCount = ~~request.retryCount;
      request.retryCount = retryCount;
      options.request.retryCount = retryCount;
      const { wantRetry, retryAfter = 0 } = await (async function() {
        if (/\bsecondary rate\b/i.test(error.message)) {
          const retryAfter2 = Number(error.response.headers["retry-after"]) || state2.fallbackSecondaryRateRetryAfter;
          const wantRetry2 = await emitter.trigger(
            "secondary-limit",
            retryAfter2,
            options,
            octokit,
            retryCount
          );
          return { wantRetry: wantRetry2, retryAfter: retryAfter2 };
        }
        if (error.response.headers != null && error.response.headers["x-ratelimit-remaining"] === "0" || (error.response.data?.errors ?? []).some(
          (error2) => error2.type === "RATE_LIMITED"
        )) {
          const rateLimitReset = new Date(
            ~~error.response.headers["x-ratelimit-reset"] * 1e3
          ).getTime();
          const retryAfter2 = Math.max(
            // Add one second so we retry _after_ the reset time
            // https://docs.github.com/en/rest/overview/resources-in-the-rest-api?apiVersion=2022-11-28#exceeding-the-rate-limit
            Math.ceil((rateLimitReset - Date.now()) / 1e3) + 1,
            0
          );
          const wantRetry2 = await emitter.trigger(
            "rate-limit",
            retryAfter2,
            options,
            octokit,
            retryCount
          );
          return { wantRetry: wantRetry2, retryAfter: retryAfter2 };
        }
        return {};
      })();
      if (wantRetry) {
        request.retryCount++;
        return retryAfter * state2.retryAfterBaseValue;
      }
    });
  }, "initializeBottleneck");
  octokit.hook.wrap("request", (request, options) => {
    initializeBottleneck();
    return wrapRequest(state, request, options);
  });
  return {};
}
__name(throttling, "throttling");
throttling.VERSION = VERSION;
throttling.triggersNotification = triggersNotification;

// src/github/client.ts
function apiBaseUrl(explicit) {
  return (explicit || process.env.GITHUB_API_URL || "https://api.github.com").replace(/\/+$/, "");
}
__name(apiBaseUrl, "apiBaseUrl");
function createGitHubClient(options) {
  registerSecret(options.token);
  const retries = options.rateLimitRetries ?? 3;
  const log = options.logger;
  const baseUrl = apiBaseUrl(options.baseUrl);
  const base = options.retryAfterBaseValue ?? 1e3;
  const waitOn = /* @__PURE__ */ __name((what) => (retryAfter, opts, _o, retryCount) => {
    log?.warning(
      `GitHub ${what} on ${opts.method} ${opts.url}: waiting ${retryAfter}s (retry ${retryCount + 1}/${retries})`
    );
    return retryCount < retries;
  }, "waitOn");
  const octokit = getOctokit(
    options.token,
    {
      baseUrl,
      request: options.fetch ? { fetch: options.fetch } : void 0,
      retry: { retryAfterBaseValue: base },
      log: {
        debug: /* @__PURE__ */ __name(() => void 0, "debug"),
        info: /* @__PURE__ */ __name(() => void 0, "info"),
        warn: /* @__PURE__ */ __name((m) => log?.debug(m), "warn"),
        error: /* @__PURE__ */ __name((m) => log?.debug(m), "error")
      },
      throttle: {
        retryAfterBaseValue: base,
        onRateLimit: waitOn("rate limit"),
        onSecondaryRateLimit: waitOn("secondary rate limit")
      }
    },
    retry,
    throttling
  );
  octokit.hook.error("request", (error, opts) => {
    throw authError(error, opts.method ?? "GET", String(opts.url ?? "")) ?? error;
  });
  return octokit;
}
__name(createGitHubClient, "createGitHubClient");
function isRateLimit(error) {
  if (error.status === 429) return true;
  if (error.status !== 403) return false;
  const headers = error.response?.headers ?? {};
  return headers["x-ratelimit-remaining"] === "0" || headers["retry-after"] !== void 0 || /rate limit/i.test(error.message ?? "");
}
__name(isRateLimit, "isRateLimit");
function permissionFor(method, url) {
  const write = !/^(GET|HEAD)$/i.test(method);
  const level = write ? "write" : "read";
  if (/\/issues\b|\/labels\b/.test(url)) return `issues: ${level}`;
  if (/\/pulls\b/.test(url)) return `pull-requests: ${level}`;
  if (/\/git\/|\/contents\/|\/branches\b/.test(url)) return `contents: ${level}`;
  if (/\/actions\//.test(url)) return `actions: ${level}`;
  return `the permission for ${method.toUpperCase()} ${url}`;
}
__name(permissionFor, "permissionFor");
function authError(error, method, url) {
  const e = error;
  const route = `${method.toUpperCase()} ${url}`;
  const detail = typeof e?.message === "string" ? e.message.split("\n")[0].replace(/ - https?:\/\/\S+$/, "") : "";
  if (e?.status === 401) {
    return new GitHubAuthError(
      `GitHub rejected the token (401 ${detail || "Bad credentials"}) on ${route}. Check the \`token\` input or GITHUB_TOKEN: it is missing, mistyped, expired or revoked.`,
      { cause: error }
    );
  }
  if (e?.status === 403 && !isRateLimit(e)) {
    const permission = permissionFor(method, url);
    return new GitHubAuthError(
      `GitHub refused ${route} (403 ${detail || "Forbidden"}): the token lacks a permission. Grant \`${permission}\` in the workflow's \`permissions:\` block (or to the fine-grained token).`,
      { cause: error }
    );
  }
  return void 0;
}
__name(authError, "authError");

// src/curriculum/issue-shape.ts
var rawIssueSchema = external_exports.looseObject({
  number: external_exports.number().int().positive(),
  title: external_exports.string().nullish().transform((v) => v ?? ""),
  body: external_exports.string().nullish().transform((v) => v ?? ""),
  state: external_exports.enum(["open", "closed"]).default("open"),
  labels: external_exports.array(external_exports.union([external_exports.string(), external_exports.looseObject({ name: external_exports.string().nullish() })])).default([]).transform((ls) => ls.map((l) => typeof l === "string" ? l : l.name ?? "").filter((l) => l !== "")),
  html_url: external_exports.string().optional(),
  updated_at: external_exports.string().optional(),
  pull_request: external_exports.unknown().optional(),
  /** OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, FIRST_TIME_CONTRIBUTOR, FIRST_TIMER, MANNEQUIN or NONE. */
  author_association: external_exports.string().optional()
});
function isPullRequest(issue) {
  return issue.pull_request !== void 0 && issue.pull_request !== null;
}
__name(isPullRequest, "isPullRequest");
function hasAllLabels(issue, wanted) {
  const have = new Set(issue.labels.map((l) => l.toLowerCase()));
  return wanted.every((w) => have.has(w.toLowerCase()));
}
__name(hasAllLabels, "hasAllLabels");

// src/github/issues-source.ts
var PER_PAGE = 100;
function githubSource(client, repo) {
  return { kind: "github", repo, list: /* @__PURE__ */ __name((query) => listIssues(client, repo, query), "list") };
}
__name(githubSource, "githubSource");
async function listIssues(client, repo, query) {
  const params = {
    owner: repo.owner,
    repo: repo.repo,
    state: query.state,
    sort: "updated",
    direction: "desc",
    per_page: PER_PAGE,
    ...query.labels?.length ? { labels: query.labels.join(",") } : {},
    ...query.since ? { since: query.since } : {}
  };
  const issues = [];
  let etag;
  let serverDate;
  let pages = 0;
  let requests = 0;
  let url;
  while (true) {
    requests++;
    let response;
    try {
      response = url ? await client.request({ method: "GET", url }) : await client.request("GET /repos/{owner}/{repo}/issues", {
        ...params,
        headers: query.etag ? { "if-none-match": query.etag } : {}
      });
    } catch (e) {
      if (!url && e.status === 304) return { status: "not-modified", requests };
      throw e;
    }
    pages++;
    if (!url) {
      etag = response.headers.etag;
      const date = response.headers.date ? new Date(response.headers.date) : void 0;
      serverDate = date && Number.isFinite(date.getTime()) ? date : void 0;
    }
    const data = response.data;
    if (!Array.isArray(data))
      throw new SchoolError(`GitHub answered the issues list with ${typeof data}, not a list`, {
        code: "github-answer"
      });
    for (const [i, raw] of data.entries()) {
      const parsed = rawIssueSchema.safeParse(raw);
      if (!parsed.success) {
        throw new SchoolError(
          `GitHub issue #${raw?.number ?? i} has an unexpected shape: ${parsed.error.issues[0]?.message}`,
          { code: "github-answer" }
        );
      }
      issues.push(parsed.data);
    }
    url = nextLink(response.headers.link);
    if (!url) break;
  }
  return { status: "ok", issues, etag, serverDate, pages, requests };
}
__name(listIssues, "listIssues");
function nextLink(link) {
  if (!link) return void 0;
  for (const part of link.split(",")) {
    const m = /<([^>]+)>\s*;\s*rel="?([^";]+)"?/.exec(part.trim());
    if (m && m[2].split(/\s+/).includes("next")) return m[1];
  }
  return void 0;
}
__name(nextLink, "nextLink");

// src/loop/stages.ts
var RUNS = {
  /** fetch-curriculum. */
  "fetch-curriculum": ["fetch"],
  /** dispatch-crew `mode: plan`: the plan job, before the crew jobs start. */
  "dispatch-crew plan": ["clear-pauses", "feedback", "plan", "statuses", "roster"],
  /** dispatch-crew `mode: heartbeat`: a roster job on each runner. */
  "dispatch-crew heartbeat": ["beat"],
  /** dispatch-crew `mode: run`: a crew job on its daemon's runner. */
  "dispatch-crew run": ["run"],
  /** dispatch-crew `mode: import`: the heartbeats job takes the roster jobs' handoffs. */
  "dispatch-crew import": ["import"],
  /** drain-grading `mode: judge`: the judge job (a read-only token). */
  "drain-grading judge": ["judge"],
  /** drain-grading `mode: drain | apply`: the grade job (`apply` takes the judge job's verdicts). */
  "drain-grading": ["import", "drain", "after-grading"],
  /** `school loop`: the whole cycle in one process, every daemon on this machine. */
  "school loop": [
    "fetch",
    "feedback",
    "preflight",
    "beat",
    "plan",
    "statuses",
    "run",
    "drain",
    "after-grading"
  ],
  /** `school dispatch`: plan (unless `--run-only`) and run on this machine. */
  "school dispatch": ["beat", "plan", "run"],
  /** `school drain`. */
  "school drain": ["drain", "after-grading"]
};
async function runStages(entry, steps, o = {}) {
  const ran = [];
  for (const stage of RUNS[entry]) {
    if (o.skip?.includes(stage)) continue;
    const step = steps[stage];
    await step();
    ran.push(stage);
  }
  return ran;
}
__name(runStages, "runStages");

export {
  rawIssueSchema,
  isPullRequest,
  hasAllLabels,
  createGitHubClient,
  isRateLimit,
  githubSource,
  listIssues,
  nextLink,
  runStages
};
