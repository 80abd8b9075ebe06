/**
 * Named error classes: callers branch on `instanceof` or on `code`, users read `message`.
 *
 * Every error the school throws on purpose is a `SchoolError` with a stable `code` from
 * `ERROR_CODES` below: the one list of what can go wrong, and the strings logs, alerts and tests may
 * match. A class lives next to the code that throws it, where its callers import it from (moving it
 * here would only move imports); its code is listed here all the same. A new class picks (or adds) a
 * code here and sets it with `override readonly code = '…'`; an error without a class of its own
 * passes `{ code }` to `SchoolError`.
 */
export const ERROR_CODES = {
  school: 'An error of the school with no more specific code (`SchoolError` itself).',
  // src/errors.ts
  config: 'Bad configuration or input: the message names the field and what is allowed (`ConfigError`).',
  'state-corrupt': 'A state file has a record that does not parse; it was moved aside (`CorruptStateError`).',
  lock: 'A state lock could not be taken or kept (`LockError`).',
  'github-auth':
    'A GitHub call failed in a way a person has to fix: token, permission, repository (`GitHubAuthError`).',
  // src/process, src/security
  git: 'A git command failed or was refused (`GitError`, src/process/git.ts).',
  'remove-tree': 'A directory could not be removed (src/process/remove-tree.ts).',
  'untrusted-file':
    'A file the school reads from an untrusted tree is not safe to read (src/security/untrusted-file.ts).',
  secret_in_patch:
    'A change adds a credential; it is refused (`SecretInPatchError`, src/security/secret-scan.ts).',
  // src/bookbag
  'bookbag-access': 'A reader asked for a bookbag it may not read (`BookbagAccessError`).',
  'bookbag-incomplete':
    'A bookbag has no valid done flag: still being written, or torn (`BookbagIncompleteError`).',
  'patch-integrity': "A crew's patch is not the one collected from its worktree (`PatchIntegrityError`).",
  // src/agents
  'session-not-kept':
    "An agent's session files could not be kept for a later revision (src/agents/session-store.ts).",
  // src/grading
  junit: 'A JUnit report does not parse (`JUnitError`).',
  'policy-base-missing': "The repository lacks the crew's base commit (`PolicyBaseMissingError`).",
  'verification-infra':
    'The verification could not run: a grader failure, not a verdict (`VerificationInfraError`).',
  'evidence-infra': 'The judge could not run the base side: not a verdict (`EvidenceInfraError`).',
  reviewer: 'The reviewer crashed, timed out or printed no verdict (`ReviewerError`).',
  'sealed-tests': 'The sealed tests could not be run (`SealedTestsError`).',
  queue: 'The grading queue refused an operation (`QueueError`).',
  'ledger-corrupt':
    'The score ledger was quarantined; grading stops until it is restored (`LedgerCorruptError`).',
  'grading-bug': 'Grading reached a state it never should: a bug of the school (src/grading).',
  'judge-failed': 'A verdicts file records that the judge could not grade a job (src/grading/verdicts.ts).',
  // src/checkpoint
  'checkpoint-source-unavailable':
    'A checkpoint copy could not be read or written (`SourceUnavailableError`).',
  'checkpoint-source-not-supported':
    'This platform cannot hold a checkpoint copy (`SourceNotSupportedError`).',
  'checkpoint-manifest': 'A checkpoint manifest is not valid (`ManifestError`).',
  'checkpoint-conflict':
    'Another run moved the checkpoint branch on every attempt (`CheckpointConflictError`).',
  'checkpoint-config':
    'A checkpoint was asked of no source, or to write a path that is not safe (src/checkpoint).',
  // src/curriculum, src/github, src/handoff, src/board, src/examples
  'github-answer': 'GitHub answered with something the school cannot read (src/curriculum, src/github).',
  'github-unsupported': 'An Actions service this platform does not offer was asked for (src/github).',
  handoff: 'A handoff bundle could not be imported (src/handoff).',
  'board-data': 'A file the board reads is not in the shape it wrote (src/board).',
  'example-repo': 'The example repository cannot be laid at its target (`ExampleRepoError`).',
  // src/delivery
  delivery: 'A delivery step failed (`DeliveryError`).',
  'delivery-refused': 'A delivery was refused: the change is not the one graded (`DeliveryRefusedError`).',
  'delivered-tree': 'The delivered tree is not the graded one (`DeliveredTreeError`).',
  'refresh-base': "A pull request's branch could not be refreshed onto its base (`RefreshBaseError`).",
  // src/dispatch
  'claim-refused': 'A claim on an issue was refused (`ClaimRefusedError`).',
  'spend-ledger-corrupt': 'The spend ledger does not parse (`SpendLedgerError`).',
  // src/crew
  'classroom-unavailable': 'The classroom (slots, terminals) is not available (`ClassroomUnavailableError`).',
  'orca-unavailable': 'Orca is not running or does not answer (`OrcaUnavailableError`).',
  'classroom-interrupted': 'The classroom was interrupted while a crew ran (`ClassroomInterruptedError`).',
  'dirty-worktree': 'A worktree has changes it should not have (`DirtyWorktreeError`).',
  'driver-busy': 'The driver is busy with another crew (`DriverBusyError`).',
  'nested-repository': 'A slot holds a nested repository (`NestedRepositoryError`).',
  'change-too-large': "A crew's change is over the size bound (`ChangeTooLargeError`).",
  checkout: 'A checkout for a crew failed (`CheckoutError`).',
  'install-failed': 'A clean install failed (`InstallFailedError`).',
  'crew-aborted': 'A crew was aborted (`AbortCrew`).',
  // src/sandbox (`SandboxError`, src/sandbox/errors.ts)
  unavailable: 'The sandbox cannot run on this machine: bubblewrap is missing or fails its self-test.',
  'program-not-found': 'A program a confined command names is not installed: nothing was started.',
  'empty-argv': 'A confined command was given no program.',
  'socket-path': "A unix socket path is over the kernel's 107 bytes (set TMPDIR to a shorter directory).",
  'key-proxy':
    'The key proxy was asked of a sandbox without the allow-list, or given a bad upstream or no key.',
  'home-file': "An agent's homeFiles entry cannot be copied into its private HOME.",
  // src/loop, lab/simulate
  'loop-stopped': 'The school loop was stopped (`LoopStoppedError`).',
  simulation: 'The simulator was given something it cannot run (`SimulationError`).',
} as const satisfies Record<string, string>;

export type ErrorCode = keyof typeof ERROR_CODES;

export class SchoolError extends Error {
  /** Stable: what logs, alerts and tests match; never reworded (`ERROR_CODES`). */
  readonly code: ErrorCode;
  constructor(message: string, options?: { cause?: unknown; code?: ErrorCode }) {
    super(message, options);
    this.name = 'SchoolError';
    this.code = options?.code ?? 'school';
  }
}

/** Bad configuration or input: the message names the field, what was found and what is allowed. */
export class ConfigError extends SchoolError {
  override readonly code = 'config';
  constructor(
    message: string,
    readonly issues: readonly string[] = [],
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * A complete record in a state file does not parse (N5.1). The file has been moved aside to
 * `quarantinedTo`; callers must fail closed (deny admission, stop grading), never start empty.
 */
export class CorruptStateError extends SchoolError {
  override readonly code = 'state-corrupt';
  constructor(
    readonly file: string,
    readonly quarantinedTo: string | undefined,
    readonly line: number,
    detail: string,
  ) {
    super(
      `state file ${file} is corrupt at line ${line} (${detail}); ` +
        (quarantinedTo ? `moved aside to ${quarantinedTo}. ` : '') +
        'Refusing to continue on partial state. To recover, run `school checkpoint recover` in this state directory ' +
        '(it merges every record of the quarantined copy that still parses back into the log, drops only the broken ' +
        'lines and keeps the copy); never delete the quarantined copy: without its records, delivered issues would ' +
        'be planned again and their branches moved.',
    );
    this.name = 'CorruptStateError';
  }
}

export class LockError extends SchoolError {
  override readonly code = 'lock';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LockError';
  }
}

/** A GitHub call failed in a way a person has to fix (token, permission, repository). */
export class GitHubAuthError extends SchoolError {
  override readonly code = 'github-auth';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'GitHubAuthError';
  }
}

/** Turns anything thrown into one line a person can read. */
export function message(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
